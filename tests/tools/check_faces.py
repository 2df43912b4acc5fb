#!/usr/bin/env python3
"""The C vocabularies (printed by print_vocabulary) against their other spellings: the public
C enums (include/uform/hardware.h), the Python IntEnums and exception table
(python/uform/__init__.py, python/uform/_lib/errors.c) and the Rust enums
(rust/src/vocabulary.rs, rust/src/status.rs). Any member missing, extra, renumbered or renamed
on one side fails with a line naming it.

usage: check_faces.py ROOT [EMULATOR ...] PRINT_VOCABULARY
"""
import ast
import re
import subprocess
import sys

root, printer = sys.argv[1], sys.argv[2:]
failures = []


def read(path):
    with open(f"{root}/{path}", encoding="utf-8") as f:
        return f.read()


def compare(what, expected, actual):
    """expected, actual: {member: value}."""
    for key in sorted(set(expected) | set(actual), key=str):
        if key not in actual:
            failures.append(f"{what}: {key} = {expected[key]!r} is missing")
        elif key not in expected:
            failures.append(f"{what}: {key} = {actual[key]!r} is not in the C list")
        elif expected[key] != actual[key]:
            failures.append(f"{what}: {key} is {actual[key]!r}, the C list says {expected[key]!r}")


c = {"cpu_class": {}, "gpu_class": {}, "gpu_vendor": {}, "status": {}}
status_count = None
for line in subprocess.run(printer, check=True, capture_output=True, text=True).stdout.splitlines():
    kind, member, number, *rest = line.split(" ", 3)
    if kind == "count":
        status_count = int(number)
        continue
    c[kind][member] = (int(number), rest[0])
if status_count != len(c["status"]) or sorted(n for n, _ in c["status"].values()) != list(range(status_count)):
    failures.append(f"UFORM_STATUS_COUNT_ is {status_count}; the statuses are {sorted(c['status'].values())}")

# ---- the public C header: each enum's members but NONE ----
header = read("include/uform/hardware.h")
for kind, enum, prefix in (("cpu_class", "uform_cpu_class_t", "UFORM_CPU_CLASS_"),
                           ("gpu_class", "uform_gpu_class_t", "UFORM_GPU_CLASS_"),
                           ("gpu_vendor", "uform_gpu_vendor_t", "UFORM_GPU_VENDOR_")):
    body = re.search(r"typedef enum %s \{(.*?)\} %s;" % (enum, enum), header, re.S)
    members = dict(re.findall(r"%s(\w+) = (\d+)" % prefix, body.group(1))) if body else {}
    members.pop("NONE", None)
    compare(f"include/uform/hardware.h {enum}", {m: n for m, (n, _) in c[kind].items()},
            {m: int(n) for m, n in members.items()})

# ---- Python ----
tree = ast.parse(read("python/uform/__init__.py"))
python = {}
for node in tree.body:
    if isinstance(node, ast.ClassDef):
        python[node.name] = {t.targets[0].id: t.value.value for t in node.body
                             if isinstance(t, ast.Assign) and isinstance(t.value, ast.Constant)}
for kind, name in (("cpu_class", "CPUClass"), ("gpu_class", "GPUClass"), ("gpu_vendor", "GPUVendor")):
    compare(f"python uform.{name}", {m: n for m, (n, _) in c[kind].items()}, python.get(name, {}))
errors = dict(re.findall(r"\{UFORM_STATUS_(\w+), \"(\w+)\"", read("python/uform/_lib/errors.c")))
compare("python/uform/_lib/errors.c exception table (every status but OK)",
        {m: True for m in c["status"] if m != "OK"}, {m: True for m in errors})


# ---- Rust: c_enum! { ... pub enum Name { Member = n => "snake", ... } } ----
def rust_enum(text, name):
    body = re.search(r"pub enum %s \{(.*?)\n    \}" % name, text, re.S)
    return {m: (int(n), s) for m, n, s in re.findall(r"(\w+) = (\d+) => \"(\w+)\"", body.group(1))} if body else {}


vocabulary = read("rust/src/vocabulary.rs")
for kind, name in (("cpu_class", "CPUClass"), ("gpu_class", "GPUClass"), ("gpu_vendor", "GPUVendor")):
    compare(f"rust {name} (number => name)", {n: s for n, s in c[kind].values()},
            {n: s for n, s in rust_enum(vocabulary, name).values()})
status_rs = read("rust/src/status.rs")
compare("rust Status (number => name)", {n: m.lower() for m, (n, _) in c["status"].items()},
        {n: s for n, s in rust_enum(status_rs, "Status").values()})
rust_members = {n: m for m, (n, _) in rust_enum(status_rs, "Status").items()}
names = dict(re.findall(r"Status::(\w+) => \"([A-Z_]+)\"", status_rs))
compare("rust Status::name()", {m: m for m in c["status"]},
        {names[rust_members[n]]: names[rust_members[n]] for n, _ in c["status"].values()
         if n in rust_members and rust_members[n] in names})
messages = dict(re.findall(r"Status::(\w+) => \"([^\"]*[a-z][^\"]*)\"", status_rs))
compare("rust Status::message()", {m: msg for m, (_, msg) in c["status"].items()},
        {m: messages.get(rust_members.get(n), None) for m, (n, _) in c["status"].items()})

counts = {kind: len(members) for kind, members in c.items()}
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("faces agree with the C lists:", counts)
