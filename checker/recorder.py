"""Format-v1 trace writer shared by the real-thread runtime.

Every event gets its sequence number inside one global log mutex. The runtime calls `step` for data
steps (the effect runs *inside* the mutex, so the value it observes and the seq it gets belong to
the same instant) and `event` for lock steps (after a physical acquire, before a physical release).
That makes the seq order a linearisation of what the threads really did, whether or not the thread
held the protocol lock that should have protected the data — which is exactly what the buggy
variants get wrong, so the trace must not hide it.

Complete-run marker (traces/FORMAT.md): the header carries `end_marker=1`, and `close(end=True)`
appends `<seq> run_end` after the last event once every event is written. A run stopped any other
way (SIGINT, SIGKILL, a crash) ends without it, and `spmcheck check` calls that trace inconclusive.
A failing write (full disk, closed pipe) stops the writing, never the threads: the first error is
kept in `error` for the caller to report.
"""
from __future__ import annotations

import io
import os
import threading
from dataclasses import replace
from typing import Callable, TextIO

from spmcheck.spec.events import END_KIND, END_MARKER_KEY, AnyHeader, Header, render_header, value_text

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

    def __init__(self, out: TextIO, header: AnyHeader | Header, flush_interval: float = 0.1) -> None:
        self._out = out
        self._mutex = threading.Lock()
        self._buf: list[str] = []
        self._seq = 0
        self._closed = threading.Event()
        self._io = threading.Lock()  # serialises writes of the flusher and the final close
        self.error: OSError | None = None  # first write failure; nothing is written after it
        self._fd = _fd_of(out)
        if all(k != END_MARKER_KEY for k, _ in header.meta):
            # this writer always ends a finished run with run_end: the header says so, so a reader
            # can tell a cut-off log from a complete one
            header = replace(header, meta=header.meta + ((END_MARKER_KEY, "1"),))
        with self._io:
            self._write(render_header(header) + "\n")
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

    def _write(self, data: str) -> None:
        """Write under self._io; after the first failure nothing more is written."""
        if self.error is not None:
            return
        try:
            if self._fd is None:
                self._out.write(data)
                self._out.flush()
            else:
                # one write(2) per chunk of whole lines: a run killed with SIGKILL leaves a
                # file that ends on a line boundary (a TextIO would split it at 8 KiB)
                raw = memoryview(data.encode("utf-8"))
                while raw:
                    raw = raw[os.write(self._fd, raw):]
        except OSError as e:
            self.error = e

    def flush(self) -> None:
        with self._io:
            with self._mutex:
                chunk, self._buf = self._buf, []
            if chunk:
                # lines were appended in seq order under the mutex and chunks are written in
                # the order they were taken, so the file stays sorted by seq
                self._write("".join(chunk))

    def _flush_loop(self, interval: float) -> None:
        while not self._closed.wait(interval):
            self.flush()

    def close(self, end: bool = True) -> None:
        """Stop the flusher and write what is buffered; with `end`, then the run_end marker (the
        run finished: nothing after this line was lost). `end=False` for an interrupted run."""
        self._closed.set()
        self._flusher.join(timeout=2)
        self.flush()
        if end:
            with self._io:
                with self._mutex:
                    seq = self._seq + 1  # continues the sequence: a gap before it shows lost events
                self._write(f"{seq} {END_KIND}\n")
