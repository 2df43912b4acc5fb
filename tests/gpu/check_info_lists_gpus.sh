#!/bin/sh
# `uform info` (text and --json) lists the GPUs of the CUDA driver test double like
# nvidia-smi -L: one line each, in PCI bus order, with class, SMs, memory, PCI address.
set -eu
uform=$1
export UFORM_CUDA_LIBRARY=$2
export UFORM_CUDA_DOUBLE_CONFIG='device pci=0000:C1:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3
device pci=0000:41:00.0 cc=8.9 sms=142 memory=48G name=NVIDIA L40S'
text=$($uform info)
echo "$text"
echo "$text" | grep -q "^GPUs:                   2$"
echo "$text" | grep -q "^  GPU 0: NVIDIA L40S (nvidia 0, nvidia_ada, compute 8.9, 142 SMs, 48.0 GiB, PCI 0000:41:00.0, NUMA node"
echo "$text" | grep -q "^  GPU 1: NVIDIA H100 80GB HBM3 (nvidia 1, nvidia_hopper, compute 9.0, 132 SMs, 80.0 GiB, PCI 0000:c1:00.0, NUMA node"
$uform info --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
gpus = d["gpus"]
assert [g["name"] for g in gpus] == ["NVIDIA L40S", "NVIDIA H100 80GB HBM3"], gpus
assert [g["position"] for g in gpus] == [0, 1] and [g["vendor_ordinal"] for g in gpus] == [0, 1]
assert gpus[1] | {"numa_node": None} == {"position": 1, "vendor": "nvidia", "vendor_ordinal": 1,
    "gpu_class": "nvidia_hopper", "compute_capability": "9.0", "compute_units": 132,
    "memory_bytes": 80 << 30, "pci_address": "0000:c1:00.0", "numa_node": None, "name": "NVIDIA H100 80GB HBM3"}, gpus[1]
assert "cuda" in d["capabilities_compiled"] and "cuda" in d["capabilities_available"]
assert "gpus_note" not in d and "gpus_error" not in d
print("json ok:", len(gpus), "GPUs")
'
