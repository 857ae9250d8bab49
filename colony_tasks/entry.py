"""The ``colony-tasks`` console script.

``colony-tasks hook EVENT`` is dispatched before anything heavy is imported: hooks run as a new
process on every agent prompt and tool call, and click alone costs ~45 ms to import.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "hook":
        from .hooks.runner import run

        return run(args[1:])
    from .cli import cli

    return cli.main(args=args, prog_name="colony-tasks", standalone_mode=True) or 0


if __name__ == "__main__":
    sys.exit(main())
