"""A TCP proxy that delays every chunk: a far-away PostgreSQL server on loopback (team mode over
a slow network). Used by bench/team_wan.py and the team tests of late replies."""

from __future__ import annotations

import asyncio
import threading
import time


class DelayProxy:
    """A TCP proxy on 127.0.0.1 delivering every chunk ``delay`` seconds after it arrived, in
    each direction, order kept (a pipe, not a stop-and-wait: chunks in flight overlap). Counts
    chunks and connections; :meth:`cut` drops every open connection (a network fault)."""

    def __init__(self, target_port: int, delay: float) -> None:
        self.target_port = target_port
        self.delay = delay
        self.up_chunks = 0
        self.down_chunks = 0
        self.connections = 0
        self.port = 0
        self._open: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def cut(self) -> int:
        """Close every connection open through the proxy, both ends, mid-whatever it was
        doing; how many were cut. New connections go through as before."""
        return asyncio.run_coroutine_threadsafe(self._abort_all(), self._loop).result(10)

    async def _abort_all(self) -> int:
        writers = list(self._open)
        for writer in writers:
            writer.transport.abort()
        return len(writers) // 2

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _serve(self, client_r, client_w) -> None:
        self.connections += 1
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_w.close()
            return
        self._open.update((client_w, server_w))
        await asyncio.gather(
            self._pipe(client_r, server_w, up=True),
            self._pipe(server_r, client_w, up=False),
            return_exceptions=True,
        )
        self._open.difference_update((client_w, server_w))

    async def _pipe(self, reader, writer, *, up: bool) -> None:
        queue: asyncio.Queue = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if data is None:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if up:
                    self.up_chunks += 1
                else:
                    self.down_chunks += 1
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.ensure_future(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((time.monotonic() + self.delay, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((0.0, None))
        await asyncio.gather(sender, return_exceptions=True)
