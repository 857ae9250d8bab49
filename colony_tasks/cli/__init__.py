"""The ``colony-tasks`` command line (click). Human-facing; never on the hook path.

Each module of this package registers its commands on the group defined in :mod:`.app`,
which imports a command's module when that command is run (see ``app.COMMANDS``).
"""

from .app import cli

__all__ = ["cli"]
