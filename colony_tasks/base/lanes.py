"""Resolve a working directory to its lane (repository identity + branch) without running git.

One identity rule on every store: a repository with a remote ``origin`` is identified by its
normalised URL (``git@github.com:org/repo.git`` and ``https://github.com/org/repo`` are both
``git:github.com/org/repo``), so clones of one project — on one machine or on several — are
one repository, and what one changes can be weighed against what another changes. Without a
remote the identity is the real path of the git *common* dir, so linked worktrees of one
repository share it (that repository stays local to the machine). A submodule has its own git
dir (``.git/modules/<name>`` of its parent), so it is its own repository. Detached HEAD gives
the branch ``detached@<sha7>``; an unborn branch keeps its name; a folder outside any
repository is its own lane with an empty branch. ``.git/config`` is read as a file: no git
process is spawned.
"""

from __future__ import annotations

import os

from .models import Record


class LaneInfo(Record):
    """``repo_id``: the normalised ``origin`` URL, else the real path of the git common dir (or
    of the folder outside git);
    ``root``: the working tree's top folder, which paths are relative to; ``local_id``: for a
    repository identified by its ``origin``, the common dir's real path, the identity a local
    store gave it before (a lane kept under it is adopted, see
    :func:`colony_tasks.domain.sessions.lane_for`), else empty."""

    repo_id: str
    root: str
    repo_name: str
    branch: str
    git_dir: str | None = None
    local_id: str = ""

    @property
    def is_git(self) -> bool:
        return self.git_dir is not None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _find_dot_git(start: str) -> tuple[str, str] | None:
    """The nearest ancestor holding ``.git``: (worktree root, path of .git)."""
    current = start
    while True:
        candidate = os.path.join(current, ".git")
        if os.path.exists(candidate):
            return current, candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _git_dir(dot_git: str, root: str) -> str | None:
    if os.path.isdir(dot_git):
        return dot_git
    content = _read(dot_git)
    if not content or not content.startswith("gitdir:"):
        return None
    target = content[len("gitdir:") :].strip()
    if not os.path.isabs(target):
        target = os.path.join(root, target)
    return os.path.normpath(target)


def _common_dir(git_dir: str) -> str:
    pointer = _read(os.path.join(git_dir, "commondir"))
    if not pointer:
        return git_dir
    if not os.path.isabs(pointer):
        pointer = os.path.join(git_dir, pointer)
    return os.path.normpath(pointer)


def _branch(git_dir: str) -> str:
    head = _read(os.path.join(git_dir, "HEAD")) or ""
    if head.startswith("ref:"):
        ref = head[4:].strip()
        return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
    if head:
        return f"detached@{head[:7]}"
    return ""


def _repo_name(common_dir: str, root: str) -> str:
    if os.path.basename(common_dir) == ".git":
        return os.path.basename(os.path.dirname(common_dir)) or root
    parts = common_dir.replace("\\", "/").split("/")
    if ".git" in parts and "modules" in parts:  # submodule git dir: .git/modules/<name>
        return os.path.basename(root)
    name = os.path.basename(common_dir)
    return name[:-4] if name.endswith(".git") else name


REMOTE_PREFIX = "git:"


def normalise_remote(url: str) -> str | None:
    """``git:<host>/<path>`` for a remote URL (scp-like, ssh, https, git; credentials, port,
    trailing ``.git`` and slashes dropped, host lower-cased); None for a local path."""
    url = url.strip()
    if not url:
        return None
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme.lower() == "file":
            return None
        host, _, path = rest.partition("/")
    elif ":" in url and not url.startswith(("/", ".")) and "/" not in url.split(":", 1)[0]:
        host, path = url.split(":", 1)  # scp-like: [user@]host:path
    else:
        return None
    host = host.rsplit("@", 1)[-1].split(":", 1)[0].lower()
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.strip("/")
    if not host or not path:
        return None
    return f"{REMOTE_PREFIX}{host}/{path}"


def origin_url(common_dir: str) -> str | None:
    """The ``url`` of ``[remote "origin"]`` in the repository's config file."""
    config = _read(os.path.join(common_dir, "config"))
    if not config:
        return None
    in_origin = False
    for raw in config.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_origin = line.replace(" ", "").lower() in ('[remote"origin"]',)
            continue
        if in_origin and "=" in line:
            key, value = line.split("=", 1)
            if key.strip().lower() == "url":
                return value.strip().strip('"')
    return None


def resolve(cwd: str) -> LaneInfo:
    """The lane of ``cwd``. Never raises for a missing folder: it becomes a non-git lane."""
    start = os.path.realpath(os.path.expanduser(cwd or "."))
    found = _find_dot_git(start)
    if found:
        root, dot_git = found
        git_dir = _git_dir(dot_git, root)
        if git_dir and os.path.isdir(git_dir):
            common = os.path.realpath(_common_dir(git_dir))
            remote = normalise_remote(origin_url(common) or "")
            return LaneInfo(
                repo_id=remote or common,
                root=root,
                repo_name=_repo_name(common, root),
                branch=_branch(git_dir),
                git_dir=os.path.realpath(git_dir),
                local_id=common if remote else "",
            )
    return LaneInfo(
        repo_id=start, root=start, repo_name=os.path.basename(start) or start, branch=""
    )
