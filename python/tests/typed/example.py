"""A typed use of uform that `mypy --strict` checks (test_tooling.py): the stubs must let a
strictly typed program use executors, deferred calls, arenas and DLPack."""

from __future__ import annotations

import asyncio

import uform
from uform import Arena, ArenaView, Deferred, Executor


def fill(executor: Executor, arena: Arena) -> Deferred:
    seen: list[int] = []

    def task(index: int, thread: int) -> None:
        seen.append(index)

    return executor.for_n(8, task, dynamic=True, deferred=True, progress=lambda done, total: None)


async def wait_for(deferred: Deferred) -> None:
    await deferred


def main() -> int:
    with Executor.for_ram(2) as executor, Arena.new_in(executor, 1 << 16) as arena:
        deferred = fill(executor, arena)
        try:
            deferred.wait(timeout=5.0)
        except uform.TimeoutError:
            deferred.cancel()
        asyncio.run(wait_for(executor.for_threads(lambda thread, _: None, deferred=True)))
        view: ArenaView = arena.view(arena.allocate(4096), 4096)
        device: tuple[int, int] = view.__dlpack_device__()
        capsule = arena.__dlpack__(max_version=(1, 0))
        del capsule
        return view.nbytes + device[0]


if __name__ == "__main__":
    print(main())
