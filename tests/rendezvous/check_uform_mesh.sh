#!/bin/sh
# `uform mesh` as a cluster admin runs it, one process per "node", against the CUDA driver test
# double: three processes join and each prints its place (text, and JSON for one); a run missing
# its last process fails on every node naming the index that never arrived; bad options are
# usage errors (exit 2).
#   check_uform_mesh.sh <uform> <libuform_cuda_emulated.so> <libuform_nccl_emulated.so>
set -u
uform=$1
export UFORM_CUDA_LIBRARY=$2
export UFORM_NCCL_LIBRARY=$3 # the NCCL test double: each node reports a data plane
export UFORM_CUDA_DOUBLE_CONFIG="device cc=9.0 memory=64M;device cc=9.0 memory=64M"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

for i in 0 1 2; do
  json=""; [ "$i" = 1 ] && json=--json
  "$uform" mesh --directory "$dir" --job admin-smoke --index $i --count 3 --timeout 30 $json >"$dir/out.$i" 2>&1 &
done
wait
grep -q "^host domain 0: 2 GPUs from run-wide GPU 0 of 6" "$dir/out.0" || fail "index 0: $(cat "$dir/out.0")"
grep -q '"host_domain_index":1,"gpus_per_host_domain":2,"first_gpu_index":2,"gpus_per_colocated_domain":6' \
  "$dir/out.1" || fail "index 1: $(cat "$dir/out.1")"
grep -q "^host domain 2: 2 GPUs from run-wide GPU 4 of 6" "$dir/out.2" || fail "index 2: $(cat "$dir/out.2")"
grep -q "^data plane: NCCL communicators, one per GPU" "$dir/out.0" || fail "no data plane: $(cat "$dir/out.0")"
grep -q '"data_plane":"nccl"' "$dir/out.1" || fail "index 1 has no data plane: $(cat "$dir/out.1")"
[ ! -e "$dir/admin-smoke" ] || fail "the job directory was left behind"

for i in 0 1; do
  "$uform" mesh --directory "$dir" --job short --index $i --count 3 --timeout 1 >"$dir/short.$i" 2>&1 &
done
wait
for i in 0 1; do
  grep -q "index 2 never arrived" "$dir/short.$i" || fail "short run, index $i: $(cat "$dir/short.$i")"
done

"$uform" mesh --directory "$dir" --job x --index minus-one >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --index"
"$uform" mesh --directory "$dir" --job >/dev/null 2>&1; [ $? -eq 2 ] || fail "--job without a value"
echo "uform mesh: 3 processes formed a mesh, a short run named the missing index, bad options refused"
