"""The local web viewer: lanes, threads, chains, claims, sessions and search in a browser.

``colony-tasks viewer`` serves it on loopback; :func:`create_app` builds it over one store.
"""

from .app import create_app

__all__ = ["create_app"]
