"""The viewer's Conflicts page and ``/api/conflicts``: whose work overlaps whose, per repository,
across branches, and the files two sessions changed without meeting."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from colony_tasks.viewer import create_app
from tests.support.regionwork import overlapping_work
from tests.viewer.test_viewer import TOKEN, XSS, text_of


@pytest.fixture
def client(store, repo: Path):
    app = create_app(store, TOKEN, human_name="alice", cwd=str(repo))
    with TestClient(app, base_url=f"http://testserver/{TOKEN}/") as test_client:
        yield test_client


@pytest.fixture
def work(store, repo: Path, tmp_path: Path, home: Path):
    return overlapping_work(store, repo, tmp_path)


def test_conflicts_page_shows_both_sides_of_an_overlap_and_a_file_changed_apart(client, work):
    a, b = work
    page = client.get("/conflicts")
    assert page.status_code == 200 and 'aria-current="page">Conflicts' in page.text
    shown = text_of(page)
    assert "1 overlapping" in shown and "1 same file, no overlap" in shown
    core = shown.split("core.py", 1)[1].split("notes.txt", 1)[0]
    assert "overlap: git will conflict" in core
    assert f"claude {a.handle} main L7-8 (in def retry)" in core
    assert f"codex {b.handle} feature L7-8 (in def retry)" in core
    notes = shown.split("notes.txt", 1)[1]
    assert "same file, no overlap" in notes and "L2" in notes and "L28" in notes
    assert page.text.count('<tbody class="conflict">') == 1
    assert client.get("/partials/conflicts").text.count('<tbody class="apart">') == 1


def test_conflicts_page_says_when_nothing_is_shared(client):
    assert "No two live sessions changed the same file." in text_of(client.get("/conflicts"))


def test_conflicts_api_gives_each_sides_branch_and_lines(client, work, tmp_path):
    [repo] = client.get("/api/conflicts").json()["repositories"]
    core, notes = repo["pairs"]
    assert (core["path"], core["meets"], notes["path"], notes["meets"]) == (
        "core.py",
        True,
        "notes.txt",
        False,
    )
    assert [s["branch"] for s in core["sides"]] == ["main", "feature"]
    assert core["sides"][1]["root"] == str(tmp_path / "feature")
    assert [s["spans"][0]["first"] for s in notes["sides"]] == [2, 28]


def test_a_branch_name_another_party_chose_is_escaped_and_fenced(client, work, store):
    store._run("UPDATE lanes SET branch = ? WHERE branch = 'feature'", (XSS + "\u202e",))
    page = client.get("/conflicts").text
    assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page and "\u202e" not in page
    assert "\u202e" not in client.get("/api/conflicts").text
