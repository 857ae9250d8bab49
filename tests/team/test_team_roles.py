"""The README's team setup, for real: TLS only, one role per developer, the owner migrates.

A PostgreSQL server of its own (TLS on, a throwaway CA made with ``openssl``, ``hostssl``
lines only) gets exactly the SQL of the README's "Recommended server setup" through psql;
then the owner role migrates and a developer role runs hooks, the MCP server and the CLI,
while what the README says a developer cannot do is refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import anyio
import pytest

from colony_tasks.base.errors import Misconfigured
from colony_tasks.store import open_store
from colony_tasks.store.pg import StoreUnavailable, connect
from tests.support import ROOT
from tests.support.hookrun import EXE, claude
from tests.support.pgserver import PgServer, make_certificates, psql, require_tls
from tests.support.teamutil import Machine, context, make_machines, wait_for

pytestmark = pytest.mark.postgres

README = ROOT / "README.md"
ADMIN_PW = "admin-Pw-7f3a"
ALICE_PW = "alice-Pw-91bc"
BOB_PW = "bob-Pw-3e07"


def readme_setup_sql() -> str:
    """The README's server setup block, with its two placeholder passwords filled in."""
    text = README.read_text()
    block = re.search(r"Recommended server setup.*?```sql\n(.*?)```", text, re.S)
    assert block, "the README lost its server setup block"
    sql = block.group(1)
    assert sql.count("PASSWORD '...'") == 3
    for password in (ADMIN_PW, ALICE_PW, BOB_PW):
        sql = sql.replace("PASSWORD '...'", f"PASSWORD '{password}'", 1)
    return sql


class TeamServer:
    def __init__(self, server: PgServer, certs: dict[str, str]) -> None:
        self.server, self.certs = server, certs

    def url(self, role: str, password: str, sslmode: str = "verify-full", **params: str) -> str:
        query = {"sslmode": sslmode, **params}
        if sslmode == "verify-full" and "sslrootcert" not in params:
            query["sslrootcert"] = self.certs["ca"]
        return (
            f"postgresql://{role}:{password}@127.0.0.1:{self.server.port}/colony_team?"
            + urllib.parse.urlencode(query)
        )

    @property
    def admin(self) -> str:
        return self.url("colony_admin", ADMIN_PW)

    @property
    def alice(self) -> str:
        return self.url("alice_laptop", ALICE_PW)

    @property
    def bob(self) -> str:
        return self.url("bob_desktop", BOB_PW)


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory):
    bindir = PgServer.find()
    if bindir is None:
        pytest.skip("PostgreSQL binaries are not installed (run `make postgres`)")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl binary is not installed (TLS certificates are made with it)")
    certs = make_certificates(str(tmp_path_factory.mktemp("tls")))
    server = PgServer(bindir)
    require_tls(server, certs["cert"], certs["key"])
    server.start()
    try:
        done = psql(server, readme_setup_sql())
        assert done.returncode == 0, done.stderr
        yield TeamServer(server, certs)
    finally:
        server.destroy()


def test_the_team_store_is_reached_over_tls_only_and_with_the_team_s_ca(
    team_server: TeamServer, tmp_path: Path
):
    for url in (team_server.alice, team_server.url("alice_laptop", ALICE_PW, "require")):
        conn = connect(url)
        try:
            cursor = conn.cursor()
            cursor.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            assert cursor.fetchone()[0] is True
        finally:
            conn.close()
    # No TLS: the server has no line for it. Another CA: the client refuses the server.
    other = make_certificates(str(tmp_path / "other"))
    for url, reason in (
        (team_server.url("alice_laptop", ALICE_PW, "disable"), "no encryption"),
        (team_server.url("alice_laptop", ALICE_PW, sslrootcert=other["ca"]), "CERTIFICATE"),
    ):
        with pytest.raises(StoreUnavailable, match=reason) as refused:
            connect(url)
        assert ALICE_PW not in str(refused.value)
    # A misspelt mode is an error, not a quiet "TLS if offered, unverified".
    with pytest.raises(Misconfigured, match="Unknown sslmode 'verify_full'") as misspelt:
        connect(team_server.url("alice_laptop", ALICE_PW, "verify_full"))
    assert ALICE_PW not in str(misspelt.value)


def cli(machine: Machine, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLONY_TASKS_HOME": str(machine.home), **machine.env}
    return subprocess.run(
        [str(EXE), *args], capture_output=True, text=True, env=env, cwd=machine.clone
    )


def recorded(url: str) -> list[tuple[str, str]]:
    store = open_store(url)
    try:
        return [tuple(r) for r in store._all("SELECT kind, text FROM observations ORDER BY id")]
    finally:
        store.close()


async def _mcp_as(machine: Machine, sid: str) -> dict:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(EXE),
        args=["mcp"],
        env={**os.environ, "COLONY_TASKS_HOME": str(machine.home), **machine.env},
        cwd=str(machine.clone),
    )
    out = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        for name, args in (
            ("task_post", {"content": "alice's MCP note"}),
            ("claim_file", {"paths": ["notes.md"]}),
            ("ask_question", {"question": "who reviews the TLS setup?"}),
            ("record_decision", {"decision": "roles per developer"}),
            ("search", {"query": "TLS setup"}),
            ("task_timeline", {}),
        ):
            result = await client.call_tool(name, {**args, "session_id": sid})
            assert not result.is_error, (name, result.content[0].text)
            out[name] = result.structured_content
    return out


def test_a_developer_role_waits_for_the_owner_s_migration_then_uses_every_front_end(
    team_server: TeamServer, tmp_path: Path
):
    laptop = make_machines(tmp_path, team_server.alice, names=("laptop",))[0]
    try:
        # Before the owner migrates, the developer's events wait in the outbox, and doctor
        # says why (a member may not create the schema).
        started = laptop.hook("session-start", claude("session-start", "s1", laptop.clone))
        assert started.returncode == 0
        said = laptop.hook(
            "user-prompt-submit", claude("user-prompt-submit", "s1", laptop.clone, prompt="p1")
        )
        assert said.returncode == 0
        told = context(started) + context(said)
        assert told.count("team store is unreachable") == 1  # told once, whichever came first
        doctor = cli(laptop, "doctor")
        assert doctor.returncode == 1 and "permission denied" in doctor.stdout + doctor.stderr
        assert ALICE_PW not in doctor.stdout + doctor.stderr

        owner = cli(laptop, "migrate")  # as the developer: refused, the schema is the owner's
        assert owner.returncode != 0 and "permission denied" in owner.stdout + owner.stderr
        laptop.url = team_server.admin
        assert cli(laptop, "migrate").returncode == 0
        laptop.url = team_server.alice

        # The spooled events arrive; hooks, the MCP server and the CLI all work as alice.
        post = claude("post-tool-use", "s1", laptop.clone, tool_name="Write")
        post["tool_input"] = {"file_path": str(laptop.clone / "tls.md"), "content": "x\n"}
        edited = laptop.hook("post-tool-use", post)
        assert edited.returncode == 0
        wait_for(lambda: ("prompt", "p1") in recorded(team_server.admin), timeout=60)
        wait_for(lambda: "edit" in {k for k, _ in recorded(team_server.admin)}, timeout=60)
        back = laptop.hook(
            "user-prompt-submit", claude("user-prompt-submit", "s1", laptop.clone, prompt="p2")
        )
        # Told once, at whichever hook came after the relay reached the store again.
        assert (context(edited) + context(back)).count("reachable again") == 1
        mcp = anyio.run(_mcp_as, laptop, "s1")
        assert mcp["claim_file"]["granted"][0]["pattern"] == "notes.md"
        assert mcp["ask_question"]["id"] in [h["id"] for h in mcp["search"]["hits"]]
        for args in (["sessions"], ["claims"], ["tasks"], ["embed"], ["search", "TLS"]):
            run = cli(laptop, *args)
            assert run.returncode == 0, (args, run.stderr)
        assert json.loads(cli(laptop, "doctor", "--json").stdout)  # runs as a member too
        kinds = [kind for kind, _ in recorded(team_server.admin)]
        for kind in ("prompt", "edit", "note", "claim", "question", "decision"):
            assert kind in kinds
    finally:
        laptop.stop_relay()


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE TABLE sneaky (id INTEGER)",
        "DROP TABLE observations",
        "ALTER TABLE sessions ADD COLUMN sneaky TEXT",
        "TRUNCATE observations",
        "DROP INDEX IF EXISTS observations_pkey",
        "CREATE ROLE mallory LOGIN",
    ],
)
def test_a_developer_role_cannot_change_the_schema(team_server: TeamServer, statement: str):
    open_store(team_server.admin).close()  # migrated by the owner
    conn = connect(team_server.alice)
    try:
        with pytest.raises(Exception, match="permission denied|must be owner"):
            conn.cursor().execute(statement)
    finally:
        conn.close()


def test_a_developer_added_later_works_and_other_roles_of_the_server_stay_out(
    team_server: TeamServer, repo: Path, home: Path
):
    from colony_tasks.domain import sessions
    from colony_tasks.usecases import actions

    open_store(team_server.admin).close()  # migrated by the owner
    later = re.search(r"`(CREATE ROLE bob_ci LOGIN PASSWORD '\.\.\.' IN ROLE colony_members;)`",
                      README.read_text())  # fmt: skip
    assert later, "the README no longer says how to add a developer"
    sql = later.group(1).replace("'...'", "'bob-Pw-5d2e'")
    sql += "\nCREATE ROLE outsider LOGIN PASSWORD 'out-Pw-0c4f';"
    done = psql(team_server.server, sql)
    assert done.returncode == 0, done.stderr
    store = open_store(team_server.url("bob_ci", "bob-Pw-5d2e"))
    try:
        bob = sessions.register(store, "bob-1", agent="codex", cwd=str(repo)).session
        posted = actions.post(store, bob, "bob joined the team store")
        assert store.get_observations([posted.id])[0].text == "bob joined the team store"
    finally:
        store.close()
    with pytest.raises(StoreUnavailable, match="permission denied for database"):
        connect(team_server.url("outsider", "out-Pw-0c4f"))


# -- least privilege: what a member can and cannot do to what is not its own ---------------


class Crew:
    """Two members' stores and sessions on the README's server: alice (two sessions, a
    prompt, a question to her own second session, a decision, a claim, a taken work item)
    and bob, the hostile one."""

    def __init__(self, team_server: TeamServer, repo: Path, tag: str) -> None:
        from colony_tasks.domain import sessions
        from colony_tasks.usecases import actions

        open_store(team_server.admin).close()  # migrated by the owner
        self.server = team_server
        self.alice = open_store(team_server.alice)
        self.bob = open_store(team_server.bob)
        self.a = sessions.register(self.alice, f"a-{tag}", agent="claude", cwd=str(repo)).session
        self.a2 = sessions.register(self.alice, f"a2-{tag}", agent="codex", cwd=str(repo)).session
        self.b = sessions.register(self.bob, f"b-{tag}", agent="claude", cwd=str(repo)).session
        lane_task = actions.lane_task_of(self.alice, str(repo)).id
        self.task = lane_task
        self.prompt = self.alice.add_observation(
            "prompt", f"alice's plan {tag}", session_id=self.a.id, task_id=lane_task
        )
        self.question = actions.ask(self.alice, self.a, "which port?", to=self.a2.handle).id
        self.decision = actions.record_decision(self.alice, self.a, "TLS only").id
        self.claim = actions.claim(self.alice, self.a, [f"src/{tag}.py"]).granted[0]["id"]
        planned = actions.plan_work(self.alice, self.a, [{"title": "docs", "files": ["d.md"]}])
        self.item = planned.ids[0]
        actions.take_work(self.alice, self.a, self.item)
        self.bob_question = actions.ask(self.bob, self.b, "who owns CI?").id

    def ids(self) -> dict[str, Any]:
        return {
            "a": self.a.id,
            "a2": self.a2.id,
            "b": self.b.id,
            "task": self.task,
            "prompt": self.prompt,
            "question": self.question,
            "decision": self.decision,
            "claim": self.claim,
            "item": self.item,
            "bob_question": self.bob_question,
        }

    def close(self) -> None:
        self.alice.close()
        self.bob.close()


@pytest.fixture
def crew(team_server: TeamServer, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import uuid

    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "home"))
    made = Crew(team_server, repo, uuid.uuid4().hex[:8])
    yield made
    made.close()


REFUSED = "Refused by the team store|permission denied|must be owner|must be superuser"

#: What a hostile member (bob) attempts on the README's server, and the outcome:
#: "refused" (the server raises), "hidden" (no row comes back), "allowed" (what a member can
#: still do: reading the shared record, holding the lock, the shared caches).
ATTEMPTS = [
    ("read others' prompts", "SELECT text FROM observations WHERE id = {prompt}", "allowed"),
    ("read others' session keys", "SELECT * FROM session_keys WHERE session_id = '{a}'", "hidden"),
    (
        "read any session key but its own",
        "SELECT k.* FROM session_keys k JOIN sessions s ON s.id = k.session_id"
        " WHERE s.owner <> current_user",
        "hidden",
    ),  # fmt: skip
    (
        "post as another developer",
        "INSERT INTO observations(session_id, task_id, kind, text, created_at)"
        " VALUES ('{a}', {task}, 'note', 'I resign', 0)",
        "refused",
    ),
    ("become the human", "UPDATE sessions SET agent = 'human' WHERE id = '{a}'", "refused"),
    (
        "make its own session human",
        "UPDATE sessions SET agent = 'human' WHERE id = '{b}'",
        "refused",
    ),  # fmt: skip
    (
        "take over a session",
        "UPDATE sessions SET owner = 'bob_desktop' WHERE id = '{a}'",
        "refused",
    ),  # fmt: skip
    (
        "pose as alice by name",
        "UPDATE sessions SET developer = 'alice_laptop' WHERE id = '{b}'",
        "refused",
    ),  # fmt: skip
    (
        "register a session owned by alice",
        "INSERT INTO sessions(id, handle, agent, started_at, last_seen_at, owner, developer)"
        " VALUES ('forged-{a}', 'forged-{a}', 'claude', 0, 0, 'alice_laptop', 'alice_laptop')",
        "owner-forced",
    ),
    ("end another's session", "UPDATE sessions SET ended_at = 1 WHERE id = '{a}'", "refused"),
    ("delete another's session", "DELETE FROM sessions WHERE id = '{a}'", "refused"),
    ("delete the migration record", "DELETE FROM schema_migrations", "refused"),
    ("forge a migration record", "INSERT INTO schema_migrations VALUES (99, 'x', 0)", "refused"),
    ("truncate the migration record", "TRUNCATE schema_migrations", "refused"),
    (
        "release another's claim",
        "UPDATE claims SET released_at = 1 WHERE id = {claim}",
        "refused",
    ),  # fmt: skip
    (
        "steal another's claim",
        "UPDATE claims SET session_id = '{b}' WHERE id = {claim}",
        "refused",
    ),  # fmt: skip
    ("delete claims", "DELETE FROM claims WHERE id = {claim}", "refused"),
    (
        "claim in another's name",
        "INSERT INTO claims(session_id, repo_id, pattern, created_at, renewed_at, expires_at)"
        " VALUES ('{a}', 'r', 'x', 0, 0, 9e9)",
        "refused",
    ),  # fmt: skip
    (
        "rewrite a decision",
        "UPDATE observations SET text = 'no TLS' WHERE id = {decision}",
        "refused",
    ),  # fmt: skip
    ("delete the record", "DELETE FROM observations WHERE id = {decision}", "refused"),
    (
        "answer in another's name",
        "UPDATE observations SET status = 'answered', resolved_by = '{a}' WHERE id = {question}",
        "refused",
    ),
    (
        "answer what is addressed to someone else",
        "UPDATE observations SET status = 'answered', resolved_by = '{b}' WHERE id = {question}",
        "refused",
    ),
    (
        "mark its own question answered by another",
        "UPDATE observations SET status = 'answered', resolved_by = '{a}'"
        " WHERE id = {bob_question}",
        "refused",
    ),
    (
        "plan an item already taken by another",
        "INSERT INTO work_items(task_id, title, state, owner, created_by, created_at)"
        " VALUES ({task}, 'x', 'taken', '{a}', '{b}', 0)",
        "refused",
    ),
    (
        "steal a taken work item",
        "UPDATE work_items SET owner = '{b}' WHERE id = {item}",
        "refused",
    ),  # fmt: skip
    (
        "rewrite a work item",
        "UPDATE work_items SET title = 'nothing' WHERE id = {item}",
        "refused",
    ),  # fmt: skip
    (
        "finish another's item",
        "UPDATE work_items SET state = 'done' WHERE id = {item}",
        "refused",
    ),  # fmt: skip
    ("delete a work item", "DELETE FROM work_items WHERE id = {item}", "refused"),
    ("close another's task", "UPDATE tasks SET status = 'done' WHERE id = {task}", "refused"),
    (
        "reset another's delivery cursor",
        "UPDATE participants SET cursor = 0 WHERE session_id = '{a}'",
        "refused",
    ),  # fmt: skip
    (
        "mark another's messages delivered",
        "UPDATE recipients SET state = 'delivered' WHERE session_id = '{a2}'",
        "refused",
    ),  # fmt: skip
    ("rename a lane", "UPDATE lanes SET repo_name = 'evil'", "refused"),
    ("switch the guards off", "SET session_replication_role = replica", "refused"),
    ("drop a guard", "ALTER TABLE observations DISABLE TRIGGER colony_guard", "refused"),
    (
        "shadow sessions with a temporary table",
        "CREATE TEMP TABLE sessions (id TEXT, owner TEXT, handle TEXT, agent TEXT);"
        " INSERT INTO sessions VALUES ('{a}', current_user, 'x', 'claude');"
        " INSERT INTO observations(session_id, task_id, kind, text, created_at)"
        " VALUES ('{a}', {task}, 'note', 'I resign', 0)",
        "refused",
    ),
    ("hold the write lock", "SELECT pg_advisory_lock(x'636F6C6F6E79'::bigint)", "allowed"),
    ("empty the search vectors", "DELETE FROM vectors", "allowed"),
    ("empty the hook-dedupe fingerprints", "DELETE FROM hook_events", "allowed"),
]


@pytest.mark.parametrize(("attempt", "sql", "outcome"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
def test_a_hostile_member_changes_nothing_that_is_not_its_own(
    crew: Crew, attempt: str, sql: str, outcome: str
):
    before = _alice_state(crew)
    conn = connect(crew.server.bob)
    try:
        cursor = conn.cursor()
        if outcome == "refused":
            with pytest.raises(Exception, match=REFUSED):
                if ";" in sql:  # a script: the simple query protocol
                    conn.execute_simple(sql.format(**crew.ids()))
                else:
                    cursor.execute(sql.format(**crew.ids()))
        else:
            cursor.execute(sql.format(**crew.ids()))
            rows = list(cursor.fetchall()) if cursor.description else []
            if outcome == "hidden":
                assert rows == []
            elif outcome == "owner-forced":
                cursor.execute("SELECT owner, developer FROM sessions WHERE id = 'forged-{a}'"
                               .format(**crew.ids()))  # fmt: skip
                assert [list(r) for r in cursor.fetchall()] == [["bob_desktop", "bob_desktop"]]
    finally:
        conn.close()  # also lets go of the lock "hold the write lock" took
    assert _alice_state(crew) == before


def _alice_state(crew: Crew) -> list[Any]:
    """Everything of alice's the attempts aim at, read as the admin."""
    store = open_store(crew.server.admin)
    try:
        ids = crew.ids()
        return [
            [tuple(r) for r in store._all(sql, params)]
            for sql, params in (
                (
                    "SELECT id, agent, owner, developer, ended_at FROM sessions WHERE owner ="
                    " 'alice_laptop' ORDER BY id",
                    (),
                ),  # fmt: skip
                ("SELECT key_hash FROM session_keys WHERE session_id = ?", (ids["a"],)),
                ("SELECT version FROM schema_migrations ORDER BY version", ()),
                ("SELECT session_id, released_at FROM claims WHERE id = ?", (ids["claim"],)),
                (
                    "SELECT id, text, status, resolved_by FROM observations WHERE session_id = ?"
                    " ORDER BY id",
                    (ids["a"],),
                ),  # fmt: skip
                ("SELECT title, state, owner FROM work_items WHERE id = ?", (ids["item"],)),
                ("SELECT status FROM tasks WHERE id = ?", (ids["task"],)),
                ("SELECT cursor FROM participants WHERE session_id = ?", (ids["a"],)),
                ("SELECT state FROM recipients WHERE session_id = ?", (ids["a2"],)),
                ("SELECT repo_name FROM lanes ORDER BY id", ()),
            )
        ]
    finally:
        store.close()


def test_the_attempt_table_lists_every_thing_a_hostile_member_can_still_do():
    outcomes = [outcome for _, _, outcome in ATTEMPTS]
    # Reading the shared (redacted) record, holding the write lock (a delay: calls wait and
    # name the holder) and emptying two caches the core rebuilds: nothing of another's changes.
    assert [a for a, _, o in ATTEMPTS if o == "allowed"] == [
        "read others' prompts",
        "hold the write lock",
        "empty the search vectors",
        "empty the hook-dedupe fingerprints",
    ]
    assert set(outcomes) == {"refused", "hidden", "owner-forced", "allowed"}


def test_the_core_s_cross_developer_steps_pass_the_server_s_rules_and_nothing_else(crew: Crew):
    from colony_tasks.base.errors import NotAllowed
    from colony_tasks.usecases import actions

    alice, bob, a, b = crew.alice, crew.bob, crew.a, crew.b
    # A question addressed to bob: bob answers it.
    asked = actions.ask(alice, a, "which port?", to=b.handle).id
    assert actions.answer(bob, b, asked, "5432").ok
    # A handoff to bob of a file alice holds: accepting it moves alice's claim to bob.
    actions.claim(alice, a, ["handed.py"])
    handed = actions.hand_off(alice, a, "take handed.py", to=b.handle, files=["handed.py"]).id
    assert [c["pattern"] for c in actions.accept_handoff(bob, b, handed).claims] == ["handed.py"]
    assert "handed.py" not in [c["pattern"] for c in alice.list_claims(session_id=a.id)]
    # A ready item alice planned: bob takes it and finishes it; alice, its planner, takes
    # back another one bob took (bob's claims on its files are released by alice).
    first, second = actions.plan_work(
        alice, a, [{"title": "one", "files": ["one.py"]}, {"title": "two", "files": ["two.py"]}]
    ).ids
    assert actions.take_work(bob, b, first).item.owner == b.id
    assert actions.finish_work(bob, b, first, "shipped").item.state == "done"
    actions.take_work(bob, b, second)
    assert actions.reassign_work(alice, a, second, a.handle).owner == a.id
    assert "two.py" not in [c["pattern"] for c in bob.list_claims(session_id=b.id)]
    # A chain alice coordinates: bob speaks on his turn, which goes back to alice.
    chain = actions.chain_create(alice, a, "review").chain_id
    actions.chain_add(alice, a, chain, b.handle, "your turn")
    actions.chain_say(bob, b, chain, "looks good")
    assert actions.chain_show(alice, chain)[0].turn_holder == a.handle
    # A blocker alice reported, waiting on bob: bob resolves it (the core's rule: its
    # reporter, the session it waits on, a coordinator or a human). Alice's lapsed claim: bob's
    # sweep ends it.
    blocker = actions.report_blocker(alice, a, "CI is red", waiting_on=b.handle).id
    actions.resolve_blocker(bob, b, blocker, "fixed the runner")
    actions.claim(alice, a, ["lapsed.py"])
    alice.cap_claims(a.id, alice.now() - 1)
    assert bob.release_expired_claims() >= 1
    assert alice.list_claims(session_id=a.id) == []
    # What the core would refuse anyway, the server refuses too when the core is bypassed:
    # bob's store acting as alice's session.
    with pytest.raises(NotAllowed, match="Refused by the team store"):
        actions.post(bob, a, "speaking for alice")
    with pytest.raises(NotAllowed, match="Refused by the team store"):
        actions.claim(bob, a, ["hers.py"])


def test_a_member_cannot_use_another_member_s_session_key(crew: Crew):
    from colony_tasks.base.errors import NotAllowed
    from colony_tasks.domain import identity

    credential = identity.credential(crew.alice, crew.a)  # what alice's briefing shows
    assert credential and credential.split(":")[1] not in str(
        crew.alice._all("SELECT key_hash FROM session_keys")
    )
    # Bob has no key to read, and his store cannot confirm alice's key (the hash is hers).
    assert crew.bob.session_key_hash(crew.a.id) is None
    with pytest.raises(NotAllowed, match="Cannot confirm"):
        identity.agent_caller(crew.bob, credential, pids=[])
    assert identity.agent_caller(crew.alice, credential, pids=[]).id == crew.a.id


def test_migrate_repairs_a_damaged_migration_record(team_server: TeamServer, tmp_path: Path):
    from colony_tasks.store.pg_schema import LATEST

    laptop = make_machines(tmp_path, team_server.admin, names=("laptop",))[0]
    open_store(team_server.admin).close()
    admin = connect(team_server.admin)
    try:
        admin.cursor().execute("DELETE FROM schema_migrations")
    finally:
        admin.close()
    run = cli(laptop, "migrate")
    assert run.returncode == 0, run.stderr
    store = open_store(team_server.admin, migrate=False)
    try:
        assert store.pending_migrations() == [] and store.schema_version() == LATEST
    finally:
        store.close()
    # A member never gets that far: the record is the admin's.
    member = connect(team_server.alice)
    try:
        with pytest.raises(Exception, match="permission denied"):
            member.cursor().execute("DELETE FROM schema_migrations")
    finally:
        member.close()


LOCK_SQL = "SELECT pg_advisory_lock(x'636F6C6F6E79'::bigint)"


def test_a_held_write_lock_makes_a_transaction_wait_then_name_its_holder(crew: Crew):
    from colony_tasks.base.errors import StoreBusy
    from colony_tasks.usecases import actions

    holder = connect(crew.server.bob)
    try:
        holder.cursor().execute(LOCK_SQL)
        waits: list[str] = []
        crew.alice.on_lock_wait = waits.append  # type: ignore[method-assign]
        crew.alice.lock_patience = 2.5
        with pytest.raises(StoreBusy, match="role bob_desktop holds its write lock") as busy:
            actions.post(crew.alice, crew.a, "while bob holds the lock")
        assert "try again" in str(busy.value) and ALICE_PW not in str(busy.value)
        assert waits and all("bob_desktop" in w for w in waits)  # told at each attempt
    finally:
        holder.close()
    # The connection is usable again, and the post goes through once the lock is free.
    assert actions.post(crew.alice, crew.a, "after bob let go").id


async def _post_while_locked(machine: Machine, credential: str, holder: Any, errlog: Path):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(EXE),
        args=["mcp"],
        env={**os.environ, "COLONY_TASKS_HOME": str(machine.home), **machine.env},
        cwd=str(machine.clone),
    )
    with errlog.open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()  # a new server starts while the lock is held
            result = {}

            async def call() -> None:
                result["post"] = await client.call_tool(
                    "task_post", {"content": "posted after the wait", "session_id": credential}
                )

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                # Let go once the server has said it waits for bob (no fixed delay).
                while "holds its write lock" not in errlog.read_text():
                    await anyio.sleep(0.05)
                holder.cursor().execute("SELECT pg_advisory_unlock_all()")
            return result["post"]


def test_a_held_write_lock_makes_mcp_calls_wait_with_a_message_and_never_end_the_server(
    crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from colony_tasks.domain import identity, sessions

    laptop = make_machines(tmp_path, crew.server.alice, names=("laptop",))[0]
    monkeypatch.setenv("COLONY_TASKS_HOME", str(laptop.home))  # keys derive on alice's machine
    # Sessions of earlier tests whose hooks ran under this process would be found by ancestry.
    admin = open_store(crew.server.admin)
    admin._run("UPDATE sessions SET ended_at = 1 WHERE agent_pid IS NOT NULL")
    admin.close()
    me = sessions.register(crew.alice, f"mcp-{crew.a.id}", agent="codex", cwd=str(laptop.clone))
    credential = identity.credential(crew.alice, me.session)
    assert credential
    holder = connect(crew.server.bob)
    try:
        holder.cursor().execute(LOCK_SQL)
        errlog = tmp_path / "mcp-stderr.log"
        posted = anyio.run(_post_while_locked, laptop, credential, holder, errlog)
    finally:
        holder.close()
    assert not posted.is_error, posted.content[0].text
    assert "role bob_desktop holds its write lock" in errlog.read_text()
    assert ("note", "posted after the wait") in recorded(crew.server.admin)


def test_the_guards_do_not_trust_a_member_s_temporary_tables(crew: Crew):
    # The README's setup already refuses members temporary tables; a server that grants them
    # (PostgreSQL's default) still cannot fool the guards, whose search_path is fixed.
    done = psql(crew.server.server, "GRANT TEMP ON DATABASE colony_team TO bob_desktop;")
    assert done.returncode == 0, done.stderr
    conn = connect(crew.server.bob)
    try:
        conn.execute_simple(
            "CREATE TEMP TABLE sessions (id TEXT, owner TEXT, handle TEXT, agent TEXT);"
            f" INSERT INTO sessions VALUES ('{crew.a.id}', current_user, 'x', 'claude')"
        )
        with pytest.raises(Exception, match="Refused by the team store"):
            conn.cursor().execute(
                "INSERT INTO observations(session_id, task_id, kind, text, created_at)"
                f" VALUES ('{crew.a.id}', {crew.task}, 'note', 'I resign', 0)"
            )
    finally:
        conn.close()
        psql(crew.server.server, "REVOKE TEMP ON DATABASE colony_team FROM bob_desktop;")


def test_doctor_repairs_run_by_a_member_end_only_its_own_silent_sessions(crew: Crew):
    from colony_tasks.install import doctor

    admin = open_store(crew.server.admin)
    try:
        admin._run(
            "UPDATE sessions SET last_seen_at = 0 WHERE id IN (?, ?)", (crew.a.id, crew.b.id)
        )
    finally:
        admin.close()
    done = doctor.repair(crew.alice)
    assert crew.alice.get_session(crew.a.id).ended_at is not None
    assert crew.alice.get_session(crew.b.id).ended_at is None
    assert any("silent sessions of other team members" in line for line in done), done
