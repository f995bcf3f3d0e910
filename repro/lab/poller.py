"""Run one query at a fixed interval in a background thread while something else runs."""
from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

import psycopg

from .servers import Server


class Poller:
    """Use as a context manager around a measured window; `take(rows)` gets every result.

    Polls on a fixed schedule (not sleep-after-query), so the rate does not drift; an
    error in the thread is raised in the caller's thread when the window ends.
    `round_trips_ms` holds how long each poll took from sending the query to its answer.
    """

    def __init__(self, server: Server, query: str, params: tuple = (), interval_s: float = 0.01):
        self.server = server
        self.query = query
        self.params = params
        self.interval_s = interval_s
        self.polls = 0
        self.round_trips_ms: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._error: BaseException | None = None

    def take(self, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def __enter__(self) -> Poller:
        self._conn = psycopg.connect(self.server.conninfo(), autocommit=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()
        if self._error is not None and exc is None:
            raise self._error

    def _poll(self) -> None:
        next_at = time.monotonic()
        try:
            while not self._stop.is_set():
                sent = time.monotonic()
                rows = self._conn.execute(self.query, self.params).fetchall()
                self.round_trips_ms.append((time.monotonic() - sent) * 1000)
                self.take(rows)
                self.polls += 1
                next_at += self.interval_s
                self._stop.wait(max(0.0, next_at - time.monotonic()))
        except BaseException as exc:  # re-raised in the caller's thread by __exit__
            self._error = exc
