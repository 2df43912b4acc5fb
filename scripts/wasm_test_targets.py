#!/usr/bin/env python3
"""The build targets the wasm32 run needs, from ctest's test list.

    ctest --test-dir DIR --show-only=json-v1 [-E ...] | scripts/wasm_test_targets.py DIR targets
    ctest --test-dir DIR --show-only=json-v1 [-E ...] | scripts/wasm_test_targets.py DIR missing

Every test runs a program (or a script reading files) under DIR; each such path's name, less a
`.js` (or a `lib` and a `.a`), is a target if CMake knows it (`cmake --build DIR --target help`). `targets` prints those
targets, one per line; `missing` prints the paths under DIR that the tests name and that do not
exist (after building the targets, none should: scripts/test-wasm then builds everything).
"""
import json
import os
import subprocess
import sys


def paths_named(tests, build_dir):
    root = os.path.realpath(build_dir) + os.sep
    for test in tests:
        for word in test.get("command", []) or []:
            for token in str(word).split():
                token = token.strip("\"'")
                if os.path.realpath(token).startswith(root) or token.startswith(root):
                    yield token


def main():
    build_dir, mode = sys.argv[1], sys.argv[2]
    tests = json.load(sys.stdin).get("tests", [])
    paths = sorted(set(paths_named(tests, build_dir)))
    if mode == "missing":
        for path in paths:
            if not os.path.exists(path):
                print(path)
        return 0
    known = subprocess.run(["cmake", "--build", build_dir, "--target", "help"], check=True,
                           capture_output=True, text=True).stdout
    known = {line.split()[1] for line in known.splitlines() if line.startswith("... ")}
    for path in paths:
        name = os.path.basename(path)
        stem = name
        for suffix in (".js", ".a", ".so"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        # test_x.js is target test_x; libx.a (a library a script reads) is target x.
        for candidate in (stem, stem[3:] if stem.startswith("lib") else stem, name):
            if candidate in known:
                print(candidate)
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
