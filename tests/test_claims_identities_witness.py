"""Strong witnesses of the identity claims ``ID.*``: each wrong variant's own function, on an input fixed in
advance under which that wrong statement really holds, comes out ``proved`` (so the control's verdict can flip),
while the control itself, on its usual inputs, still comes out ``disproved``."""
from __future__ import annotations

import pytest

from proofs_check import Context
from proofs_check import registry
from proofs_check.mutation import run_witness
from theorems import IDENTITIES
from theorems import Identity

#: the one identity whose control and witness take seconds (every loss x every link)
SLOW = ("flow.structured",)
IDS = [pytest.param(i, marks=pytest.mark.slow) if i in SLOW else i for i in IDENTITIES]


def test_every_identity_claim_has_a_strong_witness():
    claims = [c for cid, c in registry().items() if cid.startswith("ID.")]
    assert {c.id for c in claims} == {f"ID.{i}" for i in IDENTITIES}
    weak = [c.id for c in claims if c.witness is None or c.witness.kind != "strong"]
    assert weak == []


@pytest.mark.parametrize("ident_id", IDS)
def test_witness_inputs_make_every_wrong_variant_hold(ident_id):
    ident = IDENTITIES[ident_id]
    assert len(ident.witnesses) == len(ident.negative)
    n = 2
    assert ident.witness_control(n).status == "proved"
    # the same functions on the control's own inputs: still disproved (the witness changed only the input)
    assert ident.negative_control(n).status == "disproved"


@pytest.mark.parametrize("ident_id", IDS)
def test_claim_witness_is_strong_and_passes(ident_id):
    claim = registry()[f"ID.{ident_id}"]
    assert claim.witness.kind == "strong" and not claim.witness.weak_because
    w = run_witness(claim, Context())
    assert w["passes"] and w["control"] == "verified", w


def test_a_witness_that_does_not_hold_keeps_the_result_from_proved():
    # a witness 'input' under which the wrong variant does not hold: the combined result must not be proved
    base = IDENTITIES["jacobian.softmax"]
    bad = Identity(**{**{f: getattr(base, f) for f in base.__dataclass_fields__ if f != "witnesses"},
                      "witnesses": (("softmax itself", base.negative[0][1]),)})
    assert bad.witness_control(2).status == "disproved"


def test_witness_count_must_match_the_wrong_variants():
    base = IDENTITIES["flow.structured"]
    with pytest.raises(ValueError, match="one per wrong variant"):
        Identity(**{**{f: getattr(base, f) for f in base.__dataclass_fields__ if f != "witnesses"},
                    "witnesses": (("only one", lambda c: None),)})
