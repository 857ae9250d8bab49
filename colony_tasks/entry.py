"""The ``colony-tasks`` console script.

``colony-tasks hook EVENT`` is dispatched before anything heavy is imported: hooks run as a new
process on every agent prompt and tool call, and click alone costs ~45 ms to import. A hook
process ends with ``os._exit`` once its output is flushed: interpreter teardown (module and
object finalisation) costs every hook ~3 ms and does nothing useful. Every transaction has
committed by then; a store the hook opened itself (no relay answered) is left for the exit to
drop rather than closed, which would checkpoint its WAL (see
:func:`colony_tasks.relay.apply.apply_here`).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # Copilot CLI runs .claude/settings.json's exec-form hooks without their args: a bare
    # `colony-tasks` there is our hook (hooks.runner.unnamed), never the CLI's usage error
    # (exit 2), which Copilot takes as a deny of every tool.
    if not args and os.environ.get("COPILOT_CLI") == "1":
        args = ["hook"]
    if args and args[0] == "hook":
        exiting = argv is None  # the console script, not a caller in this process
        if args[1:2] == ["wait"]:  # the wait that wakes an idle session (hooks/wait.py)
            from .hooks.wait import run as run_wait

            code = run_wait(args[2:])
        else:
            from .hooks.runner import run

            code = run(args[1:], exiting=exiting)
        if exiting:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(code)
        return code
    from .cli import cli

    return cli.main(args=args, prog_name="colony-tasks", standalone_mode=True) or 0


if __name__ == "__main__":
    sys.exit(main())
