"""The mesh's rendezvous through torch.distributed's FileStore, for `bench/RESULTS.md`.

The same shape as uform's rendezvous (every process publishes its facts, index 0 waits for all
of them and publishes one roster, everyone else reads the roster), on FileStore, which keeps
every key in one append-only file under flock and re-reads it on every get. n processes are
forked after torch is imported (its import is not timed) and released at once; wall time until
the last one has the roster; median of 3. Run with Debian's python3-torch:

    /usr/bin/python3 bench/mesh_filestore.py
"""
import multiprocessing as mp
import os
import statistics
import tempfile
import time

from torch.distributed import FileStore


def member(path, index, count, gate, done):
    gate.wait()
    store = FileStore(path, count)
    store.set(f"facts.{index}", f"index={index} count={count} gpus=8 host=bench")
    if index == 0:
        store.wait([f"facts.{i}" for i in range(1, count)])
        store.set("roster", f"count={count} gpus=8")
    else:
        store.get("roster")  # blocks until index 0 publishes it
    done.put(index)


def one_run(count):
    directory = tempfile.mkdtemp(prefix="uform-filestore-")
    path = os.path.join(directory, "store")
    gate, done = mp.Barrier(count + 1), mp.Queue()
    processes = [mp.Process(target=member, args=(path, i, count, gate, done)) for i in range(count)]
    for process in processes:
        process.start()
    gate.wait()
    start = time.perf_counter()
    for _ in range(count):
        done.get(timeout=300)
    seconds = time.perf_counter() - start
    for process in processes:
        process.join()
    return seconds


if __name__ == "__main__":
    mp.set_start_method("fork")
    print("processes  FileStore (same protocol)")
    for count in (2, 8, 64, 256):
        runs = [one_run(count) for _ in range(3)]
        print(f"{count:<10} {statistics.median(runs) * 1e3:.2f} ms")
