"""The buffer protocol, typed: `memoryview(arena)` type-checks once the checker's typeshed knows
PEP 688 (the stubs declare __buffer__ for every Python version)."""

from uform import Arena


def first_byte(arena: Arena) -> int:
    with memoryview(arena) as view, memoryview(arena.view()) as whole:
        return view[0] + whole[0]
