#!/bin/sh
# `uform info` (text and --json) lists the HIP runtime test double's AMD GPUs after the CUDA driver
# test double's NVIDIA one, like rocm-smi after nvidia-smi: PCI order within each vendor.
set -eu
uform=$1
export UFORM_CUDA_LIBRARY=$2
export UFORM_HIP_LIBRARY=$3
export UFORM_CUDA_DOUBLE_CONFIG='device pci=0000:41:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3'
export UFORM_HIP_DOUBLE_CONFIG='device pci=0000:C1:00.0 arch=gfx950:sramecc+:xnack- cus=256 memory=288G name=AMD Instinct MI355X
device pci=0000:05:00.0 arch=gfx942:sramecc+:xnack- cus=304 memory=192G name=AMD Instinct MI300X'
text=$($uform info)
echo "$text"
echo "$text" | grep -q "^GPUs:                   3$"
echo "$text" | grep -q "^  GPU 0: NVIDIA H100 80GB HBM3 (nvidia 0, nvidia_hopper"
echo "$text" | grep -q "^  GPU 1: AMD Instinct MI300X (amd 0, amd_cdna3, compute 9.4, 304 CUs, 192.0 GiB, PCI 0000:05:00.0, NUMA node"
echo "$text" | grep -q "^  GPU 2: AMD Instinct MI355X (amd 1, amd_cdna4, compute 9.5, 256 CUs, 288.0 GiB, PCI 0000:c1:00.0, NUMA node"
$uform info --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
gpus = d["gpus"]
assert [g["vendor"] for g in gpus] == ["nvidia", "amd", "amd"], gpus
assert [g["vendor_ordinal"] for g in gpus] == [0, 0, 1], gpus
assert gpus[1]["gpu_class"] == "amd_cdna3" and gpus[1]["compute_units"] == 304, gpus[1]
assert gpus[1]["memory_bytes"] == 192 << 30 and gpus[1]["pci_address"] == "0000:05:00.0", gpus[1]
assert "cuda,hip" in ",".join(d["capabilities_compiled"]) if isinstance(d["capabilities_compiled"], list) else "cuda,hip" in d["capabilities_compiled"]
assert "hip" in d["capabilities_available"] and "cuda" in d["capabilities_available"]
print("json ok:", len(gpus), "GPUs")
'
