#!/bin/sh
# `uform info` prints the class, domains and threads; `--json` parses and agrees with it.
set -eu
uform=$1
text=$($uform info)
echo "$text"
echo "$text" | grep -q "^CPU class:"
echo "$text" | grep -q "^Default threads:"
$uform info --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for key in ("version", "capabilities_compiled", "capabilities_available", "cpu_class",
            "default_threads", "numa_domains"):
    assert key in d, key
assert set(d["capabilities_available"]) <= set(d["capabilities_compiled"])
assert d["default_threads"] >= 1 and len(d["numa_domains"]) >= 1
print("json ok:", d["cpu_class"], d["default_threads"], "threads")
'
