"""Format-v1 trace writer shared by the real-thread runtime.

Every event gets its sequence number inside one global log mutex. The runtime calls `step` for data
steps (the effect runs *inside* the mutex, so the value it observes and the seq it gets belong to
the same instant) and `event` for lock steps (after a physical acquire, before a physical release).
That makes the seq order a linearisation of what the threads really did, whether or not the thread
held the protocol lock that should have protected the data — which is exactly what the buggy
variants get wrong, so the trace must not hide it.
"""
from __future__ import annotations

import io
import os
import threading
from typing import Callable, TextIO

from spec.events import Header, render_header, value_text

Args = tuple[tuple[str, object], ...]


def _fmt(seq: int, thread: str, kind: str, args: Args) -> str:
    return f"{seq} {thread} {kind}" + "".join(f" {k}={value_text(v)}" for k, v in args) + "\n"


def _fd_of(out: TextIO) -> int | None:
    try:
        return out.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None  # in-memory streams (tests)


class Recorder:
    """Append-only, seq-ordered trace; a background thread flushes so a killed run stays readable."""

    def __init__(self, out: TextIO, header: Header, flush_interval: float = 0.1) -> None:
        self._out = out
        self._mutex = threading.Lock()
        self._buf: list[str] = []
        self._seq = 0
        self._closed = threading.Event()
        self._io = threading.Lock()  # serialises writes of the flusher and the final close
        out.write(render_header(header) + "\n")
        out.flush()
        self._fd = _fd_of(out)
        self._flusher = threading.Thread(target=self._flush_loop, args=(flush_interval,),
                                         name="trace-flusher", daemon=True)
        self._flusher.start()

    @property
    def events(self) -> int:
        return self._seq

    def event(self, thread: str, kind: str, args: Args = ()) -> int:
        with self._mutex:
            self._seq += 1
            self._buf.append(_fmt(self._seq, thread, kind, args))
            return self._seq

    def step(self, thread: str, kind: str, static: Args,
             effect: Callable[[], Args] | None = None) -> None:
        """Run `effect` (which mutates shared state and returns observed values) atomically with
        the assignment of its seq number."""
        with self._mutex:
            observed = effect() if effect is not None else ()
            self._seq += 1
            self._buf.append(_fmt(self._seq, thread, kind, static + observed))

    def flush(self) -> None:
        with self._io:
            with self._mutex:
                chunk, self._buf = self._buf, []
            if chunk:
                # lines were appended in seq order under the mutex and chunks are written in
                # the order they were taken, so the file stays sorted by seq
                data = "".join(chunk)
                if self._fd is None:
                    self._out.write(data)
                else:
                    # one write(2) per chunk of whole lines: a run killed with SIGKILL leaves a
                    # file that ends on a line boundary (a TextIO would split it at 8 KiB)
                    raw = memoryview(data.encode("utf-8"))
                    while raw:
                        raw = raw[os.write(self._fd, raw):]
            if self._fd is None:
                self._out.flush()

    def _flush_loop(self, interval: float) -> None:
        while not self._closed.wait(interval):
            self.flush()

    def close(self) -> None:
        self._closed.set()
        self._flusher.join(timeout=2)
        self.flush()
