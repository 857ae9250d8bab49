"""The ``colony-tasks`` command line (click). Human-facing; never on the hook path."""

from . import core_cmds, thread_cmds  # noqa: E402,F401,I001  (registers commands)
from .app import cli

__all__ = ["cli"]
from . import install_cmds  # noqa: E402,F401
