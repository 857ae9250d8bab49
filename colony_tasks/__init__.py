"""colony-tasks: a shared task thread per repository+branch for coding agents."""

__version__ = "0.1.0"
