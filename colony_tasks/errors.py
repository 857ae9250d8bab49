"""Small named exceptions raised by the core.

Each message is a sentence that names the object and, where there is one, the next step.
Front ends translate them: the CLI into ``click.ClickException``, the MCP server into tool
errors, the hooks into a log line.
"""


class ColonyError(Exception):
    """Base class for every error the core raises on purpose."""


class NotFound(ColonyError):
    """A task, session, message or claim that does not exist."""


class InvalidInput(ColonyError):
    """Arguments the core refuses (empty text, a path outside the repository, ...)."""


class Conflict(ColonyError):
    """The action lost a race or the object is not in a state that allows it."""


class NotAllowed(ColonyError):
    """The session may not do this (not the addressee, not the turn holder, ...)."""
