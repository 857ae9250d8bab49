"""Process ancestry (:mod:`colony_tasks.base.procs`): the agent a hook or a CLI runs under, through
real process trees (an agent-like parent, a wrapping shell)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from colony_tasks.base import procs

pytestmark = pytest.mark.skipif(not procs.has_proc(), reason="reads /proc (Linux)")

PROBE = "from colony_tasks.base import procs; print(procs.agent_pid(), procs.ancestors())"


def run_under(shell: bool) -> tuple[int, list[int], int]:
    """Run the probe as the child of a python 'agent' (through ``sh -c`` when ``shell``);
    (agent_pid, ancestors, the agent's pid) as the probe saw them."""
    inner = [sys.executable, "-c", PROBE]
    command = ["sh", "-c", " ".join(inner[:2]) + f' "{PROBE}"; true'] if shell else inner
    agent = textwrap.dedent(
        f"""
        import os, subprocess, sys
        out = subprocess.run({command!r}, capture_output=True, text=True, check=True).stdout
        print(os.getpid(), out)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", agent], capture_output=True, text=True, check=True
    ).stdout.split(" ", 1)
    me = int(out[0])
    pid_text, chain_text = out[1].strip().split(" ", 1)
    return int(pid_text), eval(chain_text), me  # noqa: S307 - our own probe's list of ints


def test_the_agent_is_the_parent_or_the_parent_of_its_wrapping_shell():
    pid, chain, agent = run_under(shell=False)
    assert pid == agent and chain[0] == agent
    pid, chain, agent = run_under(shell=True)
    assert pid == agent  # Codex runs hooks through a shell: skip it
    assert agent in chain and chain.index(agent) == 1  # the shell first, then the agent


def test_ancestors_stop_at_the_limit_and_alive_tells_a_gone_process():
    assert len(procs.ancestors(limit=1)) <= 1
    assert procs.ancestors()[0] == os.getppid()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert procs.alive(os.getpid()) and not procs.alive(gone.pid) and not procs.alive(None)


def test_the_relay_walks_from_a_client_to_the_agent_the_client_itself_names():
    """``agent_chain`` (the relay's view, from the pid the kernel gives it) ends at the agent
    ``agent_pid`` finds inside the client, past a wrapping shell."""
    probe = "import os, sys; from colony_tasks.base import procs;"
    probe += " print(os.getpid(), procs.agent_pid(), flush=True); sys.stdin.read()"
    for shell in (False, True):
        inner = [sys.executable, "-c", probe]
        command = ["sh", "-c", f'{sys.executable} -c "{probe}"; true'] if shell else inner
        agent = (
            "import subprocess, sys\n"
            f"subprocess.run({command!r})\n"  # the probe inherits the agent's stdin
        )
        process = subprocess.Popen(
            [sys.executable, "-c", agent],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None and process.stdin is not None
            client, inside = (int(n) for n in process.stdout.readline().split())
            chain = procs.agent_chain(client)
        finally:
            process.stdin.close()
            process.wait(timeout=10)
        assert chain[0] == client and chain[-1] == inside == process.pid
        assert len(chain) == (3 if shell else 2)  # the client, [its shell,] its agent


HOST_PROBE = (
    "import os, sys; from colony_tasks.base import procs;"
    " print(os.getpid(), procs.agent_pid(), flush=True); sys.stdin.read()"
)


def run_under_extension_host(bootstrap: str, marker: bool) -> tuple[int, int, list[int], int]:
    """A python 'agent' starts a python 'extension host' (its last argument ``bootstrap``,
    ``COPILOT_EXTENSION_PARENT_PID`` set when ``marker``), which starts the probe:
    (the probe's agent_pid, the host's pid, the relay's chain from the probe, the agent's pid)."""
    host = (
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-c', {HOST_PROBE!r}])\n"
        "print('host', __import__('os').getpid(), flush=True)\n"
    )
    agent = (
        "import os, subprocess, sys\n"
        f"env = dict(os.environ, **({{'COPILOT_EXTENSION_PARENT_PID': str(os.getpid())}} if {marker} else {{}}))\n"
        f"subprocess.run([sys.executable, '-c', {host!r}, {bootstrap!r}], env=env)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", agent], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        client, inside = (int(n) for n in process.stdout.readline().split())
        chain = procs.agent_chain(client)
        host_pid = chain[1]
    finally:
        process.stdin.close()
        process.wait(timeout=10)
    assert chain[0] == client
    return inside, host_pid, chain, process.pid


def test_a_copilot_extension_hosts_wait_acts_as_the_copilot_process_that_started_it():
    """Copilot runs an extension as ``<copilot> <copilot> .../extension_bootstrap.mjs``: the
    hook it starts belongs to the Copilot process, in the hook's view and in the relay's."""
    inside, host, chain, agent = run_under_extension_host(
        "/opt/copilot/preloads/extension_bootstrap.mjs", marker=True
    )
    assert inside == agent and chain == [chain[0], host, agent]


def test_any_other_child_process_stays_the_agent_of_what_it_starts():
    inside, host, chain, _ = run_under_extension_host("/tmp/plugin.mjs", marker=True)
    assert inside == host and chain == [chain[0], host]
    # Without Copilot's marker the hook does not look (it costs nothing); the relay's chain
    # still reaches the agent, so the pid the hook names lies on it and is believed.
    inside, host, chain, agent = run_under_extension_host(
        "/opt/copilot/preloads/extension_bootstrap.mjs", marker=False
    )
    assert inside == host and chain[-1] == agent and inside in chain
