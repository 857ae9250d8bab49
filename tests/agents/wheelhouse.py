"""A local wheelhouse for the plugin's first-use build, made from this checkout's own environment.

The plugin's launcher builds its Python environment with pip (or uv) from the plugin's source.
Tests never download, so they point pip at a folder of wheels (``PIP_NO_INDEX`` +
``PIP_FIND_LINKS``), made here without any network: each distribution the build needs (the
project's runtime dependencies and its build backend, with their own dependencies) is packed
back into a wheel from the files its installation recorded in the running environment — which
``make install`` built, so a fresh CI machine has them too. Compiled extensions are packed as
they are: the wheels only ever install into an environment of this same interpreter.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .sandbox import Sandbox

# What the plugin's environment needs: the project's dependencies, and what pip needs to
# build the project's wheel in an isolated build environment.
ROOTS = ("colony-tasks", "hatchling")
SKIPPED_FILES = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def closure(roots: tuple[str, ...] = ROOTS) -> list[metadata.Distribution]:
    """The installed distributions that ``roots`` need (with the extras they ask of each other),
    ``colony-tasks`` itself left out: pip builds it from the plugin's source."""
    found: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    todo = [Requirement(name) for name in roots]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        extras = ("", *sorted(requirement.extras))
        if all((name, extra) in done for extra in extras):
            continue
        dist = found.setdefault(name, metadata.distribution(name))
        for extra in extras:
            done.add((name, extra))
            for text in dist.requires or []:
                needed = Requirement(text)
                if needed.marker is None or needed.marker.evaluate({"extra": extra}):
                    todo.append(needed)
    found.pop("colony-tasks", None)
    return list(found.values())


def _tag(dist: metadata.Distribution) -> str:
    wheel_file = dist.read_text("WHEEL") or ""
    tags = [
        line.split(":", 1)[1].strip() for line in wheel_file.splitlines() if line.startswith("Tag:")
    ]
    if not tags:
        raise ValueError(f"{dist.metadata['Name']} was not installed from a wheel")
    pythons, abis, platforms = zip(*(tag.split("-") for tag in tags), strict=True)
    return "-".join(".".join(dict.fromkeys(part)) for part in (pythons, abis, platforms))


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def pack(dist: metadata.Distribution, folder: Path) -> Path:
    """``dist`` as a wheel in ``folder``, from the files its RECORD lists (scripts outside
    site-packages and bytecode left out: the installer makes both anew)."""
    name = dist.metadata["Name"].replace("-", "_")
    target = folder / f"{name}-{dist.version}-{_tag(dist)}.whl"
    info_dir = next(
        str(f).split("/", 1)[0] for f in dist.files or [] if str(f).endswith(".dist-info/METADATA")
    )
    record = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for file in dist.files or []:
            path = str(file)
            if path.startswith("..") or "__pycache__" in path or path.endswith(".pyc"):
                continue
            if path.startswith(info_dir + "/") and path.rsplit("/", 1)[1] in SKIPPED_FILES:
                continue
            located = Path(str(file.locate()))
            if not located.is_file():
                continue
            data = located.read_bytes()
            archive.writestr(path, data)
            record.append(_record_line(path, data))
        record.append(f"{info_dir}/RECORD,,")
        archive.writestr(f"{info_dir}/RECORD", "\n".join(record) + "\n")
    return target


def build(folder: Path) -> list[Path]:
    """A wheel of every distribution the plugin's environment needs, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return [pack(dist, folder) for dist in closure()]


def offline_pip(sandbox: Sandbox, wheels: Path) -> None:
    """The plugin's build gets its wheels from ``wheels`` only (no index, no user config), and
    nothing but the plugin provides colony-tasks."""
    sandbox.env.update(
        {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    )
    (sandbox.home / ".local" / "bin" / "colony-tasks").unlink()
