"""What the wheel installs: the MCP server under the project's own namespace, no demo."""

from __future__ import annotations

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


def test_the_code_imports_the_server_by_its_installed_name():
    source = "\n".join(p.read_text() for p in (ROOT / "colony_tasks").rglob("*.py"))
    tests = "\n".join(
        p.read_text() for p in (ROOT / "tests").glob("*.py") if p.name != "test_packaging.py"
    )
    for text in (source, tests):
        assert "from mcp_server" not in text.replace("colony_tasks.mcp_server", "")
