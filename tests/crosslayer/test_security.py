"""Security: claim paths stay inside the repository, secrets never reach the database bytes,
the store is private whatever the umask, and the viewer's token check and escaping hold.

The quick checks run in the default suite; the ones that start many processes carry the
``stress`` marker.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colony_tasks.base.errors import InvalidInput
from colony_tasks.base.models import Lane
from colony_tasks.domain import claims, sessions, tasks
from colony_tasks.hooks import runner
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions, records
from tests.support.hookrun import EXE, claude, codex, patch, relay_status
from tests.support.secret_corpus import CORPUS
from tests.support.stress_util import hook_job, run_together

# -- claim paths ---------------------------------------------------------------------------------


class Tree:
    """A repository with symlinks pointing out of it and one pointing inside, and its lane."""

    def __init__(self, base: Path) -> None:
        from tests.support.gitutil import make_repo

        self.repo = repo = make_repo(base / "proj")
        outside = base / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("x")
        (repo / "src").mkdir()
        (repo / "src" / "app.py").write_text("x")
        (repo / "link-dir-out").symlink_to(outside)
        (repo / "link-file-out").symlink_to(outside / "secret.txt")
        (repo / "link-etc").symlink_to("/etc")
        (repo / "link-in").symlink_to(repo / "src")
        (repo / "loop").symlink_to(repo / "loop")
        (base / "proj-evil").mkdir()  # shares the repository's name as a prefix
        self.store = Store(base / "colony.db")
        self.lane = sessions.register(self.store, "s", agent="claude", cwd=str(repo)).lane


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory):
    made = Tree(tmp_path_factory.mktemp("paths"))
    yield made
    made.store.close()


def assert_safe(rel: str, lane: Lane) -> None:
    """A normalised claim path: repo-relative, no parent steps, resolving inside the root."""
    assert rel and "\x00" not in rel
    assert not rel.startswith("/") and ".." not in rel.split("/"), rel
    assert rel != ".git" and not rel.startswith(".git/"), rel
    if not claims.is_glob(rel):
        root = os.path.realpath(lane.root)
        resolved = os.path.realpath(os.path.join(root, rel))
        assert resolved == root or resolved.startswith(root + "/"), (rel, resolved)


REJECTED = [
    "..",
    "../",
    "../outside/secret.txt",
    "src/../../outside/secret.txt",
    "src/../../../../../../etc/passwd",
    "..\\..\\etc\\passwd",
    "/etc/passwd",
    "//etc/passwd",
    "/",
    "{parent}/outside/secret.txt",
    "{parent}/proj-evil/a.py",
    "{repo}/../proj-evil/a.py",
    "link-dir-out/secret.txt",
    "link-dir-out",
    "link-file-out",
    "link-etc/passwd",
    "link-etc/../../etc/shadow",
    ".git/config",
    ".git",
    "src/../.git/hooks/pre-commit",
    "../*",
    "/etc/*",
    "src\x00/../../etc/passwd",
    "\x00",
    "a" * 5000,
    "/".join(["d"] * 2100),
    "",
    "   ",
]
SAFE = {
    "src/app.py": "src/app.py",
    "./src/./app.py": "src/app.py",
    "src//app.py": "src/app.py",
    "src/../src/app.py": "src/app.py",
    "{repo}/src/app.py": "src/app.py",
    "link-in/app.py": "src/app.py",
    "src\\app.py": "src/app.py",
    "src/*.py": "src/*.py",
    ".": "**",
    "{repo}": "**",
    "a" * 255 + ".py": "a" * 255 + ".py",
    "é/ünïcode name.py": "é/ünïcode name.py",
}


def fill(template: str, repo: Path) -> str:
    return template.replace("{repo}", str(repo)).replace("{parent}", str(repo.parent))


@pytest.mark.parametrize("path", REJECTED, ids=range(len(REJECTED)))
def test_claim_paths_leaving_the_repository_are_rejected(tree: Tree, path: str):
    with pytest.raises(InvalidInput):
        claims.normalize(fill(path, tree.repo), lane=tree.lane)


@pytest.mark.parametrize("path", list(SAFE), ids=range(len(SAFE)))
def test_claim_paths_inside_the_repository_are_normalised(tree: Tree, path: str):
    rel = claims.normalize(fill(path, tree.repo), lane=tree.lane)
    assert rel == SAFE[path]
    assert_safe(rel, tree.lane)


def test_a_symlink_loop_is_rejected_or_normalised_safely(tree: Tree):
    try:
        rel = claims.normalize("loop/x.py", lane=tree.lane)
    except InvalidInput:
        return
    assert_safe(rel, tree.lane)


SEGMENTS = ["..", ".", "", "src", "app.py", "link-in", "link-dir-out", "link-etc", "loop"]
SEGMENTS += [".git", "*", "**", "\\..", "a\x00", "x" * 300, "proj-evil", "outside"]


def test_any_composed_path_is_rejected_or_stays_inside(tree: Tree):
    lane, repo = tree.lane, tree.repo

    @settings(max_examples=300, deadline=None, database=None)
    @given(
        parts=st.lists(st.sampled_from(SEGMENTS) | st.text(max_size=8), max_size=8),
        prefix=st.sampled_from(["", "/", "{repo}/", "{parent}/", "{repo}/src/"]),
        cwd=st.sampled_from([None, "{repo}/src", "{repo}/link-in", "{parent}"]),
    )
    def check(parts: list[str], prefix: str, cwd: str | None) -> None:
        path = fill(prefix, repo) + "/".join(parts)
        try:
            rel = claims.normalize(path, lane=lane, cwd=fill(cwd, repo) if cwd else None)
        except InvalidInput:
            return
        assert_safe(rel, lane)

    check()


def test_claims_and_handoffs_through_the_core_refuse_outside_paths(tree: Tree):
    store = tree.store
    for bad in ("../x.py", "link-etc/passwd", "/etc/passwd", "a\x00b"):
        with pytest.raises(InvalidInput):
            actions.claim(store, "s", ["ok.py", bad])
        with pytest.raises(InvalidInput):
            actions.hand_off(store, "s", "take these", files=[bad])
    assert store.list_claims() == []


def run_in_process(event: str, payload: Any) -> str:
    saved = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
    sys.stdout = out = io.StringIO()
    try:
        assert runner.run([event]) == 0
    finally:
        sys.stdin, sys.stdout = saved
    return out.getvalue()


def test_hook_edits_outside_the_repository_are_neither_recorded_nor_claimed(
    home: Path, repo: Path, tmp_path: Path
):
    (repo / "link-etc").symlink_to("/etc")
    outside = [
        "/etc/passwd",
        str(repo / ".." / "x.py"),
        str(repo / "link-etc" / "hosts"),
        str(tmp_path / "proj-evil" / "a.py"),
        str(repo / ".git" / "config"),
        "../../x.py",
    ]
    for target in outside:
        payload = claude(
            "post-tool-use", "s", repo, tool_name="Write", tool_input={"file_path": target}
        )
        run_in_process("post-tool-use", payload)
        body = patch(f"*** Update File: {target}")
        payload = codex(
            "post-tool-use", "c", repo, tool_name="apply_patch", tool_input={"command": body}
        )
        run_in_process("post-tool-use", payload)
    with Store(home / "colony.db") as db:
        assert db.list_claims(include_expired=True) == []
        assert db.conn.execute("SELECT COUNT(*) FROM observation_paths").fetchone()[0] == 0
        assert db.count_observations() == 0


# -- secrets -------------------------------------------------------------------------------------


def stored_bytes(home: Path) -> bytes:
    """Every byte colony-tasks keeps: the database, its WAL and shm, and the hook logs."""
    found = b""
    for path in sorted(home.iterdir()):
        if path.is_file():
            found += path.read_bytes()
    return found


def assert_no_secret(home: Path) -> None:
    data = stored_bytes(home)
    leaked = [secret for secret, _ in CORPUS if secret.encode() in data]
    assert leaked == []


def hook_channels(repo: Path, text: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    """One secret-bearing text through a prompt, a shell command and three kinds of edit."""
    target = str(repo / "src" / f"f{n}.py")
    write = {"file_path": target, "content": text}
    edit = {"file_path": target, "old_string": "x", "new_string": text}
    body = f"*** Begin Patch\n*** Update File: src/f{n}.py\n@@\n-x\n+{text}\n*** End Patch\n"
    return [
        ("user-prompt-submit", claude("user-prompt-submit", "cl", repo, prompt=text)),
        (
            "post-tool-use",
            claude("post-tool-use", "cl", repo, tool_name="Bash", tool_input={"command": text}),
        ),
        (
            "post-tool-use",
            codex("post-tool-use", "cx", repo, tool_name="exec_command", tool_input={"cmd": text}),
        ),
        ("pre-tool-use", claude("pre-tool-use", "cl", repo, tool_name="Write", tool_input=write)),
        ("post-tool-use", claude("post-tool-use", "cl", repo, tool_name="Edit", tool_input=edit)),
        (
            "post-tool-use",
            codex(
                "post-tool-use", "cx", repo, tool_name="apply_patch", tool_input={"command": body}
            ),
        ),
    ]


def test_the_secret_corpus_has_at_least_100_cases():
    assert len(CORPUS) >= 100 and all(secret in text for secret, text in CORPUS)


CHANNELS = ["prompt", "bash", "exec_command", "write (pre)", "edit", "apply_patch"]
RECORDED_AS = {"prompt": "prompt", "bash": "command", "exec_command": "command"}
RECORDED_AS |= {"edit": "edit", "apply_patch": "edit"}


@pytest.mark.parametrize("channel", range(len(CHANNELS)), ids=CHANNELS)
def test_no_corpus_secret_reaches_the_database_through_hooks(home: Path, repo: Path, channel: int):
    (repo / "src").mkdir()
    for n, (_, text) in enumerate(CORPUS):
        run_in_process(*hook_channels(repo, text, n)[channel])
    with Store(home / "colony.db") as db:
        kinds = dict(db.conn.execute("SELECT kind, COUNT(*) FROM observations GROUP BY kind"))
    recorded = RECORDED_AS.get(CHANNELS[channel])
    assert kinds == ({recorded: len(CORPUS)} if recorded else {})  # everything was recorded...
    assert_no_secret(home)  # ...and no secret with it


def post_everything(store: Store, a: Any, b: Any, n: int, text: str) -> None:
    actions.post(store, a, text)
    asked = actions.ask(store, a, text)
    actions.answer(store, b, asked.id, text)
    actions.record_decision(store, b, text, rationale=text)
    actions.report_blocker(store, a, text, waiting_on=text)
    handoff = actions.hand_off(store, a, text, files=[f"src/x{n}.py"])
    actions.accept_handoff(store, b, handoff.id)


def claim_with_note(store: Store, a: Any, b: Any, n: int, text: str) -> None:
    actions.claim(store, a, [f"src/x{n}.py"], note=text)


CORE_CHANNELS = [
    pytest.param(post_everything, id="messages"),
    pytest.param(claim_with_note, id="claim-note"),  # claims.note was once stored unredacted
]


@pytest.mark.parametrize("write", CORE_CHANNELS)
def test_no_corpus_secret_reaches_the_database_through_the_core(home: Path, repo: Path, write):
    store = open_default()  # the corpus is one long agent-to-agent run: lift the loop guard
    (home / "settings.json").write_text('{"chains": {"loop_limit": 100000}}')
    a = sessions.register(store, "a", agent="claude", cwd=str(repo)).session
    b = sessions.register(store, "b", agent="codex", cwd=str(repo)).session
    for n, (_, text) in enumerate(CORPUS):
        write(store, a, b, n, text)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    assert_no_secret(home)


@pytest.mark.stress
def test_no_corpus_secret_reaches_the_database_through_the_console_script(home: Path, repo: Path):
    (repo / "src").mkdir()
    jobs = [
        hook_job(event, payload, home)
        for n, (_, text) in enumerate(CORPUS)
        for event, payload in hook_channels(repo, text, n)
    ]
    for start in range(0, len(jobs), 16):
        results, _ = run_together(jobs[start : start + 16])
        assert all((r.returncode, r.stderr) == (0, "") for r in results)
    assert_no_secret(home)
    print(f"{len(jobs)} hook processes carrying the {len(CORPUS)} corpus secrets")


def straddling(text: str, secret: str, limit: int) -> str:
    """``text`` padded so that a cap at ``limit`` characters cuts ``secret`` in half."""
    start = text.index(secret)
    pad = limit - 1 - start - len(secret) // 2
    return "x" * (pad - 1) + " " + text


CUT_CASES = [(s, t) for s, t in CORPUS if s in t and "<private>" not in t.lower()]


@pytest.mark.parametrize("channel", ["prompt", "command"])
def test_a_secret_cut_by_the_length_cap_is_not_stored_in_part(home: Path, repo: Path, channel: str):
    limit = records.PROMPT_CHARS if channel == "prompt" else records.COMMAND_CHARS
    halves = []
    for secret, text in CUT_CASES:
        long_text = straddling(text, secret, limit)
        if channel == "prompt":
            payload = claude("user-prompt-submit", "s", repo, prompt=long_text)
            run_in_process("user-prompt-submit", payload)
        else:
            tool = {"tool_name": "Bash", "tool_input": {"command": long_text}}
            run_in_process("post-tool-use", claude("post-tool-use", "s", repo, **tool))
        halves.append(secret[: max(8, len(secret) // 2)])
    data = stored_bytes(home)
    assert [h for h in halves if h.encode() in data] == []


# -- file modes ----------------------------------------------------------------------------------


def modes(folder: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def umask_000() -> None:
    os.umask(0)


OPEN_AND_WRITE = """
import json, os, stat, sys
from colony_tasks.base import paths
from colony_tasks.store import open_default
store = open_default()
store.add_observation("note", "hello")
paths.log("a line for the hook log")
home = paths.home()
print(json.dumps({n: stat.S_IMODE(os.stat(os.path.join(home, n)).st_mode) for n in os.listdir(home)}))
store.close()
"""


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_the_store_is_private_whatever_the_umask(home: Path, umask: int):
    """The folder 0700; the database, its WAL and shm (while open) and the hook log 0600."""
    result = subprocess.run(
        [sys.executable, "-c", OPEN_AND_WRITE],
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.umask(umask),
        env={**os.environ, "COLONY_TASKS_HOME": str(home)},
    )
    assert result.returncode == 0, result.stderr
    while_open = json.loads(result.stdout)
    assert while_open == {
        "colony.db": 0o600,
        "colony.db-wal": 0o600,
        "colony.db-shm": 0o600,
        "hooks.log": 0o600,
    }
    assert modes(home) == {".": 0o700, "colony.db": 0o600, "hooks.log": 0o600}


def test_hooks_create_a_private_store_under_umask_000(home: Path, repo: Path):
    payload = json.dumps(claude("session-start", "s", repo, source="startup")).encode()
    for raw in (payload, b"not json"):  # the second one writes the hook log
        done = subprocess.run(
            [str(EXE), "hook", "session-start"],
            input=raw,
            capture_output=True,
            preexec_fn=umask_000,
            env={**os.environ, "COLONY_TASKS_HOME": str(home)},
        )
        assert done.returncode == 0
    relay_status(home)  # the first hook started the relay: its files are there too
    # The store, its WAL and index (kept open by the relay), the log, the relay's lock, pid
    # file and socket, and the session-key secret: all private.
    assert modes(home) == {
        ".": 0o700,
        "colony.db": 0o600,
        "colony.db-wal": 0o600,
        "colony.db-shm": 0o600,
        "hooks.log": 0o600,
        "relay-local.lock": 0o600,
        "relay-local.pid": 0o600,
        "relay-local.sock": 0o600,
        "relay.log": 0o600,
        "session-secret": 0o600,  # the secret session keys derive from (colony_tasks.base.keys)
    }


def test_install_backups_are_private_under_umask_000(tmp_path: Path):
    user_home = tmp_path / "user"
    settings_file = user_home / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"model": "opus"}\n')
    settings_file.chmod(0o644)
    data = tmp_path / "data" / "colony"
    (tmp_path / "data").mkdir()
    done = subprocess.run(
        [str(EXE), "install", "--agent", "claude"],
        capture_output=True,
        text=True,
        preexec_fn=umask_000,
        cwd=tmp_path,
        env={
            **{k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")},
            "HOME": str(user_home),
            "COLONY_TASKS_HOME": str(data),
        },
    )
    assert done.returncode == 0, done.stderr
    found = modes(data)
    assert any(name.endswith(".bak") for name in found), found
    wrong = {
        name: oct(mode)
        for name, mode in found.items()
        if mode != (0o700 if (data / name).is_dir() else 0o600)
    }
    assert wrong == {}


# -- the viewer ----------------------------------------------------------------------------------

VIEWER_TOKEN = "viewer-token-" + "k3y" * 10
XSS_CORPUS = [
    "<script>alert(1)</script>",
    "<ScRiPt>alert(1)</sCrIpT>",
    "<img src=x onerror=alert(1)>",
    "<svg/onload=alert(1)>",
    '"><script>alert(1)</script>',
    "'><img src=x onerror=alert(1)>",
    '" onmouseover="alert(1)',
    "' onfocus='alert(1)' autofocus='",
    "</textarea><script>alert(1)</script>",
    "</title><script>alert(1)</script>",
    "<iframe src=javascript:alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<!--<script>alert(1)//-->",
    "<style>*{display:none}</style>",
    '<base href="//evil.example/">',
    '<meta http-equiv="refresh" content="0;url=//evil.example">',
    "&lt;b&gt;pre-escaped&lt;/b&gt;",  # must come out double-escaped
    "<scr<script>ipt>alert(1)</script>",
    "\u2028<script>alert(1)</script>\u2029",
    "{{ 7*7 }}<b>{% raw %}x{% endraw %}</b>",
]


@pytest.fixture
def viewer_world(tmp_path: Path, clock):
    """Every field the viewer renders carries an XSS payload: texts, names, paths, titles."""
    pytest.importorskip("colony_tasks.viewer")
    from colony_tasks.domain import chains
    from tests.support.gitutil import make_repo

    repo = make_repo(tmp_path / "repo <b onclick=alert(1)>'\"")
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feat/<img src=x onerror=alert(1)>\n")
    store = Store(tmp_path / "colony.db", clock=clock)
    a = sessions.register(store, "sess-a", agent="claude", cwd=str(repo)).session
    b = sessions.register(store, "sess-b", agent="codex", cwd=str(repo / XSS_CORPUS[4])).session
    human = sessions.human_session(store, XSS_CORPUS[6], str(repo))
    task_id = store.open_lane_task(a.lane_id).id
    for n, payload in enumerate(XSS_CORPUS):
        actions.post(store, a, payload)
        asked = actions.ask(store, b, payload)
        actions.answer(store, a, asked.id, payload)
        actions.record_decision(store, a, payload, rationale=payload)
        actions.report_blocker(store, b, payload, waiting_on=payload)
        actions.claim(store, a, [f"src/{n}/{payload}.py"], note=payload)
        actions.hand_off(store, b, payload, files=[f"docs/{n}/{payload}"])
        records.record_prompt(store, a, payload)
        records.record_command(store, b, payload)
        records.record_edit(store, a, [f"lib/{n}/{payload}"], tool="Edit")
    custom = tasks.create_task(store, XSS_CORPUS[0], created_by=a.id)
    chain = chains.create(store, human, XSS_CORPUS[2])
    chains.add(store, human, chain.id, b.handle, XSS_CORPUS[3])
    yield {"store": store, "repo": repo, "tasks": [task_id, custom.id, chain.id]}
    store.close()


@pytest.fixture
def viewer(viewer_world):
    from starlette.testclient import TestClient

    from colony_tasks.viewer import create_app

    app = create_app(
        viewer_world["store"],
        VIEWER_TOKEN,
        human_name=XSS_CORPUS[7],
        cwd=str(viewer_world["repo"]),
    )
    with TestClient(app) as client:
        yield client


def html_pages(viewer, tasks: list[int]) -> dict[str, str]:
    paths = ["/", "/partials/lanes", "/claims", "/partials/claims", "/sessions"]
    paths += ["/partials/sessions", "/tasks/999999"]
    for task_id in tasks:
        paths += [f"/tasks/{task_id}", f"/tasks/{task_id}?activity=1"]
    under = f"/{VIEWER_TOKEN}"  # every read needs the token: the pages live under it
    pages = {}
    for path in paths:
        response = viewer.get(under + path)
        assert response.headers["content-type"].startswith("text/html"), path
        pages[path] = response.text
    for task_id in tasks:
        live = viewer.get(f"{under}/tasks/{task_id}/live?after=0&activity=1").json()
        for key, value in live.items():
            if key.endswith("_html"):
                pages[f"/tasks/{task_id}/live {key}"] = value
    for n, payload in enumerate(XSS_CORPUS):
        pages[f"/search #{n}"] = viewer.get(f"{under}/search", params={"q": payload}).text
    return pages


class ActiveContent(HTMLParser):
    """Markup that could run script: inline or foreign scripts, handlers, script URLs."""

    FORBIDDEN = {"iframe", "object", "embed", "base", "svg", "math", "style", "frame"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: (value or "") for name, value in attrs}
        if tag in self.FORBIDDEN:
            self.found.append(f"<{tag}>")
        if tag == "script" and not values.get("src", "").startswith(f"/{VIEWER_TOKEN}/static/"):
            self.found.append(f"<script {values}>")
        if tag == "meta" and "http-equiv" in values:
            self.found.append(f"<meta {values}>")
        for name, value in values.items():
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action", "formaction") and value.strip().lower().startswith(
                ("javascript:", "data:", "vbscript:")
            ):
                self.found.append(f"<{tag} {name}={value!r}>")


def assert_escaped(pages: dict[str, str]) -> None:
    """No payload verbatim, and no markup in any page that could run script."""
    found = [(path, p) for path, text in pages.items() for p in XSS_CORPUS if p in text]
    assert found == []
    for path, text in pages.items():
        parser = ActiveContent()
        parser.feed(text)
        assert parser.found == [], path


def test_viewer_escapes_the_xss_corpus_in_every_page(viewer, viewer_world):
    pages = html_pages(viewer, viewer_world["tasks"])
    assert len(pages) > 30
    assert_escaped(pages)
    thread_page = pages[f"/tasks/{viewer_world['tasks'][0]}?activity=1"]
    assert thread_page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5  # shown, as text
    assert "&amp;lt;b&amp;gt;pre-escaped&amp;lt;/b&amp;gt;" in thread_page


def test_viewer_escapes_the_corpus_in_its_error_pages(viewer, viewer_world):
    task_id = viewer_world["tasks"][0]
    under = f"/{VIEWER_TOKEN}"
    pages = {}
    for n, payload in enumerate(XSS_CORPUS):
        fields = {"token": VIEWER_TOKEN, "text": payload, "to": payload}
        pages[f"post #{n}"] = viewer.post(f"{under}/tasks/{task_id}/post", data=fields).text
        fields = {"token": VIEWER_TOKEN, "to": payload, "prompt": payload}
        pages[f"pass #{n}"] = viewer.post(
            f"{under}/tasks/{viewer_world['tasks'][2]}/pass", data=fields
        ).text
    assert_escaped(pages)


def test_viewer_api_answers_json_that_is_never_sniffed_as_html(viewer, viewer_world):
    task_id = viewer_world["tasks"][0]
    for path in (
        "/api/tasks",
        f"/api/tasks/{task_id}",
        f"/api/tasks/{task_id}/items?activity=1",
        "/api/claims",
        "/api/sessions",
        f"/api/search?q={XSS_CORPUS[0]}",
    ):
        response = viewer.get(path)
        assert response.headers["content-type"].startswith("application/json"), path
        assert response.headers["x-content-type-options"] == "nosniff"
        response.json()


TOKEN_VARIANTS = {
    "missing": None,
    "empty": "",
    "wrong": "not-the-token",
    "prefix": VIEWER_TOKEN[:-1],
    "suffix": VIEWER_TOKEN + "x",
    "upper": VIEWER_TOKEN.upper(),
    "padded": f" {VIEWER_TOKEN} ",
    "newline": VIEWER_TOKEN + "\n",
    "unicode": VIEWER_TOKEN[:-1] + "ё",
    "long": VIEWER_TOKEN * 1000,
}


@pytest.mark.parametrize("variant", list(TOKEN_VARIANTS))
def test_viewer_refuses_every_post_without_the_exact_token(viewer, viewer_world, variant: str):
    from tests.support.helpers import snapshot

    store = viewer_world["store"]
    task_id, chain_id = viewer_world["tasks"][0], viewer_world["tasks"][2]
    given = TOKEN_VARIANTS[variant]
    before = snapshot(store)
    form = {"text": "sneaky", "to": "any", "prompt": "sneaky"}
    if given is not None:
        form["token"] = given
    header = (
        {} if given is None or "\n" in given or not given.isascii() else {"X-Colony-Token": given}
    )
    for path in (f"/tasks/{task_id}/post", f"/tasks/{chain_id}/pass"):
        assert viewer.post(path, data=form).status_code == 403, path
        assert viewer.post(path, data={"text": "sneaky"}, headers=header).status_code == 403
    api = f"/api/tasks/{task_id}/messages"
    assert viewer.post(api, json={"text": "sneaky"}, headers=header).status_code == 403
    assert viewer.post(api, json={"text": "sneaky", "token": given}).status_code == 403
    assert viewer.post(f"{api}?token={VIEWER_TOKEN}", json={"text": "sneaky"}).status_code == 403
    assert snapshot(store) == before


def test_the_viewer_sets_no_cookie_and_its_path_alone_never_authorizes_a_post(viewer, viewer_world):
    """A browser sends a 127.0.0.1 cookie to every local port: the viewer sets none. Its pages
    live under the token, and a post needs the token itself (form field or header) too."""
    from tests.support.helpers import snapshot

    store = viewer_world["store"]
    opened = viewer.get(f"/?token={VIEWER_TOKEN}", follow_redirects=False)
    assert opened.status_code == 303 and opened.headers["location"] == f"/{VIEWER_TOKEN}/"
    assert "set-cookie" not in opened.headers and not viewer.cookies
    assert viewer.get("/").status_code == 403  # nothing was left behind that grants a read
    before = snapshot(store)
    task_id = viewer_world["tasks"][0]
    under = f"/{VIEWER_TOKEN}"
    assert viewer.post(f"{under}/tasks/{task_id}/post", data={"text": "csrf"}).status_code == 403
    response = viewer.post(f"{under}/api/tasks/{task_id}/messages", json={"text": "csrf"})
    assert response.status_code == 403
    assert snapshot(store) == before


@pytest.mark.parametrize("variant", ["wrong", "prefix", "suffix", "upper", "empty"])
def test_a_wrong_token_in_the_url_sets_no_cookie_and_fills_no_form(
    viewer, viewer_world, variant: str
):
    given = TOKEN_VARIANTS[variant]
    response = viewer.get("/", params={"token": given}, follow_redirects=False)
    assert response.status_code == 403 and "set-cookie" not in response.headers
    assert not viewer.cookies
    page = viewer.get(f"/tasks/{viewer_world['tasks'][0]}")
    assert page.status_code == 403 and VIEWER_TOKEN not in page.text


@pytest.mark.parametrize("path", ["/", "/claims", "/sessions", "/search", "/tasks/1"])
def test_the_token_redirect_stays_on_the_viewer(viewer, viewer_world, path: str):
    for extra in ("", "&next=//evil.example", "&q=%2F%2Fevil.example"):
        response = viewer.get(f"{path}?token={VIEWER_TOKEN}{extra}", follow_redirects=False)
        location = response.headers["location"]
        assert location.startswith("/") and not location.startswith(("//", "/\\")), location
