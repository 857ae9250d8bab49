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

import anyio
import pytest

from colony_tasks.errors import Misconfigured
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


def readme_setup_sql() -> str:
    """The README's server setup block, with its two placeholder passwords filled in."""
    text = README.read_text()
    block = re.search(r"Recommended server setup.*?```sql\n(.*?)```", text, re.S)
    assert block, "the README lost its server setup block"
    sql = block.group(1)
    assert sql.count("PASSWORD '...'") == 2
    sql = sql.replace("PASSWORD '...'", f"PASSWORD '{ADMIN_PW}'", 1)
    return sql.replace("PASSWORD '...'", f"PASSWORD '{ALICE_PW}'", 1)


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
    team_server: TeamServer, repo: Path
):
    from colony_tasks import actions, sessions

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
