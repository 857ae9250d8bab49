"""Records: immutable tuples with typed fields, which the type checker checks as the run time
builds them (PEP 681 ``dataclass_transform`` on :class:`colony_tasks.base.models.Record`)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from colony_tasks.base.models import Lane, Observation, Record, Session, WorkItem
from colony_tasks.usecases.events import Result, ToolUse
from tests.support import ROOT

PROBE = """\
from colony_tasks.usecases.events import Result
from colony_tasks.base.models import Lane

lane = Lane(1)
result = Result(deny=True)
print(result.dney)
"""


def test_the_type_checker_refuses_a_wrong_record_constructor_and_a_misspelt_field(
    tmp_path: Path,
):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(probe),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert 'probe.py:4: error: Missing positional arguments "repo_id"' in out.stdout
    assert 'probe.py:6: error: "Result" has no attribute "dney"' in out.stdout


def lane() -> Lane:
    return Lane(1, "/r/.git", "/r", "r", "main")


def test_a_record_is_built_by_position_keyword_and_default():
    assert lane() == Lane(id=1, repo_id="/r/.git", root="/r", repo_name="r", branch="main")
    assert lane() == (1, "/r/.git", "/r", "r", "main")  # still a tuple
    result = Result(deny=True)
    assert (result.session, result.deny, result.conflicts) == (None, True, ())
    tool = ToolUse("Edit", "edit")
    assert (tool.paths, tool.command, tool.use_id) == ((), "", "")
    session = Session("s1", "claude-1", "claude", "/r", None, None, 1.0, 2.0, None)
    assert (session.machine, session.developer, session.active) == ("", "", True)


def test_a_wrong_constructor_fails_at_run_time_too():
    with pytest.raises(TypeError, match="Lane is missing the field 'repo_id'"):
        Lane(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="Result has no field"):
        Result(contxt="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="Lane takes 5 fields, got 6"):
        Lane(1, "a", "b", "c", "d", "e")  # type: ignore[call-arg]


def test_a_record_is_immutable_and_has_no_other_attributes():
    item = lane()
    with pytest.raises(AttributeError):
        item.branch = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        item.contxt = "x"  # type: ignore[attr-defined]
    assert not hasattr(item, "__dict__")


def test_replace_asdict_to_dict_and_pickle_keep_the_fields():
    item = lane()
    moved = item._replace(branch="dev")
    assert type(moved) is Lane and moved.branch == "dev" and item.branch == "main"
    assert Lane._fields == ("id", "repo_id", "root", "repo_name", "branch")
    assert item._asdict() == dict(zip(Lane._fields, item, strict=True))
    work = WorkItem(1, 2, "t", "", ["a.py"], "open", None, None, None, None, None, 1.0, None, None)
    assert work.depends_on == () and work.to_dict()["files"] == ["a.py"]
    nested = Observation(1, None, None, "note", "hi", meta={"lane": item})
    assert nested.to_dict()["meta"]["lane"]["branch"] == "main"
    assert pickle.loads(pickle.dumps(nested)) == nested
    assert repr(item) == "Lane(id=1, repo_id='/r/.git', root='/r', repo_name='r', branch='main')"


def test_fields_come_from_the_annotations_in_order_after_the_bases():
    class Point(Record):
        x: int
        y: int = 0

    class Point3(Point):
        z: int = 0

    assert Point3._fields == ("x", "y", "z") and Point3(1, z=3) == (1, 0, 3)
    assert Point3(1, 2, 3).z == 3


def test_a_record_declaration_that_cannot_work_is_refused():
    with pytest.raises(TypeError, match="'y' without a default follows one with"):

        class Bad(Record):
            x: int = 0
            y: int

    with pytest.raises(TypeError, match="declares no fields"):

        class Empty(Record):
            pass
