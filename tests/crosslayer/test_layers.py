"""The import contract (pyproject.toml, ``[tool.importlinter]``, run by ``make lint``) holds,
and it is a real check: an import up a layer, across front ends, or of a heavy package on the
hook path breaks it, in any module of a folder, old or new."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

LINT = Path(sys.executable).parent / "lint-imports"
pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is a test extra")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )


def test_the_checkout_keeps_every_contract():
    out = lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


LAYERS = "The layers: front ends, relay, renderer"
HOOK_PATH = "The cold hook path is standard library only"


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("hooks/payload.py", "import click", HOOK_PATH),
        ("domain/claims.py", "import numpy", HOOK_PATH),
        ("viewer/data.py", "from ..hooks import runner", LAYERS),
        ("store/base.py", "from ..domain import claims", LAYERS),
        ("base/paths.py", "from .. import store", LAYERS),
        ("domain/posts.py", "from ..usecases import events", LAYERS),
        ("domain/posts.py", "from .. import search", LAYERS),
        ("usecases/events.py", "from ..render import briefing", LAYERS),
        ("usecases/events.py", "from ..mcp_server import server", LAYERS),
        # A module added tomorrow is covered by its folder's rule the day it is added.
        ("domain/brand_new.py", "from ..relay import wire", LAYERS),
        ("cli/brand_new.py", "from ..viewer import data", "The CLI imports the viewer and the MCP"),
        ("relay/wire.py", "from . import server", "The relay's modules form layers"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, module: str, line: str, contract):
    copy = tmp_path / "checkout"
    shutil.copytree(
        ROOT / "colony_tasks",
        copy / "colony_tasks",
        ignore=shutil.ignore_patterns("__pycache__", "*.onnx", "*.npy", "*.bin", "models"),
    )
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / "colony_tasks" / module
    before = target.read_text() if target.exists() else ""
    target.write_text(before + f"\n{line}  # noqa\n")
    out = lint(copy)
    assert out.returncode != 0
    broken = out.stdout.split("Broken contracts")[-1]
    assert contract in broken
