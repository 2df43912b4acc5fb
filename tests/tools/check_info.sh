#!/bin/sh
# `uform info` on this machine prints the class, nodes and threads; `--json` parses, agrees
# with it, and its lscpu / lstopo part holds together: the usable CPUs are online ones, every
# online CPU is in at most one instance of each cache, the distance matrix is square with 10 on
# its diagonal (the kernel's LOCAL_DISTANCE).
set -eu
uform=$1
text=$($uform info)
echo "$text"
echo "$text" | grep -q "^CPU class:"
echo "$text" | grep -q "^Default threads:"
echo "$text" | grep -q "^CPU model:"
echo "$text" | grep -q "^Online CPUs:"
$uform info --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for key in ("version", "capabilities_compiled", "capabilities_available", "cpu_class",
            "default_threads", "numa_domains"):
    assert key in d, key
assert set(d["capabilities_available"]) <= set(d["capabilities_compiled"])
assert d["default_threads"] >= 1 and len(d["numa_domains"]) >= 1
cpu = d["cpu"]
online = cpu["online_cpus"]
usable = sorted(c for node in d["numa_domains"] for c in node["cpus"])
assert len(usable) == d["usable_cpus"] and set(usable) <= set(online), (usable, online)
if cpu["cores"]:
    assert cpu["sockets"] >= 1 and cpu["cores"] >= cpu["sockets"] and cpu["threads_per_core"] >= 1, cpu
for cache in cpu["caches"]:
    cpus = sorted(c for instance in cache["instances"] for c in instance)
    # At most once each (a CPU whose cache files are missing is in none), and only online CPUs.
    assert len(cpus) == len(set(cpus)) and set(cpus) <= set(online), (cache["level"], cache["type"], cpus)
    assert cache["size_bytes"] > 0 and cache["type"] in ("data", "instruction", "unified"), cache
m = d["numa_distances"]
if m is not None:
    n = len(m["nodes"])
    assert len(m["matrix"]) == n and all(len(row) == n for row in m["matrix"]), m
    assert all(m["matrix"][i][i] == 10 for i in range(n)), m
assert len(d["gpu_topology"]) == len(d["gpus"])
print("json ok:", d["cpu_class"], d["default_threads"], "threads")
'
