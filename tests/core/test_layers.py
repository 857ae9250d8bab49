"""The import contract (pyproject.toml, ``[tool.importlinter]``, run by ``make lint``) holds,
and it is a real check: a front end importing another, or a hook importing a heavy package,
breaks it."""

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


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("hooks/payload.py", "import click", "The hook client imports none of the heavy packages"),
        ("viewer/data.py", "from ..cli import app", "Front ends do not import each other"),
        ("store/base.py", "from .. import briefing", "The store imports no domain module"),
        ("events.py", "from .mcp_server import server", "The core and the relay import no"),
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
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    out = lint(copy)
    assert out.returncode != 0
    broken = out.stdout.split("Broken contracts")[-1]
    assert contract in broken
