#!/usr/bin/env python3
"""`uform info` of a fixture machine, text and JSON, against what the fixture's files say
(tests/fixtures/synthesize.py wrote them) and what the CUDA and NVML doubles are configured with.

usage: check_info_fixtures.py FIXTURE NVML CUDA_DOUBLE NVML_DOUBLE [EMULATOR ...] PRINT_INFO
NVML: `double` (the NVML double, its GPUs the CUDA double's), `nvswitch` (the same, each NVLink
group wired through NVSwitches), `absent` (no NVML library) or `init_fails` (the double's
nvmlInit_v2 answers NVML_ERROR_DRIVER_NOT_LOADED).
"""
import json
import os
import subprocess
import sys

fixture, nvml, double, nvml_double, printer = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
BUSES = [0x1B, 0x43, 0x52, 0x61, 0x9D, 0xC3, 0xD1, 0xDF]  # the two-socket fixture's GPUs, PCI order
SOCKET = [list(range(0, 20)) + list(range(40, 60)), list(range(20, 40)) + list(range(60, 80))]
CONFIGS = {
    # Two NVLink groups of four, one behind each socket (this test's choice), listed by the
    # double in an order that is not PCI order.
    "two_socket_6248_smt": "\n".join(
        "device pci=0000:%02X:00.0 cc=9.0 sms=132 memory=80G nvlink=%d name=NVIDIA H100 80GB HBM3" % (bus, i // 4)
        for i, bus in sorted(enumerate(BUSES), key=lambda x: -x[1])),
    "grace_hopper_gh200": "device pci=0009:01:00.0 cc=9.0 sms=132 memory=96G name=NVIDIA GH200 480GB",
    "container_epyc_cpuset_quota": "",  # a driver that sees no device
}
NVML_LIBRARY = {"double": nvml_double, "init_fails": nvml_double, "nvswitch": nvml_double,
                "absent": os.path.join(os.path.dirname(nvml_double), "no-such-libnvidia-ml.so.1")}[nvml]
NVML_CONFIG = {"init_fails": "fault init=NVML_ERROR_DRIVER_NOT_LOADED",
               # Each group of four behind its own four NVSwitches, as on an HGX board.
               "nvswitch": "nvswitch group=0 switches=4; nvswitch group=1 switches=4"}.get(nvml, "")
LINKS = {"double": 4, "nvswitch": 18}.get(nvml)  # NVLinks within a group; None: unknown
environment = dict(os.environ, UFORM_CUDA_LIBRARY=double, UFORM_CUDA_DOUBLE_CONFIG=CONFIGS[fixture],
                   UFORM_NVML_LIBRARY=NVML_LIBRARY, UFORM_NVML_DOUBLE_CONFIG=NVML_CONFIG)
failures = []


def run(form):
    done = subprocess.run(printer + [fixture, form], env=environment, capture_output=True, text=True)
    if done.returncode:
        sys.exit("print_info %s %s failed (%d): %s" % (fixture, form, done.returncode, done.stderr))
    return done.stdout


def expect(what, actual, expected):
    if actual != expected:
        failures.append("%s: %r, expected %r" % (what, actual, expected))


text = run("text")
data = json.loads(run("json"))
print(text)
lines = text.splitlines()


def has_line(line):
    if line not in lines:
        failures.append("text lacks the line %r" % line)


def cpulist(cpus):
    cpus, parts, i = sorted(cpus), [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(parts)


def check_caches(expected):
    """expected: [(level, type, size bytes, [instance CPU lists])]."""
    caches = data["cpu"]["caches"]
    expect("cache levels and types", [(c["level"], c["type"]) for c in caches], [(e[0], e[1]) for e in expected])
    for cache, (level, kind, size, instances) in zip(caches, expected):
        name = "L%d%s" % (level, {"data": "d", "instruction": "i"}.get(kind, ""))
        expect(name + " size", cache["size_bytes"], size)
        expect(name + " instances", cache["instances"], instances)
        covered = sorted(c for instance in instances for c in instance)
        expect(name + " covers every online CPU once", covered, data["cpu"]["online_cpus"])


# ---- the parts every report has, in both formats alike ----
for key in ("version", "capabilities_compiled", "capabilities_available", "cpu_class", "cpu", "usable_cpus",
            "cpu_quota", "default_threads", "numa", "numa_domains", "numa_distances", "gpus", "gpu_topology"):
    if key not in data:
        failures.append("JSON lacks %r" % key)
cpu = data["cpu"]
has_line("CPU model:              %s" % cpu["model"])
has_line("CPU class:              %s" % data["cpu_class"])
has_line("Online CPUs:            %d (%s)" % (len(cpu["online_cpus"]), cpulist(cpu["online_cpus"])))
has_line("Sockets:                %d" % cpu["sockets"])
has_line("Threads per core:       %d" % cpu["threads_per_core"])
matrix = data["numa_distances"]
has_line("  node" + "".join(" %4d" % n for n in matrix["nodes"]))
for node, row in zip(matrix["nodes"], matrix["matrix"]):
    has_line("  %4d" % node + "".join(" %4d" % d for d in row))
expect("GPU topology rows", [g["position"] for g in data["gpu_topology"]], list(range(len(data["gpus"]))))

KIB, MIB = 1 << 10, 1 << 20
if fixture == "two_socket_6248_smt":
    expect("model", cpu["model"], "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz")
    expect("online", cpu["online_cpus"], list(range(80)))
    expect("sockets, cores, threads", (cpu["sockets"], cpu["cores"], cpu["threads_per_core"]), (2, 40, 2))
    has_line("Cores:                  40 (20 per socket)")
    core_pairs = [[c, c + 40] for c in range(40)]
    check_caches([(1, "data", 32 * KIB, core_pairs), (1, "instruction", 32 * KIB, core_pairs),
                  (2, "unified", 1024 * KIB, core_pairs), (3, "unified", 28160 * KIB, SOCKET)])
    has_line("  L1d: 32 KiB x 40, each shared by 2 CPUs, as 0,40")
    has_line("  L1i: 32 KiB x 40, each shared by 2 CPUs, as 0,40")
    has_line("  L2:  1 MiB x 40, each shared by 2 CPUs, as 0,40")
    has_line("  L3:  27.5 MiB x 2, shared by CPUs 0-19,40-59 | 20-39,60-79")
    expect("distances", matrix, {"nodes": [0, 1], "matrix": [[10, 21], [21, 10]]})
    expect("GPUs in PCI order", [g["pci_address"] for g in data["gpus"]], ["0000:%02x:00.0" % b for b in BUSES])
    for i, row in enumerate(data["gpu_topology"]):
        socket = i // 4
        expect("GPU %d node" % i, row["numa_node"], socket)
        expect("GPU %d CPUs" % i, row["cpus"], SOCKET[socket])
        expect("GPU %d peers" % i, [link["peer"] for link in row["links"]], [j for j in range(8) if j != i])
        for link in row["links"]:
            same = link["peer"] // 4 == socket
            # The NVML double gives each pair of a group of four 4 links (min(4, 18 / 3)); through
            # switches each GPU's 18 links reach every other GPU on them.
            nvlinks = (LINKS if same else 0) if LINKS else None
            expect("GPU %d -> %d" % (i, link["peer"]), link,
                   {"peer": link["peer"], "access": same, "performance_rank": 0, "native_atomics": same,
                    "cuda_array_access": same, "nvlinks": nvlinks})
        within = "NV%d" % LINKS if LINKS else "P0+A"
        cells = ["X" if j == i else within if j // 4 == socket else "-" for j in range(8)]
        has_line("  GPU%-3d" % i + "".join("%-4s  " % c for c in cells) + "%-4d  %s" % (socket, cpulist(SOCKET[socket])))
    has_line("        " + "".join("%-4s  " % ("GPU%d" % j) for j in range(8)) + "NUMA  CPUs")
    # Without NVML's word the NVLinks are unknown, and the discovery notes say why.
    notes = [n for n in data.get("gpus_discovery", []) if n["runtime"] == "NVML"]
    nvml_lines = [line for line in lines if line.startswith("  NVML: ")]
    if LINKS:
        expect("NVML notes", (notes, nvml_lines), ([], []))
    else:
        status, message = {"absent": ("NOT_FOUND", "no NVML: "),
                           "init_fails": ("DEVICE_FAULT", "nvmlInit_v2: Driver Not Loaded")}[nvml]
        expect("NVML note", [(n["status"], n["message"][:len(message)]) for n in notes], [(status, message)])
        expect("NVML text note", [line[:len("  NVML: %s: %s" % (status, message))] for line in nvml_lines],
               ["  NVML: %s: %s" % (status, message)])
        if nvml_lines and not nvml_lines[0].endswith(" (NVLinks unknown)"):
            failures.append("the NVML line does not say the NVLinks are unknown: %r" % nvml_lines[0])
elif fixture == "grace_hopper_gh200":
    expect("model", cpu["model"], "ARM Neoverse-V2")
    expect("sockets, cores, threads", (cpu["sockets"], cpu["cores"], cpu["threads_per_core"]), (1, 72, 1))
    has_line("Cores:                  72 (72 per socket)")
    each = [[c] for c in range(72)]
    check_caches([(1, "data", 64 * KIB, each), (1, "instruction", 64 * KIB, each), (2, "unified", MIB, each),
                  (3, "unified", 114 * MIB, [list(range(72))])])
    has_line("  L1d: 64 KiB x 72, each shared by 1 CPU, as 0")
    has_line("  L3:  114 MiB x 1, shared by CPUs 0-71")
    expect("distances", matrix, {"nodes": list(range(10)),
                                 "matrix": [[10 if i == j else 80 for j in range(10)] for i in range(10)]})
    expect("GPU", [(g["name"], g["pci_address"], g["numa_node"]) for g in data["gpus"]],
           [("NVIDIA GH200 480GB", "0009:01:00.0", 0)])
    expect("GPU topology", data["gpu_topology"], [{"position": 0, "numa_node": 0, "cpus": list(range(72)), "links": []}])
    has_line("  GPU0  X     0     0-71")
elif fixture == "container_epyc_cpuset_quota":
    expect("model", cpu["model"], "AMD EPYC 7B13 64-Core Processor")
    expect("online", cpu["online_cpus"], list(range(64)))
    expect("sockets, cores, threads", (cpu["sockets"], cpu["cores"], cpu["threads_per_core"]), (1, 32, 2))
    expect("usable, quota, threads", (data["usable_cpus"], data["cpu_quota"], data["default_threads"]), (4, 2.5, 3))
    has_line("Cores:                  32 (32 per socket)")
    pairs = [[c, c + 32] for c in range(32)]
    ccx = [list(range(8 * k, 8 * k + 8)) + list(range(32 + 8 * k, 40 + 8 * k)) for k in range(4)]
    check_caches([(1, "data", 32 * KIB, pairs), (1, "instruction", 32 * KIB, pairs), (2, "unified", 512 * KIB, pairs),
                  (3, "unified", 32 * MIB, ccx)])
    has_line("  L2:  512 KiB x 32, each shared by 2 CPUs, as 0,32")
    has_line("  L3:  32 MiB x 4, shared by CPUs 0-7,32-39 | 8-15,40-47 | 16-23,48-55 | 24-31,56-63")
    expect("distances", matrix, {"nodes": [0], "matrix": [[10]]})
    expect("GPUs", (data["gpus"], data["gpu_topology"]), ([], []))
    if "gpus_note" not in data:
        failures.append("no GPUs and no gpus_note")
    if "GPU topology:" in lines:
        failures.append("a GPU table without GPUs")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("info of %s (NVML %s) agrees with its fixture (text and JSON)" % (fixture, nvml))
