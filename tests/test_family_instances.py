"""One statement, one check (issue 34): a paper claim that is a claim family's instance says so (its record's
``family``), and the family's generic record on the paper's model reaches the same verdict, with both negative
controls refuted. Tests for the families themselves are in tests/test_families.py."""
from __future__ import annotations

import json

import pytest

from proofs_check import Context, registry, run_claim
from proofs_check import claims as F
from softpolar import main

def test_every_paper_instance_carries_its_family_and_no_other_claim_does():
    reg = registry()
    named = {cid: f"{fam}[{loss},{link}]" for (fam, loss, link), cid in F.PAPER_INSTANCES.items()}
    carried = {c.id: c.family for c in reg.values() if c.family}
    assert carried == named
    for fam_id in named.values():  # a family string names a real family
        assert fam_id.split("[")[0] in F.FAMILIES


def test_list_json_shows_the_family(capsys):
    assert main(["list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["C18"]["family"] == "rate_law[logistic,softmax]"
    assert {k for k, r in rows.items() if r["family"]} == set(F.PAPER_INSTANCES.values())


@pytest.mark.parametrize("cid", ["C11", "C13", "C15", "C18", "C21", "C26"])
def test_the_paper_claim_and_its_family_record_agree(cid):
    paper = registry()[cid]
    fam, rest = paper.family.split("[")
    loss, link = rest.rstrip("]").split(",")
    generic = F.BUILDERS[fam](loss, link)
    assert generic.id != paper.id and generic.expected == paper.expected
    ctx = Context()
    a, b = run_claim(paper, ctx), run_claim(generic, ctx)
    assert a.outcome.verdict == b.outcome.verdict == paper.expected, (a.outcome.evidence, b.outcome.evidence)
    assert a.control_failed and b.control_failed, (a.control.evidence, b.control.evidence)
