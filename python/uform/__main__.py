"""`python -m uform [--json]` prints what `uform info` prints."""

import argparse
import sys

from . import info


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m uform", description="What uform sees of this machine.")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    arguments = parser.parse_args(argv)
    text = info(json=arguments.json)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
