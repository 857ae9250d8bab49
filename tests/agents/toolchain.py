"""The agent CLIs under test, installed from the npm registry into a cache outside the repo.

The versions live in ``versions.json`` (the one place to bump them). Each set of versions gets
its own folder, ``$XDG_CACHE_HOME/colony-tasks-agents/<versions>`` (``~/.cache`` by default),
installed once into a scratch folder and renamed into place, so an interrupted install never
leaves a half-filled cache behind. ``node@22`` provides Node 22 (Claude Code's launcher and
Qwen Code need it; with an older Node first on PATH, npm would quietly pick an older Qwen Code)
whatever the system Node is.

``COLONY_TASKS_AGENT_VERSIONS=latest`` (``make agents-latest``) asks the registry for the newest
published versions instead. Without npm the suite is skipped with that reason; when npm fails,
the tests error with npm's output. ``COLONY_TASKS_AGENTS=skip`` skips the suite on purpose
(for an offline machine).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

VERSIONS_FILE = Path(__file__).with_name("versions.json")
NODE_MAJOR = "22"
INSTALL_TIMEOUT = 900


class Unavailable(Exception):
    """npm is not installed here, so the CLIs cannot be (the suite is skipped, with this reason)."""


class InstallFailed(Exception):
    """npm is there but failed (registry unreachable, a pinned version withdrawn...): an error,
    not a skip, so CI never goes green without having run the agents."""


@dataclass(frozen=True)
class Toolchain:
    """Where the installed CLIs are, and which versions they are."""

    versions: dict[str, str]
    bin_dir: Path

    @property
    def claude(self) -> str:
        return str(self.bin_dir / "claude")

    @property
    def codex(self) -> str:
        return str(self.bin_dir / "codex")

    @property
    def gemini(self) -> str:
        return str(self.bin_dir / "gemini")

    @property
    def qwen(self) -> str:
        return str(self.bin_dir / "qwen")

    @property
    def copilot(self) -> str:
        return str(self.bin_dir / "copilot")

    @property
    def opencode(self) -> str:
        return str(self.bin_dir / "opencode")

    def version(self, agent: str) -> str:
        """The version under test of ``agent`` (claude, codex, gemini, qwen, copilot,
        opencode)."""
        package = {
            "claude": "@anthropic-ai/claude-code",
            "codex": "@openai/codex",
            "gemini": "@google/gemini-cli",
            "qwen": "@qwen-code/qwen-code",
            "copilot": "@github/copilot",
            "opencode": "opencode-ai",
        }[agent]
        return self.versions[package]

    def describe(self) -> str:
        return ", ".join(f"{name} {version}" for name, version in self.versions.items())


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "colony-tasks-agents"


def pinned_versions() -> dict[str, str]:
    return json.loads(VERSIONS_FILE.read_text())


def _npm(*args: str) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed, so the agent CLIs cannot be installed")
    result = subprocess.run(
        [npm, *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=INSTALL_TIMEOUT,
    )
    if result.returncode != 0:
        raise InstallFailed(f"`npm {' '.join(args)}` failed: {result.stderr.strip()[-1500:]}")
    return result.stdout


def latest_versions() -> dict[str, str]:
    """The newest published versions (Node: the newest 22.x)."""
    versions = {}
    for package in pinned_versions():
        spec = f"node@{NODE_MAJOR}" if package == "node" else package
        found = json.loads(_npm("view", spec, "version", "--json"))
        versions[package] = found[-1] if isinstance(found, list) else found
    return versions


def wanted_versions() -> dict[str, str]:
    if os.environ.get("COLONY_TASKS_AGENT_VERSIONS") == "latest":
        return latest_versions()
    return pinned_versions()


def install(versions: dict[str, str]) -> Toolchain:
    """The CLIs at these versions, installed into the cache on first use."""
    key = "_".join(f"{name.rsplit('/', 1)[-1]}-{v}" for name, v in versions.items())
    target = cache_root() / key
    toolchain = Toolchain(versions, target / "node_modules" / ".bin")
    if (target / "installed").exists():
        return toolchain
    if shutil.which("npm") is None:
        raise Unavailable("npm is not installed, so the agent CLIs cannot be installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (parallel CI jobs)
        if (target / "installed").exists():
            return toolchain
        scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
        try:
            (scratch / "package.json").write_text('{"private": true}\n')
            specs = [f"{name}@{version}" for name, version in versions.items()]
            _npm("install", "--prefix", str(scratch), "--no-audit", "--no-fund", *specs)
            (scratch / "installed").write_text(json.dumps(versions) + "\n")
            shutil.rmtree(target, ignore_errors=True)
            scratch.rename(target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return toolchain
