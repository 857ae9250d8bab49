"""Lifecycle hooks for Claude Code and Codex: ``colony-tasks hook EVENT``.

Standard library and small core modules only; every hook is a new process per agent event.
"""
