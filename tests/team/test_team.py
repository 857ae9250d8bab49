"""Team mode: several machines on one PostgreSQL store, hooks through the local relay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from colony_tasks.base import backend, lanes
from colony_tasks.domain import chains
from colony_tasks.store import open_store
from colony_tasks.store.pg import translate
from colony_tasks.usecases import actions
from tests.support.gitutil import git
from tests.support.hookrun import EXE, claude, codex
from tests.support.teamutil import Machine, context, make_machines, spool, wait_for

# -- no server needed --------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Org/repo.git",
        "https://github.com/Org/repo",
        "https://user:token@GitHub.com/Org/repo.git/",
        "ssh://git@github.com:22/Org/repo.git",
        "git://github.com/Org/repo",
    ],
)
def test_every_spelling_of_one_remote_is_one_repository(url: str):
    assert lanes.normalise_remote(url) == "git:github.com/Org/repo"


@pytest.mark.parametrize("url", ["", "/srv/git/repo.git", "../repo", "file:///srv/repo.git"])
def test_local_remotes_give_no_shared_identity(url: str):
    assert lanes.normalise_remote(url) is None


def test_clones_share_a_lane_by_remote_and_keep_the_local_identity_without_one(tmp_path: Path):
    machines = make_machines(tmp_path, "postgresql://x@h/db")
    a, b = (lanes.resolve(str(m.clone)) for m in machines)
    assert a.repo_id == b.repo_id and a.branch == b.branch == "feature/search"
    assert a.repo_id.startswith(lanes.REMOTE_PREFIX) and a.root != b.root
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    git(lonely, "init", "-q")
    assert lanes.resolve(str(lonely)).repo_id == os.path.realpath(lonely / ".git")


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://alice:pa%40ss:w0rd@db.example.com:5432/team",
        "connect to postgres://alice:pa55@db/team failed",
        "postgresql://db/team?user=alice&password=pa55&sslmode=require",
    ],
)
def test_urls_are_printed_without_their_password(text: str):
    shown = backend.redact_url(text)
    assert "pa55" not in shown and "w0rd" not in shown and "***" in shown


def test_the_sqlite_dialect_is_translated_for_postgresql():
    ids = frozenset({"claims"})
    assert translate("INSERT OR IGNORE INTO r(a, b) VALUES (?, ?)", ids) == (
        "INSERT INTO r(a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        False,
    )
    assert translate("UPDATE c SET e = MAX(e, ?) WHERE x LIKE '50%' AND y = ?", ids)[0] == (
        "UPDATE c SET e = GREATEST(e, $1) WHERE x LIKE '50%' AND y = $2"
    )
    assert translate("SELECT 1 FROM v WHERE +model = ? AND n + 1 > 2", ids)[0] == (
        "SELECT 1 FROM v WHERE model = $1 AND n + 1 > 2"
    )
    assert translate("SELECT 1 FROM r CROSS JOIN observations o ON o.id = r.x", ids)[0] == (
        "SELECT 1 FROM r JOIN observations o ON o.id = r.x"
    )
    assert translate("INSERT INTO claims(a) VALUES (?)", ids) == (
        "INSERT INTO claims(a) VALUES ($1) RETURNING id",
        True,
    )
    assert translate("SELECT '?' FROM t", ids, False)[0] == "SELECT '?' FROM t"


# -- on a real PostgreSQL server ---------------------------------------------------------

pg = pytest.mark.postgres


@pg
def test_postgresql_migrates_blank_to_latest_once_and_records_each_step(pg_server):
    from colony_tasks.store.pg import PgStore
    from colony_tasks.store.pg_schema import LATEST, MIGRATIONS

    saved, pg_server.template = pg_server.template, None  # a blank database, not the template
    try:
        blank = pg_server.create_database("blank")
    finally:
        pg_server.template = saved
    store = PgStore(blank, migrate=False)
    assert store.schema_version() == 0
    assert store.pending_migrations() == [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    assert store.migrate() == [m.version for m in MIGRATIONS]
    assert store.schema_version() == LATEST
    assert [r["name"] for r in store.applied_migrations()] == [m.name for m in MIGRATIONS]
    store.close()
    again = PgStore(blank)
    assert again.migrate() == [] and again.pending_migrations() == []
    again.close()


@pg
def test_postgresql_refuses_what_the_core_would_never_write(store_pg):
    from pg8000.dbapi import DatabaseError

    lane = store_pg.upsert_lane("git:h/r", "/r", "r", "main")
    store_pg.insert_task("lane", mode="lane", lane_id=lane.id)
    with pytest.raises(DatabaseError):
        store_pg.insert_task("second open lane task", mode="lane", lane_id=lane.id)
    with pytest.raises(DatabaseError):
        store_pg._run("INSERT INTO tasks(title, status, created_at) VALUES ('t', 'completed', 0)")
    with pytest.raises(DatabaseError):
        store_pg._run("INSERT INTO tasks(title, mode, created_at) VALUES ('t', 'board', 0)")


@pg
@pytest.mark.parametrize(
    "query", ['"', "a AND (", "!!! :* & | <->", "'; DROP TABLE observations; --", "NEAR(x y)"]
)
def test_full_text_search_on_postgresql_takes_any_input(store_pg, query: str):
    from colony_tasks import search

    store_pg.add_observation("note", "retry the flaky migration; ship the search index")
    search.keyword_search(store_pg, query)  # never raises
    hits = search.keyword_search(store_pg, "migrations ship")
    assert [h.kind for h in hits] == ["note"] and "[" in hits[0].snippet


@pytest.fixture
def store_pg(pg_url):
    store = open_store(pg_url)
    yield store
    store.close()


@pytest.fixture
def machines(tmp_path: Path, pg_url: str):
    found = make_machines(tmp_path, pg_url)
    yield found
    for machine in found:
        machine.stop_relay()


@pg
def test_two_machines_share_a_lane_see_each_other_and_are_warned_before_an_edit(
    machines: list[Machine], pg_url: str
):
    laptop, runner = machines
    starts = {}
    for machine, sid, make, agent in (
        (laptop, "alice-claude", claude, "claude"),
        (laptop, "alice-codex", codex, "codex"),
        (runner, "bob-claude", claude, "claude"),
        (runner, "bob-codex", codex, "codex"),
    ):
        run = machine.hook("session-start", make("session-start", sid, machine.clone), agent)
        assert run.returncode == 0
        starts[sid] = context(run)
    store = open_store(pg_url)
    try:
        sessions = {s.id: s for s in store.list_sessions()}
        assert {s.who for s in sessions.values()} == {"alice@laptop", "bob@ci-runner-3"}
        tasks = {t.id for s in sessions for t in store.tasks_of_session(s)}
        assert len(tasks) == 1  # one lane task for both clones
        # The last to start sees the three others, the other machine's with who they are.
        last = starts["bob-codex"]
        assert f"{sessions['alice-claude'].handle} (claude, alice@laptop," in last
        assert f"{sessions['alice-codex'].handle} (codex, alice@laptop," in last
        assert f"{sessions['bob-claude'].handle} (claude, active" in last  # same machine: no who

        # Alice's Claude writes a file; Bob's Codex is warned before adding another one there
        # (git: an add/add conflict), across the two machines.
        edit = {"file_path": str(laptop.clone / "search.py"), "content": "x = 1\n"}
        (laptop.clone / "search.py").write_text("x = 1\n")
        post = claude("post-tool-use", "alice-claude", laptop.clone, tool_name="Write")
        post["tool_input"] = edit
        assert laptop.hook("post-tool-use", post).returncode == 0
        body = {"command": "*** Begin Patch\n*** Add File: search.py\n+y = 2\n*** End Patch\n"}
        warned = runner.hook(
            "pre-tool-use",
            codex(
                "pre-tool-use", "bob-codex", runner.clone, tool_name="apply_patch", tool_input=body
            ),
            "codex",
        )
        assert f"search.py L1 meets {sessions['alice-claude'].handle} (alice@laptop)'s" in context(
            warned
        )

        # A prompt on one machine shows what the other said since.
        actions.post(store, "alice-codex", "API shape decided: search(query, limit)")
        delta = runner.hook(
            "user-prompt-submit",
            claude("user-prompt-submit", "bob-claude", runner.clone, prompt="go on"),
        )
        said = context(delta)
        assert f"{sessions['alice-codex'].handle} (alice@laptop) note" in said
        assert "API shape decided" in said

        # A chain passes turns across the machines; only the holder lands a post.
        chain = chains.create(store, store.get_session("alice-claude"), "release across machines")
        for sid in ("bob-codex", "bob-claude"):
            chains.add(store, store.get_session("alice-claude"), chain.id, sid, "join")
        chains.pass_turn(
            store, store.get_session("alice-claude"), chain.id, "bob-codex", "your turn, bob"
        )
        turn = runner.hook(
            "user-prompt-submit",
            codex("user-prompt-submit", "bob-codex", runner.clone, prompt="next"),
            "codex",
        )
        assert "your turn, bob" in context(turn)
        with pytest.raises(Exception, match="turn"):
            actions.chain_say(store, "bob-claude", chain.id, "out of turn")
        actions.chain_say(store, "bob-codex", chain.id, "done on the runner")
        assert store.get_task(chain.id).turn_holder == "alice-claude"
    finally:
        store.close()


@pg
def test_a_team_hook_process_never_loads_a_database_driver(machines: list[Machine]):
    laptop = machines[0]
    payload = laptop.home.parent / "payload.json"
    payload.write_text(json.dumps(claude("session-start", "s", laptop.clone)))
    code = (
        "import json, sys\n"
        "from colony_tasks.hooks import runner\n"
        f"sys.stdin = open({str(payload)!r})\n"
        "runner.run(['session-start', '--agent', 'claude'])\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "COLONY_TASKS_HOME": str(laptop.home), **laptop.env},
        check=True,
    )
    loaded = set(json.loads(out.stderr.strip().splitlines()[-1]))
    assert not {m.split(".")[0] for m in loaded} & {"pg8000", "psycopg", "scramp", "ssl"}
    assert "colony_tasks.hooks.spool" in loaded and "colony_tasks.store.pg" not in loaded


@pg
def test_status_doctor_and_logs_never_show_the_password(machines: list[Machine], pg_server):
    laptop = machines[0]
    wrong = pg_server.url("nope", password="hunter2-wrong")
    laptop.url = wrong
    run = laptop.hook("session-start", claude("session-start", "s", laptop.clone))
    assert run.returncode == 0
    env = {**os.environ, "COLONY_TASKS_HOME": str(laptop.home), **laptop.env}
    outputs = [
        subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env)
        for args in (["doctor"], ["relay", "status"], ["migrate"], ["sessions"])
    ]
    wait_for(lambda: (laptop.home / "hooks.log").exists())
    laptop.stop_relay()
    log = (laptop.home / "hooks.log").read_text()
    assert "unreachable" in log or "Cannot reach" in log
    for text in [log, *(o.stdout + o.stderr for o in outputs)]:
        assert "hunter2-wrong" not in text
    assert "colony:***@127.0.0.1" in outputs[0].stdout + outputs[0].stderr
    assert outputs[0].returncode == 1


@pg
def test_the_relay_exits_when_idle_and_leaves_no_socket_or_pid_file(machines: list[Machine]):
    laptop = machines[0]
    laptop.extra_env["COLONY_TASKS_RELAY_IDLE"] = "0.3"
    assert laptop.hook("session-start", claude("session-start", "s", laptop.clone)).returncode == 0
    wait_for(lambda: laptop.relay_pid() is None and not laptop.key_file("pid").exists())
    assert [p for p in laptop.home.iterdir() if p.suffix == ".sock"] == []


@pg
def test_a_second_relay_for_the_same_store_exits_at_once(machines: list[Machine]):
    import fcntl

    laptop = machines[0]
    laptop.home.mkdir(parents=True, exist_ok=True)
    with open(laptop.key_file("lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as the running relay holds it
        env = {**os.environ, "COLONY_TASKS_HOME": str(laptop.home), **laptop.env}
        second = subprocess.run([sys.executable, "-m", "colony_tasks.relay"], env=env, timeout=60)
    assert second.returncode == 0
    assert not laptop.key_file("pid").exists()
    assert [p for p in laptop.home.iterdir() if p.suffix == ".sock"] == []


@pg
def test_an_event_that_keeps_failing_is_set_aside_and_shown_by_doctor(
    machines: list[Machine], pg_url: str, monkeypatch: pytest.MonkeyPatch
):
    from colony_tasks.relay.outbox import MAX_ATTEMPTS
    from colony_tasks.relay.team import TeamRelay
    from colony_tasks.usecases import events

    def broken(store, event, tool, **options):
        raise RuntimeError("a bug in a use case")

    laptop = machines[0]
    monkeypatch.setenv("COLONY_TASKS_HOME", str(laptop.home))
    monkeypatch.setattr(events, "after_tool", broken)
    relay = TeamRelay(pg_url)
    spool(relay.outbox, "bug", "post-tool-use", "claude", {"session_id": "s", "cwd": "/"})
    # Refused by the core (no session id): final, as a SQLite-mode hook logs it and goes on.
    spool(relay.outbox, "refused", "session-start", "claude", {"session_id": "", "cwd": "/"})
    good = claude("user-prompt-submit", "s", laptop.clone, prompt="still delivered")
    spool(relay.outbox, "good", "user-prompt-submit", "claude", good)
    relay.flush()
    stuck = relay.outbox.stuck()
    assert [(s["event"], s["attempts"]) for s in stuck] == [("post-tool-use", MAX_ATTEMPTS)]
    assert relay.outbox.counts()["pending"] == 0
    relay.store.close()
    relay.outbox.close()
    env = {**os.environ, "COLONY_TASKS_HOME": str(laptop.home), **laptop.env}
    doctor = subprocess.run([str(EXE), "doctor"], capture_output=True, text=True, env=env)
    assert "1 stuck" in doctor.stdout and "a bug in a use case" in doctor.stdout
    assert doctor.returncode == 1
    store = open_store(pg_url)
    assert [o.text for o in store.timeline(1)] == ["still delivered"]
    store.close()


def test_sessions_record_who_runs_them_and_one_machine_shows_no_who(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    from colony_tasks.domain import sessions
    from colony_tasks.render import briefing

    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLONY_TASKS_DEVELOPER", "alice")
    monkeypatch.setenv("COLONY_TASKS_MACHINE", "laptop")
    store = open_store(str(tmp_path / "colony.db"))
    from colony_tasks.store.base import LATEST

    assert store.schema_version() == LATEST
    sessions.register(store, "a", agent="claude", cwd=str(repo))
    joined = sessions.register(store, "b", agent="codex", cwd=str(repo))
    assert store.get_session("a").who == "alice@laptop"
    assert "alice@laptop" not in briefing.briefing(store, joined)
    monkeypatch.setenv("COLONY_TASKS_MACHINE", "ci-runner-3")
    monkeypatch.setenv("COLONY_TASKS_DEVELOPER", "bob")
    joined = sessions.register(store, "c", agent="codex", cwd=str(repo))
    assert store.get_session("c").who == "bob@ci-runner-3"
    assert "(claude, alice@laptop, active" in briefing.briefing(store, joined)
    store.close()


def test_the_viewer_shows_who_runs_each_session(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    from starlette.testclient import TestClient

    from colony_tasks.domain import sessions
    from colony_tasks.viewer import create_app

    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLONY_TASKS_DEVELOPER", "bob")
    monkeypatch.setenv("COLONY_TASKS_MACHINE", "ci-runner-3")
    store = open_store(str(tmp_path / "colony.db"))
    joined = sessions.register(store, "b", agent="codex", cwd=str(repo))
    token = "t" * 32
    app = create_app(store, token, human_name="alice", cwd=str(repo))
    with TestClient(app, base_url=f"http://testserver/{token}/") as client:  # the printed URL
        page = client.get("/sessions").text
        api = client.get("/api/sessions").json()["sessions"]
    assert joined.session.handle in page and "bob@ci-runner-3" in page
    assert {s["handle"]: s["who"] for s in api}[joined.session.handle] == "bob@ci-runner-3"
    store.close()


async def _claim_over_mcp(machine: Machine, sid: str, path: str) -> dict:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(EXE),
        args=["mcp"],
        env={**os.environ, "COLONY_TASKS_HOME": str(machine.home), **machine.env},
        cwd=str(machine.clone),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        result = await client.call_tool("claim_file", {"paths": [path], "session_id": sid})
        assert not result.is_error, result.content[0].text
        return result.structured_content


@pg
def test_claims_name_their_holder_s_developer_and_machine_everywhere_they_are_listed(
    machines: list[Machine], pg_url: str
):
    import anyio
    from starlette.testclient import TestClient

    from colony_tasks.viewer import create_app

    laptop, runner = machines
    for machine, sid in ((laptop, "alice-claude"), (runner, "bob-claude"), (runner, "bob-2")):
        assert (
            machine.hook("session-start", claude("session-start", sid, machine.clone)).returncode
            == 0
        )
    # Bob's Claude edits search.py on the runner: an automatic claim.
    post = claude("post-tool-use", "bob-claude", runner.clone, tool_name="Write")
    post["tool_input"] = {"file_path": str(runner.clone / "search.py"), "content": "x = 1\n"}
    assert runner.hook("post-tool-use", post).returncode == 0
    store = open_store(pg_url)
    try:
        bob = store.get_session("bob-claude").handle
    finally:
        store.close()
    held = f"{bob} (bob@ci-runner-3)"

    # Alice's briefing and her warning before the same edit say who and where.
    late = laptop.hook("session-start", claude("session-start", "alice-late", laptop.clone))
    assert f"Claims: {held} holds search.py" in context(late)
    pre = claude("pre-tool-use", "alice-claude", laptop.clone, tool_name="Write")
    pre["tool_input"] = {"file_path": str(laptop.clone / "search.py"), "content": "y = 2\n"}
    assert f"search.py L1 meets {held}'s change" in context(laptop.hook("pre-tool-use", pre))
    # A session on the holder's own machine, as the same developer, is not told the obvious.
    pre_bob = claude("pre-tool-use", "bob-2", runner.clone, tool_name="Write")
    pre_bob["tool_input"] = {"file_path": str(runner.clone / "search.py"), "content": "z\n"}
    warned = context(runner.hook("pre-tool-use", pre_bob))
    assert f"search.py L1 meets {bob}'s change" in warned and "bob@" not in warned

    # The MCP server: claiming a held file names the holder and who runs it.
    claimed = anyio.run(_claim_over_mcp, laptop, "alice-claude", "search.py")
    # (his claim and his edit of the file)
    assert {(c["by"], c.get("who")) for c in claimed["conflicts"]} == {(bob, "bob@ci-runner-3")}

    # `colony-tasks claims`, as a table and as JSON.
    env = {**os.environ, "COLONY_TASKS_HOME": str(laptop.home), **laptop.env}
    table = subprocess.run([str(EXE), "claims"], capture_output=True, text=True, env=env)
    row = next(line for line in table.stdout.splitlines() if line.startswith("search.py"))
    assert row.split()[:3] == ["search.py", bob, "bob@ci-runner-3"]
    listed = json.loads(
        subprocess.run(
            [str(EXE), "claims", "--json"], capture_output=True, text=True, env=env
        ).stdout
    )
    assert {(c["holder"], c["who"]) for c in listed} == {
        (bob, "bob@ci-runner-3"),
        (store_handle(pg_url, "alice-claude"), "alice@laptop"),
    }

    # The viewer's claims page and its API.
    store = open_store(pg_url)
    try:
        token = "t" * 32
        app = create_app(store, token, human_name="carol", cwd=str(laptop.clone))
        with TestClient(app, base_url=f"http://testserver/{token}/") as client:
            page = client.get("/claims").text
            api = client.get("/api/claims").json()
    finally:
        store.close()
    assert "bob@ci-runner-3" in page and "alice@laptop" in page
    assert "bob@ci-runner-3" in json.dumps(api)


def store_handle(url: str, session_id: str) -> str:
    store = open_store(url)
    try:
        return store.get_session(session_id).handle
    finally:
        store.close()
