"""Rewrite a lifecycle v1 trace as v2: the same run, with the ids a real program would write.

Read off the definition, not a list of keys: a static key bound to a sort's parameter (`ctx=`,
`agent=`, `id=`) is an element of that sort, an agent-set key (`agents=`) a set of them, and an
observation computed by a `Mask` (`instrumented=`, `agents_mask=`) the set its bitmask encodes
(bit i = the sort's element i at the fixed size). Elements get opaque names (`gpu3`, `ctx1`, a
hex dispatch id), threads OS-style ids, sets a shuffled order; sequence numbers, kinds and other
values are kept. The v1 sizes leave the header; the scenario switches (`timeouts`, `deactivate`,
`destroy`) stay, since they choose which behaviours the definition has.

Used by the differential test (tests/test_openworld_lifecycle.py: every v1 verdict must survive
the rewrite) and to read counterexamples of `spmcheck cex --model lifecycle` as v2.
"""
from __future__ import annotations

import random
from functools import lru_cache
from typing import Iterable, Iterator

from spmcheck.spec.lang.syntax import Agg, ScopeParam, Var

from .convert import opaque_tid
from .openworld_check import LC_SWITCHES, reading

SIZES = ("agents", "contexts", "tools", "dispatches", "max_ids")
NAMES = {"agent": "gpu{}", "context": "ctx{}", "kernel": "k{:x}"}


@lru_cache(maxsize=None)
def _keys(variant: str) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """(kind, key) -> sort name, for element keys, set keys and mask observations."""
    ow = reading("lifecycle", variant, "1" * len(LC_SWITCHES))  # every switch on: every action's keys
    elem: dict[tuple[str, str], str] = {}
    sets: dict[tuple[str, str], str] = {}
    masks: dict[tuple[str, str], str] = {}
    for a in ow.proto.actions:
        for k, v in a.static:
            if isinstance(v, ScopeParam):
                sets[(a.kind, k)] = v.sort.name
            elif isinstance(v, Var):
                elem[(a.kind, k)] = v.sort.name
        for k, e in a.observe:
            if isinstance(e, Agg) and e.kind == "mask":
                masks[(a.kind, k)] = e.var.sort.name
    return elem, sets, masks


def v1_to_v2(lines: Iterable[str], seed: int = 1) -> Iterator[str]:
    """The v2 lines of a lifecycle v1 trace (each without its newline)."""
    rng = random.Random(seed)
    tids: dict[str, str] = {}
    salt = rng.randrange(1 << 20, 1 << 24)
    variant = "final"
    elem: dict[tuple[str, str], str] = {}
    sets: dict[tuple[str, str], str] = {}
    masks: dict[tuple[str, str], str] = {}

    def name(sort: str, v: str) -> str:
        if not v.isdigit():
            return v  # not an index of the fixed size (an impossible value): left as written
        i = int(v)
        return NAMES.get(sort, sort + "{}").format(i * 7919 + salt if sort == "kernel" else i)

    for ln in lines:
        ln = ln.rstrip("\n")
        w = ln.split()
        if not w or ln.lstrip().startswith("#"):
            yield ln
            continue
        if w[0] == "spmcheck-trace":
            meta = [x for x in w[2:] if x.split("=", 1)[0] not in SIZES]
            kv = dict(x.split("=", 1) for x in meta if "=" in x)
            variant = kv.get("variant", "final")
            elem, sets, masks = _keys(variant)
            switches = {k for k, _ in LC_SWITCHES}
            first = [f"model=lifecycle", f"variant={variant}"]
            rest = [x for x in meta if x.split("=", 1)[0] not in ("model", "variant")]
            rest.sort(key=lambda x: x.split("=", 1)[0] not in switches)  # switches first (readability)
            yield " ".join(["spmcheck-trace", "v2", *first, *rest])
            continue
        if len(w) == 2:  # `<seq> run_end`
            yield ln
            continue
        seq, t, kind, *kvs = w
        opaque_tid(tids, t, rng)
        out = []
        for x in kvs:
            k, _, v = x.partition("=")
            if (kind, k) in elem:
                v = name(elem[(kind, k)], v)
            elif (kind, k) in sets and v != "all":
                parts = [name(sets[(kind, k)], p) for p in v.split(",")]
                rng.shuffle(parts)
                v = ",".join(parts)
            elif (kind, k) in masks and v.isdigit():
                bits = int(v)
                parts = [name(masks[(kind, k)], str(i)) for i in range(bits.bit_length()) if bits >> i & 1]
                rng.shuffle(parts)
                v = ",".join(parts) if parts else "none"
            out.append(f"{k}={v}")
        yield " ".join([seq, tids[t], kind, *out])


def convert_text(text: str, seed: int = 1) -> str:
    return "\n".join(v1_to_v2(text.splitlines(), seed)) + "\n"
