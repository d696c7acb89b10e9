"""Streaming reader for trace format v1: bytes -> lines -> spec.events records.

Lines come from `readline(limit)` so memory stays bounded on any input (a 1 GB line costs 64 KiB).
A line is parsed by the regex compiled from trace.lark (checker/fastpath.py); when it does not
match, Lark parses it and produces the error (or the record, should the grammar accept a line the
regex does not: the regex is a derived subset, never a second definition).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator, Union

from spmcheck.spec.events import AnyHeader, Event, Header, LifecycleHeader, RunEnd

if TYPE_CHECKING:
    from lark import Lark
    from lark.exceptions import UnexpectedInput

    from .fastpath import FastPath

# Lark is imported where a grammar is built or a line is parsed by it, not with this module: a v2
# file (and every v2 worker of `check --jobs`) never needs the v1 grammar, and importing Lark is
# about a fifth of a checker process's start-up (the serial part of --jobs)

GRAMMAR_PATH = Path(__file__).with_name("trace.lark")
MAX_LINE = 64 * 1024  # bytes; longer lines are reported (TRC007) and skipped in chunks
MAX_SKIP = 16 * 1024 * 1024  # bytes of one over-long line skipped before reading stops (TRC019)
MAX_BAD_LINES = 1000  # bad lines before reading stops (TRC019): junk input ends promptly
FORMAT_VERSION = 1

# Stable error codes for input problems (documented in traces/FORMAT.md).
CODES = {
    "TRC001": "cannot read file",
    "TRC002": "empty file (no header)",
    "TRC003": "missing header",
    "TRC004": "unsupported format version",
    "TRC005": "syntax error",
    "TRC006": "invalid UTF-8",
    "TRC007": "line too long",
    "TRC008": "truncated last line",
    "TRC009": "unknown event kind",
    "TRC010": "unknown thread",
    "TRC011": "repeated sequence number",
    "TRC012": "decreasing sequence number",
    "TRC013": "gap in sequence numbers",
    "TRC014": "repeated header",
    "TRC015": "bad header value",
    "TRC016": "binary data",
    "TRC017": "number too long",
    "TRC018": "not a regular file",
    "TRC019": "reading stopped (too many bad lines, or a line without end)",
    "TRC020": "line after the run_end marker",
}
MAX_DIGITS = 20  # numbers in a trace fit in 64 bits (trace.lark bounds every number terminal)


@dataclass(frozen=True, slots=True)
class LineError:
    code: str
    line: int
    col: int
    message: str


class TraceSyntaxError(Exception):
    def __init__(self, code: str, col: int, message: str) -> None:
        super().__init__(message)
        self.code, self.col, self.message = code, col, message


Record = Union[Header, LifecycleHeader, Event, RunEnd, None]  # None: a comment or blank line


def _value(tok: str) -> str:
    return tok[tok.index("=") + 1:]


def _key(tok: str) -> str:
    return tok.lstrip(" \t").split("=", 1)[0]


def _to_record() -> Any:
    """Lark's transformer that builds the records (the class needs Lark: made when the grammar is)."""
    from lark import Token, Transformer, Tree

    class _ToRecord(Transformer):  # type: ignore[type-arg]
        """Callbacks take the plain children list (perf-notes §7.2: no v_args wrappers)."""

        def line(self, c: list) -> Record:
            return c[0] if c and not isinstance(c[0], Token) else None

        def header(self, c: list) -> Header:
            version = int(str(c[0]).split("v")[-1])
            meta = tuple((_key(t), _value(t)) for t in c[5:])
            return Header(version, _value(c[1]), int(_value(c[2])), int(_value(c[3])), int(_value(c[4])), meta)

        def lc_header(self, c: list) -> LifecycleHeader:
            version = int(str(c[0]).split("v")[-1])
            nums = [int(_value(t)) for t in c[3:11]]
            meta = tuple((_key(t), _value(t)) for t in c[11:])
            # switches stay numbers: a value other than 0/1 is the checker's TRC015, not a syntax error
            return LifecycleHeader(version, _value(c[2]), *nums, meta=meta, model_name=_value(c[1]))

        def run_end(self, c: list) -> RunEnd:
            return RunEnd(int(c[0]))

        def event(self, c: list) -> Event:
            kind, args = c[2]
            return Event(int(c[0]), str(c[1]).lstrip(" \t"), kind, args)

        def __default__(self, data: str, children: list, meta: object) -> object:
            if str(data).startswith("_"):  # Lark's EBNF helper rules (META*) are inlined by the parser
                return Tree(data, children, meta)
            # every event-kind rule: its children are the ` key=value` tokens in grammar order
            return str(data), tuple((_key(t), _value(t)) for t in children)

    return _ToRecord()


@dataclass(frozen=True)
class Grammar:
    lark: Lark
    fast: FastPath
    seq_group: int
    thread_group: int
    kinds: frozenset[str]
    # marker -> event kind and [(group, key)] of its arguments
    event_slots: dict[str, tuple[str, tuple[tuple[int, str], ...]]]


@lru_cache(maxsize=1)
def grammar() -> Grammar:
    """Built on first use: a v2 file never needs it (checker/replay.py builds it after the v2 dispatch)."""
    text = GRAMMAR_PATH.read_text(encoding="utf-8")
    # cache=True: Lark keeps the analysed grammar in the temp dir, keyed by the grammar text, the
    # options and Lark's version (a stale or unreadable cache is rebuilt); building it costs about
    # a third of a second in every checker process, `--jobs` workers included
    from lark import Lark

    from .fastpath import compile_grammar

    lk = Lark(text, parser="lalr", start="line", transformer=_to_record(), maybe_placeholders=False,
              cache=True)
    raw = lk  # rules and terminals (the transformer only acts on parse trees)
    fast = compile_grammar(raw)
    gi = fast.regex.groupindex
    seq_g = min(i for n, i in gi.items() if n.endswith("_SEQ"))
    thr_g = min(i for n, i in gi.items() if n.endswith("_THREAD"))
    terms = {t.name: t.pattern.to_regexp() for t in raw.terminals}
    body_kinds = {r.expansion[0].name for r in raw.rules if r.origin.name == "body"}
    slots = {}
    for marker, (label, groups) in fast.markers.items():
        if label in body_kinds:
            slots[marker] = (label, tuple((g, _key_of_pattern(terms[t])) for g, t in groups))
    return Grammar(lk, fast, seq_g, thr_g, frozenset(body_kinds), slots)


def _key_of_pattern(rx: str) -> str:
    # `[ \t]+agent=[...]+` -> `agent`
    return rx.split("=", 1)[0].split("+", 1)[-1]


_HUMAN = {"SEQ": "a sequence number", "THREAD": "a thread", "MAGIC": "'spmcheck-trace v<N>'",
          "COMMENT": "'#'", "BLANK": "a blank", "$END": "end of line", "META": "key=value"}


def _human(term: str) -> str:
    if term in _HUMAN:
        return _HUMAN[term]
    if term[:2] in ("A_", "H_"):
        return f"'{term[2:].lower()}='"
    return f"'{term.lstrip('_').lower()}'"


def _expected(names: object) -> str:
    items = sorted({_human(str(n)) for n in names})  # type: ignore[union-attr]
    if len(items) > 6:
        items = items[:6] + ["..."]
    return ", ".join(items)


def parse_line(text: str, last: bool = False) -> Record:
    """Parse one line (without its line ending). Raises TraceSyntaxError with a code and column."""
    g = grammar()
    m = g.fast.regex.fullmatch(text)
    if m is not None:
        marker = m.lastgroup
        slot = g.event_slots.get(marker)  # type: ignore[arg-type]
        if slot is not None:
            kind, args = slot
            return Event(int(m.group(g.seq_group)), m.group(g.thread_group).lstrip(" \t"), kind,
                         tuple((k, _value(v)) for i, k in args if (v := m.group(i)) is not None))
        if marker not in ("k_header", "k_lc_header", "k_run_end"):
            return None
    return lark_parse(text, last)


def lark_parse(text: str, last: bool = False) -> Record:
    from lark.exceptions import UnexpectedInput

    try:
        return grammar().lark.parse(text)  # type: ignore[no-any-return]
    except UnexpectedInput as e:
        for i, ch in enumerate(text):  # only picks the code/message; Lark already rejected it
            if (ch < " " and ch != "\t") or ch == "\x7f":
                return _raise(TraceSyntaxError("TRC016", i + 1, f"binary data: control character {ch!r}"))
        long = _long_number(text, int(getattr(e, "column", 0) or 0))
        if long is not None:
            return _raise(long)
        raise _syntax_error(e, text, last) from None


def _long_number(text: str, col: int) -> TraceSyntaxError | None:
    """TRC017 when the parser stopped inside a run of more than MAX_DIGITS digits: every number
    terminal takes at most MAX_DIGITS, so a longer number ends the match right there."""
    i = col - 1
    if not 0 <= i < len(text) or not text[i].isdigit():
        return None
    start, end = i, i
    while start > 0 and text[start - 1] in "0123456789":
        start -= 1
    while end < len(text) and text[end] in "0123456789":
        end += 1
    if end - start <= MAX_DIGITS:
        return None
    return TraceSyntaxError("TRC017", start + 1, f"number of {end - start} digits (at most {MAX_DIGITS}: "
                            "values are 64-bit)")


def _raise(e: TraceSyntaxError) -> Record:
    raise e


def _syntax_error(e: UnexpectedInput, text: str, last: bool) -> TraceSyntaxError:
    from lark.exceptions import UnexpectedCharacters

    col = max(int(getattr(e, "column", 0) or 0), 1)
    if isinstance(e, UnexpectedCharacters):
        expected = e.allowed or set()
        got = repr(text[col - 1]) if col - 1 < len(text) else "end of line"
    else:
        tok = getattr(e, "token", None)
        expected = getattr(e, "expected", None) or getattr(e, "accepts", None) or set()
        if tok is None or tok.type == "$END":
            col, got = len(text) + 1, "end of line"
        else:
            got = repr(str(tok).strip())
    words = text[col - 1:].split()
    if any(str(n).lstrip("_").lower() in grammar().kinds for n in expected) and words:
        code, msg = "TRC009", f"unknown event kind {words[0]!r}; expected {_expected(expected)}"
    elif got == "end of line":
        code, msg = "TRC005", f"line ends early; expected {_expected(expected)}"
    else:
        code, msg = "TRC005", f"unexpected {got}; expected {_expected(expected)}"
    if last:
        code, msg = "TRC008", f"truncated last line (no newline): {msg}"
    return TraceSyntaxError(code, col, msg)


def read_lines(stream: BinaryIO) -> Iterator[tuple[int, str | None, LineError | None, bool]]:
    """Yield (line number, text without line ending, decode/length error, has newline)."""
    n = 0
    readline = stream.readline
    while True:
        raw = readline(MAX_LINE + 1)
        if not raw:
            return
        n += 1
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            # skip the rest of the over-long line without holding it, but not forever: a stream
            # such as `spmcheck check - < /dev/zero` is one line without end
            skipped = len(raw)
            while raw and not raw.endswith(b"\n") and skipped <= MAX_SKIP:
                raw = readline(MAX_LINE)
                skipped += len(raw)
            yield n, None, LineError("TRC007", n, MAX_LINE + 1, f"line longer than {MAX_LINE} bytes"), True
            if raw and not raw.endswith(b"\n"):
                yield n, None, LineError("TRC019", n, 1, f"reading stopped: no line end within {MAX_SKIP} bytes "
                                         "(an endless stream?)"), True
                return
            continue
        nl = raw.endswith(b"\n")
        body = raw[:-1] if nl else raw
        if body.endswith(b"\r"):
            body = body[:-1]
        try:
            yield n, body.decode("utf-8"), None, nl
        except UnicodeDecodeError as e:
            yield n, None, LineError("TRC006", n, e.start + 1, f"invalid UTF-8 byte 0x{body[e.start]:02x}"), nl


def iter_records(stream: BinaryIO, file: str = "") -> Iterator[AnyHeader | Event | RunEnd | LineError]:
    """Typed records of a stream (comments and blanks dropped); errors are yielded, not raised."""
    for n, text, err, nl in read_lines(stream):
        if err is not None:
            yield err
            continue
        assert text is not None
        try:
            rec = parse_line(text, last=not nl)
        except TraceSyntaxError as e:
            yield LineError(e.code, n, e.col, e.message)
            continue
        if isinstance(rec, Event):
            yield Event(rec.seq, rec.thread, rec.kind, rec.args, file, n)
        elif isinstance(rec, RunEnd):
            yield RunEnd(rec.seq, file, n)
        elif isinstance(rec, (Header, LifecycleHeader)):
            yield replace(rec, file=file, line=n)
