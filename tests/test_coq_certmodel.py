"""The replay's model theorem cert_model_polarizes (CertModel.v): the (V, a) gradient flow from the certificate's
V(0), a(0) polarizes to the certified token; `theorems.coq check` requires its statement (issue 37)."""
import json
import tempfile
from pathlib import Path

import pytest

from numerics import certify, load_init, replay_to_coq
from theorems import coq
from theorems.coq.certmodel import MODEL_THEOREM
from theorems.coq.certstatement import compare

#: the held-out init of tests/test_coq_emit.py (a few replay steps, winner token 0)
FEW_STEPS = {"loss": "logistic", "link": "softmax", "V": [["0.6", "0.2", "-0.1"], ["0.1", "0.3", "0.2"]],
             "a": ["0", "0.01", "-0.1"], "target": ["1", "0.5"]}
RIGHT = "(if Nat.eq_dec k 0%nat then 1 else 0).\nProof.\n  intros V a tau sigma."
WRONG = "(if Nat.eq_dec k 1%nat then 1 else 0).\nProof.\n  intros V a tau sigma."


@pytest.fixture(scope="module")
def emitted():
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "I.json").write_text(json.dumps(FEW_STEPS))
        cert = certify(load_init(str(Path(tmp) / "I.json"))).certificate
    return cert, replay_to_coq(cert)


def test_the_replay_ends_with_the_model_theorem_and_check_requires_it(emitted):
    cert, text = emitted
    assert cert["winner"] == 0 and text.count(f"Theorem {MODEL_THEOREM} :") == 1 and text.count(RIGHT) == 1
    assert "is_gradient_flow (objective 3 2 cert_beta) 3 2 V a 0" in text
    assert "V 0 r c = cert_V0 r c" in text and "a 0 k = cert_a0 k" in text
    assert compare(text, cert) == []
    # a planted wrong winner in the model theorem, and a file without it, are refused
    assert any(p.startswith(f"{MODEL_THEOREM}:") for p in compare(text.replace(RIGHT, WRONG), cert))
    cut = text[:text.index("From Softpolar Require Import Reduction CertModel.")]
    assert f"{MODEL_THEOREM}: defined 0 times in the file, expected once" in compare(cut, cert)


@pytest.mark.slow
@pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")
def test_the_model_theorem_compiles_on_allowed_axioms_and_a_wrong_winner_does_not(emitted, tmp_path):
    cert, text = emitted
    dev = coq.build(tmp_path / "b", upto="CertModel.v")
    assert dev.ok
    good, bad = tmp_path / "good.v", tmp_path / "bad.v"
    good.write_text(text)
    bad.write_text(text.replace(RIGHT, WRONG))
    run = coq.check_file(good, dev, allowed=coq.CERTIFICATE_AXIOMS, declarations=(MODEL_THEOREM,))
    assert run.ok and run.compiled, run.output[-2000:]
    axs = run.assumptions[MODEL_THEOREM]
    assert set(coq.STDLIB_REAL_AXIOMS) <= set(axs) <= set(coq.CERTIFICATE_AXIOMS)
    assert coq.EXISTENCE_AXIOM not in axs
    run = coq.check_file(bad, dev, allowed=coq.CERTIFICATE_AXIOMS, declarations=(MODEL_THEOREM,))
    assert not run.ok and not run.compiled
