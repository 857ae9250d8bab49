"""What the wheel installs: the MCP server under the project's own namespace, no demo."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.slow


def test_the_wheel_installs_the_mcp_server_inside_colony_tasks(tmp_path: Path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("colony_tasks-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"colony_tasks"}
    assert "colony_tasks/mcp_server/server.py" in names
    assert "colony_tasks/mcp_server/tools_thread.py" in names
    assert not any(name.startswith("colony_tasks/demo") for name in names)
    # Installed from the wheel alone (its dependencies from this environment), away from the
    # checkout: the server imports by its installed name.
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target)]
        + [str(wheel)],
        check=True,
        capture_output=True,
    )
    probe = "import colony_tasks.mcp_server.server as s; print(s.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(target)},
        check=True,
        capture_output=True,
        text=True,
    )
    assert Path(out.stdout.strip()).is_relative_to(target)


def test_the_checkout_holds_no_symbolic_link():
    """A link breaks checkouts without symlinks (core.symlinks=false) and shows tools the code
    twice."""
    staged = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert [line.split("\t")[1] for line in staged if line.startswith("120000")] == []


def test_the_code_imports_the_server_by_its_installed_name():
    source = "\n".join(p.read_text() for p in (ROOT / "colony_tasks").rglob("*.py"))
    tests = "\n".join(
        p.read_text() for p in (ROOT / "tests").rglob("*.py") if p.name != "test_packaging.py"
    )
    for text in (source, tests):
        assert "from mcp_server" not in text.replace("colony_tasks.mcp_server", "")
