"""Building the MCPServer and serving it on stdio.

stdout is the protocol: nothing else may write to it. Logs go to stderr.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Literal, NoReturn

import anyio
import anyio.abc
from mcp.server.mcpserver import MCPServer

from colony_tasks import __version__
from colony_tasks.base import backend, procs
from colony_tasks.relay import wire
from colony_tasks.store import Store, open_default

from . import background
from . import tools_chain as chain
from . import tools_read as read
from . import tools_thread as write
from . import tools_work as work
from .toolkit import AppState, build

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
NAME = "colony-tasks"
INSTRUCTIONS = (
    "A shared task thread with the other agent sessions on this repository and branch: claim"
    " files before editing, ask and answer questions, hand off work, record decisions and"
    " blockers; chains take turns; plans divide a task into work items to take and finish."
    " task_id defaults to your lane task. Calls act as your own session, never another's; if"
    " a tool asks for session_id, pass the one your briefing gives (handle:key)."
)
TOOL_ORDER = (
    read.task_list,
    read.task_timeline,
    read.task_updates_since,
    write.task_post,
    write.claim_file,
    write.release_file,
    write.ask_question,
    write.answer_question,
    write.hand_off,
    write.accept_handoff,
    write.record_decision,
    write.report_blocker,
    write.resolve_blocker,
    write.withdraw,
    chain.chain_create,
    chain.chain_pass,
    chain.chain_say,
    chain.chain_close,
    work.plan_work,
    work.take_work,
    work.finish_work,
    read.search,
    read.get_observations,
)

log = logging.getLogger("colony_tasks.mcp")


def start_background(state: AppState) -> Callable[[], None]:
    """Start the embedding worker on the server's store; returns the function that stops it.

    It is called before the store closes.
    """
    return background.start(state.store.address)


class Lifespan:
    """Opens the store when the server starts; :meth:`shutdown` stops background work and
    closes it, at the end of the run or on a signal (whichever comes first)."""

    def __init__(
        self, open_store: Callable[[], Store] = open_default, *, background: bool = True
    ) -> None:
        self.open_store = open_store
        self.background = background
        self.state: AppState | None = None
        self.stop_background: Callable[[], None] = lambda: None

    @asynccontextmanager
    async def __call__(self, _server: MCPServer) -> AsyncIterator[AppState]:
        store = self.open_store()
        self.state = state = AppState(store=store, serial=anyio.Lock())
        if self.background:
            self.stop_background = start_background(state)
        log.info("colony-tasks MCP server on %s (pid %d)", store.path, os.getpid())
        try:
            yield state
        finally:
            await self.shutdown()

    async def shutdown(self) -> None:
        state, self.state = self.state, None
        if state is None:
            return
        with anyio.CancelScope(shield=True):
            async with state.serial:  # waits for a tool call in flight; none starts after
                self.stop_background()
                state.store.close()


def build_server(
    open_store: Callable[[], Store] = open_default,
    *,
    log_level: LogLevel = "WARNING",
    lifespan: Lifespan | None = None,
    background: bool = True,
) -> MCPServer:
    """The server with every tool; the store is opened once per run, in the lifespan."""
    listed = {fn.__name__ for fn in TOOL_ORDER}
    every = (*read.TOOLS, *write.TOOLS, *chain.TOOLS, *work.TOOLS)
    assert listed == {fn.__name__ for fn in every}, "tool list out of sync"
    return MCPServer(
        NAME,
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan or Lifespan(open_store, background=background),
        tools=[build(fn) for fn in TOOL_ORDER],
        log_level=log_level,
    )


async def serve_stdio(server: MCPServer, lifespan: Lifespan) -> None:
    """Serve on stdio until stdin closes or SIGTERM/SIGINT arrives.

    On a signal the lifespan shuts down here and the process exits at once: cancelling the
    server instead would wait for the SDK's stdin reader thread, i.e. until stdin closes.
    """
    async with anyio.create_task_group() as group:

        async def stop_on_signal(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
                task_status.started()
                async for signum in received:
                    log.info("Stopping on signal %d.", signum)
                    release_waits()
                    await lifespan.shutdown()
                    exit_now(0)

        await group.start(stop_on_signal)
        await server.run_stdio_async()
        release_waits()
        group.cancel_scope.cancel()


def release_waits() -> None:
    """The agent that started this server is shutting down (it stops its MCP servers first):
    the relay ends the wake waits of its sessions now (see :mod:`colony_tasks.relay.waits`)."""
    pid = procs.agent_pid(cheap=True)
    if pid is None:
        return
    try:
        url = backend.store_url()
        wire.closing(wire.relay_key(url), pid)
    except Exception as error:  # noqa: BLE001 - stopping never fails on this
        log.info("Could not tell the relay: %s", error)


def serve(log_level: LogLevel = "WARNING") -> None:
    """Run on stdio until stdin closes or a signal; never returns (exits the process)."""
    logging.basicConfig(
        stream=sys.stderr, level=log_level, format="colony-tasks mcp %(levelname)s: %(message)s"
    )
    code = 0
    try:
        lifespan = Lifespan(open_default)
        anyio.run(serve_stdio, build_server(log_level=log_level, lifespan=lifespan), lifespan)
    except KeyboardInterrupt:
        pass
    except BaseException:
        log.exception("The MCP server stopped on an error.")
        code = 1
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """End the process without waiting for the SDK's threads; only stderr is flushed (stdout
    belongs to the protocol, and stray buffered output must not reach it)."""
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
