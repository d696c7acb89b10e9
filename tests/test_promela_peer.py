"""The Spin peer model (bench/peers/core.pml) is generated from the protocol definition."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from peers.gen_promela import PROMELA, generate  # noqa: E402

from spmcheck.spec.model import Model  # noqa: E402
from spmcheck.spec.textterm import P  # noqa: E402
from spmcheck.spec.properties import PROPERTIES  # noqa: E402
from spmcheck.spec.vocabulary import Config  # noqa: E402


def test_committed_promela_model_is_what_the_generator_writes_today() -> None:
    text = generate(Model(Config(2, 2, 2), "final"), list(PROPERTIES))
    assert (ROOT / "bench" / "peers" / "core.pml").read_text() == text, \
        "regenerate: python bench/peers/gen_promela.py -o bench/peers/core.pml"


def test_every_action_is_an_option_and_every_property_an_assertion() -> None:
    m = Model(Config(1, 1, 1), "stale-lookup")
    text = generate(m, list(PROPERTIES))
    for a in m.actions:
        assert f'printf("ACT {a.describe()}\\n");' in text
    assert text.count("/* creation-consistent */") == sum(1 for a in m.actions if PROPERTIES["creation-consistent"].watches(a))


def test_promela_terms_refuse_python_branching() -> None:
    with pytest.raises(TypeError):
        bool(P("x") == 1)
    assert PROMELA.And(True, P("a")).text == "(a)" and PROMELA.If(P("c"), 1, 2).text == "(c -> 1 : 2)"
