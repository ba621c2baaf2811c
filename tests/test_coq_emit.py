"""certify --coq and atlas boxes: the validated enclosure at tau*, closed in Coq with the trapping lemma."""
import io
import re
import json
from fractions import Fraction

import pytest

from numerics import certificate_to_coq
from numerics.validated.coq_emit import atlas_boxes_to_coq, exact_rational, region_block
from numerics import coq_chain, parse_init, replay_to_coq
from theorems.coq.certstatement import coq_real
from theorems import InvalidArgument, coq

needs_coq = pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")
BOX = {"key": [2, 0, 3], "status": "certified", "winner": 1, "tau": "3/2^2",
       "a_lower": ["1/2", None, "3/2^1"], "u_lower": ["0", None, "1"]}


def test_exact_rationals():
    assert exact_rational("403804961/2^28") == Fraction(403804961, 2 ** 28)
    assert exact_rational("-3/4") == Fraction(-3, 4) and exact_rational(5) == 5
    with pytest.raises(InvalidArgument, match="exact rational"):
        exact_rational("0.1")


def test_block_states_the_bounds_exactly_and_refuses_non_region_bounds():
    text = atlas_boxes_to_coq(3, "1", [BOX])
    assert "a 1%nat - a 0%nat >= (1 / 2)" in text and "a 1%nat - a 2%nat >= (3 / 2)" in text
    assert "u 1%nat - u 0%nat >= 0" in text and "Definition atlas_box_2_0_3_tau : R := (3 / 4)." in text
    assert "apply (softpolar_trapping 3 1%nat" in text and "softpolar_trapping_logistic" in text
    with pytest.raises(InvalidArgument, match="must be > 0"):
        region_block("x", 3, 1, "1", "1", ["0", 0, "1"], ["0", 0, "1"])     # an a-gap bound of 0: a tie
    with pytest.raises(InvalidArgument, match="certified"):
        atlas_boxes_to_coq(3, "1", [{**BOX, "status": "not certified"}])
    with pytest.raises(InvalidArgument, match="certified"):
        certificate_to_coq({"status": "not certified"})


#: a held-out initialization (not in examples/, not CERT's family) whose replay needs several steps (issue 37)
FEW_STEPS = {"loss": "logistic", "link": "softmax", "V": [["0.6", "0.2", "-0.1"], ["0.1", "0.3", "0.2"]],
             "a": ["0", "0.01", "-0.1"], "target": ["1", "0.5"]}


@pytest.mark.slow
@needs_coq
def test_certify_coq_replays_a_held_out_init_and_a_tie_bound_closure_is_refused(dev, tmp_path, capsys):
    from proofs_check.cli import main
    from theorems.coq.certstatement import compare
    (tmp_path / "I.json").write_text(json.dumps(FEW_STEPS))
    cert_path, v_path = tmp_path / "c.json", tmp_path / "c.v"
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--out", str(cert_path),
                 "--coq", str(v_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    info = summary["coq"]
    assert info["ok"] and info["compiled"] and info["replay"] and info["steps"] > 1, info
    assert info["axioms"]["other"] == [] and info["axioms"]["primitive_numbers"] > 0
    assert sorted(info["axioms"]["classical_reals"]) == sorted(coq.STDLIB_REAL_AXIOMS)
    cert = json.loads(cert_path.read_text())
    text = v_path.read_text()
    # the statement names I's numbers: V(0), a(0) (0.01 = 1/100), beta*, the winner
    assert "0%nat, 0%nat => (3 / 5)" in text and "1%nat => (1 / 100)" in text and "1%nat => (1 / 2)" in text
    assert compare(text, cert) == [] and f"in_Rplus 3 {cert['winner']}%nat (u t)" in text
    # the human line (--check with --coq) says Coq re-proved it from the initial condition, nothing more
    assert main(["certify", "--check", str(cert_path), "--coq", str(tmp_path / "d.v")]) == 0
    said = capsys.readouterr().out
    assert "interval integrator is not trusted" in said and "Coq checked only" not in said
    assert (tmp_path / "d.v").read_text() == text
    # the closure (the fallback when no replay chain lands): a tie bound is refused by Coq
    closure = certificate_to_coq(cert)
    first = closure.index("a 0%nat - a 1%nat >= ")
    end = closure.index(" /\\", first)
    bad = closure[:first] + "a 0%nat - a 1%nat >= 0" + closure[end:]
    assert coq.check_text(closure, "PointCert", dev=dev).ok
    run = coq.check_text(bad, "PointCertTie", dev=dev)
    assert not run.ok and "Cannot find witness" in run.output      # lra cannot prove a_1 > a_2 from a_1 - a_2 >= 0


def test_the_fallback_says_what_coq_did_not_check(tmp_path, monkeypatch, capsys):
    # no coqc, and no replay chain (forced): the closure is written and the lines say what Coq does not check
    import numerics
    from proofs_check.cli import main

    def no_chain(cert, **kw):
        raise InvalidArgument("replay: the boxes did not land (forced)")
    (tmp_path / "I.json").write_text(json.dumps(HELD_OUT))
    monkeypatch.setattr(coq, "coqc_path", lambda: None)
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--coq", str(tmp_path / "a.v")]) == 0
    said = capsys.readouterr().out
    assert "not compiled" in said and "Once compiled, Coq checks: from this V(0)" in said and "1 enclosure" in said
    assert "cert_polarizes" in (tmp_path / "a.v").read_text()
    monkeypatch.setattr(numerics, "replay_to_coq", no_chain)
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--coq", str(tmp_path / "b.v"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["coq"]
    assert info["replay"] is False and "forced" in info["replay_reason"] and not info["compiled"]
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--coq", str(tmp_path / "b.v")]) == 0
    said = capsys.readouterr().out
    assert "checks only" in said and "NOT checked by Coq" in said and "forced" in said
    assert "cert_in_Rplus" in (tmp_path / "b.v").read_text()


@pytest.mark.slow
@needs_coq
def test_a_sample_of_atlas_boxes_is_closed_in_coq(dev, tmp_path):
    from softpolar.atlas import run_atlas
    cert = run_atlas("conflict3", tmp_path / "a", start_width="1/2", min_width="1/4", map_size=32,
                     scheduler="inline", stream=io.StringIO(), draw=False)
    boxes = [b for b in cert["boxes"] if b["status"] == "certified"]
    # per winner the box that needed the most validated steps, then the two next most stepped boxes
    by_steps = sorted(boxes, key=lambda b: (-b["steps"], b["key"]))
    sample = [next(b for b in by_steps if b["winner"] == w) for w in sorted({b["winner"] for b in boxes})]
    sample += [b for b in by_steps if b not in sample][:2]
    assert len(sample) >= 4 and len({b["winner"] for b in sample}) >= 2 and max(b["steps"] for b in sample) > 0
    text = atlas_boxes_to_coq(cert["spec"]["n"], cert["spec"]["b"], sample)
    run = coq.check_text(text, "AtlasSample", dev=dev)
    assert run.ok, run.output


# ---- issue 37: the replay (Coq re-proves the certificate from its initial condition) ----
HELD_OUT = {"loss": "logistic", "link": "softmax", "V": [["0.9", "0.1", "-0.3"], ["0.1", "0.2", "0.4"]],
            "a": ["0.25", "0.05", "-0.15"], "target": ["1", "0.25"]}


@pytest.fixture(scope="module")
def held_cert(tmp_path_factory):
    import subprocess
    import sys
    folder = tmp_path_factory.mktemp("held")
    (folder / "I.json").write_text(json.dumps(HELD_OUT))
    out = subprocess.run([sys.executable, "-m", "softpolar", "certify", "--init", str(folder / "I.json"),
                          "--out", str(folder / "C.json")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads((folder / "C.json").read_text())


def test_replay_statement_names_the_initial_condition(held_cert):
    text = replay_to_coq(held_cert)
    assert "0%nat, 0%nat => (9 / 10)" in text and "1%nat, 2%nat => (2 / 5)" in text       # V(0)
    assert "cert_beta (k : nat) : R := match k with 0%nat => 1 | 1%nat => (1 / 4)" in text   # beta*
    assert "cert_a0 (k : nat) : R := match k with 0%nat => (1 / 4) | 1%nat => (1 / 20) | 2%nat => ((-3) / 20)" in text
    assert "u 0 k = cert_u0 k /\\ a 0 k = cert_a0 k" in text and "in_Rplus 3 0%nat" in text
    assert "Admitted" not in text and "Axiom" not in text


def test_statement_check_refuses_an_edited_a0_or_winner(held_cert):
    from theorems.coq.certstatement import compare
    text = replay_to_coq(held_cert)
    assert compare(text, held_cert) == []
    a0 = text.replace("0%nat => (1 / 4) | 1%nat => (1 / 20)", "0%nat => (1 / 4) | 1%nat => (1 / 21)")
    assert a0 != text and any(p.startswith("cert_a0:") for p in compare(a0, held_cert))
    win = text.replace("in_Rplus 3 0%nat (u t)", "in_Rplus 3 1%nat (u t)")
    assert win != text and any(p.startswith("cert_polarizes:") for p in compare(win, held_cert))
    twice = text + "\nDefinition cert_a0 (k : nat) : R := 0.\n"
    assert any("defined 2 times" in p for p in compare(twice, held_cert))


def test_statement_check_cli_exit_codes(held_cert, tmp_path):
    from theorems.coq.__main__ import main
    (tmp_path / "C.json").write_text(json.dumps(held_cert))
    (tmp_path / "F.v").write_text(replay_to_coq(held_cert).replace("(1 / 20)", "(1 / 21)", 1))
    assert main(["check", str(tmp_path / "F.v"), str(tmp_path / "C.json")]) == 1
    assert main(["check", str(tmp_path / "nope.v"), str(tmp_path / "C.json")]) == 2
    (tmp_path / "bad.json").write_text("{}")
    assert main(["check", str(tmp_path / "F.v"), str(tmp_path / "bad.json")]) == 2


@pytest.mark.slow
@needs_coq
def test_replay_compiles_and_edited_numbers_fail(held_cert, dev, tmp_path):
    text = replay_to_coq(held_cert)

    def compiles(src: str, name: str):
        f = dev.folder / f"{name}.v"
        f.write_text(src)
        return coq.run_coqc(f, dev.folder)

    run = compiles(text + "\nPrint Assumptions cert_polarizes.\n", "Replay37")
    assert run.ok, run.output[-2000:]
    (axs,) = coq.parse_assumptions(run.output)
    prim = ("PrimInt63.", "PrimFloat.", "Uint63.", "FloatAxioms.", "Int63.")
    # the classical reals plus the kernel's primitive-number specifications Interval computes with; no other axiom,
    # and not the existence axiom (the theorem is stated for a given solution)
    assert set(coq.STDLIB_REAL_AXIOMS) <= set(axs)
    assert [a for a in axs if a not in coq.STDLIB_REAL_AXIOMS and not a.startswith(prim)] == []
    # an edited a(0) entry: B0 no longer holds the initial state (lra fails)
    assert not compiles(text.replace("0%nat => (1 / 4) | 1%nat => (1 / 20)",
                                     "0%nat => (1 / 4) | 1%nat => (1 / 21)"), "Replay37a").ok
    # an edited step bound: a slope bound Coq's interval evaluation refutes
    m = re.search(r"Definition f0u \(k : nat\) : R := match k with 0%nat => \((\d+) / (\d+)\)", text)
    assert m
    edited = text.replace(m.group(0), m.group(0).replace(f"({m.group(1)} / {m.group(2)})", f"(1 / {m.group(2)})"))
    assert edited != text and not compiles(edited, "Replay37b").ok
    # another winner in the statement: the final box is not in R_2^+
    assert not compiles(text.replace("in_Rplus 3 0%nat (u t)", "in_Rplus 3 1%nat (u t)"), "Replay37c").ok


# an initialization already in R_1^+: a one-step replay (about 13 s of coqc), fast enough to check end to end
ONE_STEP = {"loss": "logistic", "link": "softmax", "V": [["1", "0", "0"], ["0", "0.1", "0"]],
            "a": ["1", "0", "-0.2"], "target": ["1", "0.25"]}


@pytest.mark.slow
@needs_coq
def test_replay_file_passes_the_certificate_check_only_and_a_doctored_one_fails(dev, tmp_path):
    import subprocess
    import sys

    from theorems.coq.certstatement import compare
    (tmp_path / "I.json").write_text(json.dumps(ONE_STEP))
    out = subprocess.run([sys.executable, "-m", "softpolar", "certify", "--init", str(tmp_path / "I.json"),
                          "--out", str(tmp_path / "C.json")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    cert = json.loads((tmp_path / "C.json").read_text())
    text = replay_to_coq(cert)
    assert text.count("Lemma step") == 1 and compare(text, cert) == []
    f = tmp_path / "F.v"
    f.write_text(text)
    ok = coq.check_file(f, dev, allowed=coq.CERTIFICATE_AXIOMS)
    assert ok.ok, ok.output[-2000:]
    used = set(ok.assumptions[next(k for k in ok.assumptions if k.endswith("cert_polarizes"))])
    assert used & set(coq.PRIMITIVE_NUMBER_AXIOMS) and used <= set(coq.CERTIFICATE_AXIOMS)
    # the same file under the development's list: refused, naming a primitive-number axiom
    strict = coq.check_file(f, dev)
    assert strict.compiled and not strict.ok and any("PrimFloat." in p or "FloatAxioms." in p for p in strict.problems)
    # doctored: the first step's upper box bound for a_1 shrunk below a(0)_1 = 1 (the planted bug): Coq refuses
    m = re.search(r"Definition B0u \(k : nat\) : R := match k with (.*?) \| _ => 0 end\.", text)
    arms = m.group(1).split(" | ")
    assert arms[3].startswith("3%nat => ")
    arms[3] = "3%nat => (99 / 100)"
    doctored = text.replace(m.group(0), m.group(0).replace(m.group(1), " | ".join(arms)))
    assert doctored != text
    f.write_text(doctored)
    bad = coq.check_file(f, dev, allowed=coq.CERTIFICATE_AXIOMS)
    assert not bad.ok and not bad.compiled


def test_certify_coq_never_overwrites_a_file_softpolar_did_not_write(tmp_path, capsys):
    from numerics.io import softpolar_output
    from proofs_check.cli import main
    (tmp_path / "I.json").write_text(json.dumps(HELD_OUT))
    foreign = tmp_path / "mine.v"
    foreign.write_text("(* my own proof *)\nLemma x : True. Proof. exact I. Qed.\n")
    before = foreign.read_bytes()
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--coq", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert "--coq" in err and "did not create" in err and foreign.read_bytes() == before
    # nor an input of the run, nor a folder
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--coq", str(tmp_path / "I.json")]) == 2
    assert main(["certify", "--init", str(tmp_path / "I.json"), "--coq", str(tmp_path)]) == 2
    # what certify --coq writes is recognised as softpolar's own (so a rerun may replace it), replay and closure alike
    held = _held_cert_fast(tmp_path)
    for text in (replay_to_coq(held), certificate_to_coq(held)):
        out = tmp_path / "out.v"
        out.write_text(text)
        assert softpolar_output(out) is not None


def _held_cert_fast(tmp_path):
    from numerics import certify, load_init
    (tmp_path / "H.json").write_text(json.dumps(HELD_OUT))
    return certify(load_init(str(tmp_path / "H.json"))).certificate


def test_every_number_of_the_statement_is_compared_with_the_certificate(held_cert):
    # issue 37, must show: an edited V(0) entry, beta* entry, a(0) entry, winner or n fails the check
    from theorems.coq.certstatement import compare
    text = replay_to_coq(held_cert)
    edits = {"cert_V0": ("0%nat, 0%nat => (9 / 10)", "0%nat, 0%nat => (8 / 10)"),
             "cert_beta": ("match k with 0%nat => 1 | 1%nat => (1 / 4)", "match k with 0%nat => 1 | 1%nat => (1 / 5)"),
             "cert_a0": ("0%nat => (1 / 4) | 1%nat => (1 / 20)", "0%nat => (1 / 4) | 1%nat => (1 / 19)"),
             "cert_winner": ("Definition cert_winner : nat := 0%nat.", "Definition cert_winner : nat := 1%nat."),
             "cert_n": ("Definition cert_n : nat := 3%nat.", "Definition cert_n : nat := 4%nat.")}
    for name, (old, new) in edits.items():
        assert text.count(old) == 1, name
        assert any(p.startswith(f"{name}:") for p in compare(text.replace(old, new), held_cert)), name


@pytest.fixture(scope="module")
def few_steps_text():
    from numerics import certify, load_init
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "I.json").write_text(json.dumps(FEW_STEPS))
        cert = certify(load_init(str(Path(tmp) / "I.json"))).certificate
    return cert, replay_to_coq(cert)


def test_the_coq_chain_is_shorter_than_the_fixed_step_and_starts_at_the_init(few_steps_text):
    cert, text = few_steps_text
    u0, a0, b = parse_init(cert["init"]).exact()
    chain = coq_chain(cert)
    fixed = replay_to_coq(cert, h=Fraction(1, 64)).count("\nLemma step")
    assert 1 < len(chain) <= fixed + 1
    assert chain[0]["Bl"] == chain[0]["Bu"] == [Fraction(x) for x in list(u0) + list(a0)]
    i, n = cert["winner"], 3
    last = chain[-1]
    assert all(last["Bl"][i] >= last["Bu"][j] and last["Bl"][n + i] > last["Bu"][n + j] for j in range(n) if j != i)
    assert text.count("\nLemma step") == len(chain) - 1
    # the entry time is the sum of the step lengths
    assert f"is in R_{i}^+ from tau = {sum(st['h'] for st in chain[:-1])} on" in text


def test_a_chain_that_blows_up_is_refused_with_a_reason_not_a_crash():
    # failed before: OverflowError 'cannot convert Infinity to integer ratio' (exp of a runaway a-priori box)
    wrong = {"status": "certified", "winner": 1, "init": {**HELD_OUT, "V": [["3", "0", "-3"], ["0", "0", "0"]],
                                                          "a": ["0", "0", "0"]}}
    with pytest.raises(InvalidArgument, match="replay: "):
        replay_to_coq(wrong, h=Fraction(1, 4), max_steps=400)


@pytest.mark.slow
@needs_coq
def test_an_edited_middle_step_of_a_multi_step_replay_fails_to_compile(few_steps_text, dev):
    _, text = few_steps_text
    k = text.count("\nLemma step") // 2
    assert k >= 1

    def compiles(src: str, name: str):
        f = dev.folder / f"{name}.v"
        f.write_text(src)
        return coq.run_coqc(f, dev.folder)

    def arms_of(which):
        m = re.search(rf"Definition {which} \(k : nat\) : R := match k with (.*?) \| _ => 0 end\.", text)
        return m, m.group(1).split(" | ")

    def value(arm):
        return exact_rational(re.sub(r"[() ]", "", arm.split(" => ", 1)[1]))

    # B_{k+1}: its upper bound for a_1 moved down by 1/1000 (below B_k + h f_k: lra fails); f_k: the lower slope
    # bound of a_1 set above its upper one (no value of the field lies between: interval fails)
    _, upper = arms_of(f"f{k}u")
    for which, new in ((f"B{k + 1}u", lambda q: q - Fraction(1, 1000)),
                       (f"f{k}l", lambda q: value(upper[3]) + Fraction(1, 1000))):
        m, arms = arms_of(which)
        arms[3] = f"3%nat => {coq_real(new(value(arms[3])))}"
        edited = text.replace(m.group(0), m.group(0).replace(m.group(1), " | ".join(arms)))
        assert edited != text
        assert not compiles(edited, f"ReplayMid_{which}").ok, which


# ---- issue 37, item 1: long horizons (the field's gap form) ----
def test_gap_form_slope_bounds_enclose_the_field_on_random_boxes():
    import numpy as np
    from numerics import replay_slope_bounds as _slopes
    rng = np.random.default_rng(7)
    for n in (3, 4):
        for _ in range(5):
            c = rng.normal(size=2 * n)
            El = [Fraction(float(x)) - Fraction(1, 8) for x in c]
            Eu = [Fraction(float(x)) + Fraction(1, 8) for x in c]
            b = Fraction(5, 4)
            lo, hi = _slopes(El, Eu, n, b)
            for _ in range(50):
                y = [float(lo_ + (hi_ - lo_) * rng.random()) for lo_, hi_ in zip(El, Eu)]
                u, a = np.array(y[:n]), np.array(y[n:])
                s = np.exp(a - a.max()) / np.exp(a - a.max()).sum()
                f = list(float(b) * s) + list(s * (u - s @ u))
                assert all(float(lo[k]) <= f[k] <= float(hi[k]) for k in range(2 * n))


def test_the_long_horizon_certificate_lands_in_coqs_chain():
    # CERT seed 0, n = 4 (tau* = 3.1): with the naive form of the field no chain of <= 160 steps landed (the
    # first-order boxes grew too wide by tau ~ 2.5); the gap form's bounds (s_k's exact range) keep them narrow
    from numerics import certify, family_init
    from numerics import REPLAY_COQ_MAX_STEPS
    r = certify(family_init(0, 4))
    assert r.status == "certified" and exact_rational(r.certificate["tau_star"]) > 3
    chain = coq_chain(r.certificate)
    assert 1 < len(chain) - 1 <= REPLAY_COQ_MAX_STEPS


# ---- issue 37: the atlas through the replay (each box re-proven from its box of initial states) ----
def test_an_atlas_box_chain_starts_at_the_box_of_initial_states_and_lands_only_for_its_winner():
    from numerics import box_chain, box_replay_to_coq
    from softpolar.atlas import load_slice
    from softpolar.atlas.coqreplay import initial_box
    sl = load_slice("conflict3")
    key = (3, 4, 7)
    lo, hi = initial_box(sl, key)
    wx, wy = (sl.x[1] - sl.x[0]) / 8, (sl.y[1] - sl.y[0]) / 8
    x0, x1, y0, y1 = sl.x[0] + 4 * wx, sl.x[0] + 5 * wx, sl.y[0] + 7 * wy, sl.y[0] + 8 * wy
    for x in (x0, (x0 + x1) / 2, x1):
        for y in (y0, y1):
            pt = [c + cx * x + cy * y for c, cx, cy in list(sl.u0) + list(sl.a0)]
            assert all(l_ <= p <= h_ for l_, p, h_ in zip(lo, pt, hi))
    assert any(l_ < h_ for l_, h_ in zip(lo, hi))
    chain = box_chain(lo, hi, sl.b, 1)
    assert chain[0]["Bl"] == lo and chain[0]["Bu"] == hi and len(chain) > 2
    with pytest.raises(InvalidArgument, match="replay: "):
        box_chain(lo, hi, sl.b, 0, max_steps=60)
    text = box_replay_to_coq(3, sl.b, [{"name": "q", "winner": 1, "lo": lo, "hi": hi, "chain": chain}])
    assert "Theorem box_q_polarizes" in text and text.count("Lemma box_q_step") == len(chain) - 1
    wider = [lo[0] - 1] + lo[1:]
    with pytest.raises(InvalidArgument, match="does not start"):
        box_replay_to_coq(3, sl.b, [{"name": "q", "winner": 1, "lo": wider, "hi": hi, "chain": chain}])


@pytest.fixture(scope="module")
def atlas_sample():
    from softpolar.atlas import run_atlas
    from softpolar.atlas.coqreplay import atlas_replay_to_coq
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        cert = run_atlas("conflict3", f"{tmp}/a", start_width="1/4", min_width="1/4", map_size=16,
                         scheduler="inline", stream=io.StringIO(), draw=False)
    boxes = sorted((b for b in cert["boxes"] if b["status"] == "certified"),
                   key=lambda b: (-Fraction(b["tau"]), b["key"]))
    keys = [boxes[0]["key"], next(b["key"] for b in boxes if b["winner"] != boxes[0]["winner"])]
    text, records = atlas_replay_to_coq(cert, keys)
    return cert, keys, text, records


@pytest.mark.slow
@needs_coq
def test_atlas_boxes_replayed_in_coq_and_edited_numbers_fail(atlas_sample, dev):
    cert, keys, text, records = atlas_sample
    assert all(r["replay"] for r in records) and max(r["steps"] for r in records) > 1

    def compiles(src: str, name: str):
        f = dev.folder / f"{name}.v"
        f.write_text(src)
        return coq.run_coqc(f, dev.folder)

    thm = "atlas_" + "_".join(str(k) for k in keys[0]) + "_polarizes"
    run = compiles(text + f"\nPrint Assumptions {thm}.\n", "AtlasReplay")
    assert run.ok, run.output[-2000:]
    (axs,) = coq.parse_assumptions(run.output)
    assert set(coq.STDLIB_REAL_AXIOMS) <= set(axs) and set(axs) <= set(coq.CERTIFICATE_AXIOMS)
    P = thm[:-len("polarizes")]
    # a wider box of initial states in the statement (hi of a_0 raised): B_0 no longer contains it (lra fails)
    m = re.search(rf"Definition {P}hi \(k : nat\) : R := match k with (.*?) \| _ => 0 end\.", text)
    arms = m.group(1).split(" | ")
    assert arms[3].startswith("3%nat => ")
    arms[3] = f"3%nat => {coq_real(exact_rational(re.sub(r'[() ]', '', arms[3].split(' => ')[1])) + 1)}"
    assert not compiles(text.replace(m.group(0), m.group(0).replace(m.group(1), " | ".join(arms))), "AtlasRa").ok
    # another winner for the box
    w = next(r["winner"] for r in records if r["key"] == keys[0])
    edited = text.replace(f"in_Rplus 3 {w}%nat (u t) (a t)) /\\\n  (forall j, (j < 3)%nat -> j <> {w}%nat",
                          f"in_Rplus 3 {(w + 1) % 3}%nat (u t) (a t)) /\\\n  (forall j, (j < 3)%nat -> j <> {w}%nat", 1)
    assert edited != text and not compiles(edited, "AtlasRb").ok
    # the gap form proven equal to the field: a sign flipped in it fails cert_FG
    bad = text.replace("(y 0%nat - y 1%nat)", "(y 1%nat - y 0%nat)", 1)
    assert bad != text and not compiles(bad, "AtlasRc").ok


@pytest.mark.slow
@needs_coq
def test_atlas_sample_checked_in_coq_file_by_file(atlas_sample, dev):
    from softpolar.atlas.coqreplay import check_in_coq, sample_keys
    cert, keys, _, _ = atlas_sample
    sample = sample_keys(cert)
    assert keys[0] in sample and len(sample) == len({b["winner"] for b in cert["boxes"] if "winner" in b})
    out = check_in_coq(cert, sample, dev)
    assert out["ok"] and out["files"] and all(r["replay"] for r in out["boxes"]), out
    assert sorted(x for f in out["files"] for x in f["boxes"]) == sorted("_".join(map(str, k)) for k in sample)


def test_atlas_claim_says_per_box_what_coq_checked(monkeypatch):
    from proofs_check import Context
    from softpolar.atlas import claims
    from theorems import coq as coqmod
    monkeypatch.setattr(coqmod, "coqc_path", lambda: None)
    replay = claims.coq_replay(Context(), {})
    assert "not_run" in replay and "not run" in claims.coq_summary(replay)
    monkeypatch.setattr(coqmod, "coqc_path", lambda: "/usr/bin/coqc")  # with coqc: the quick profile says why not
    replay = claims.coq_replay(Context(profile="quick"), {})
    from softpolar.atlas.coqreplay import SAMPLE_MAX_STEPS
    assert (f"full profile replays in Coq, per slice and winner, the certified box with the largest tau whose "
            f"chain fits {SAMPLE_MAX_STEPS} steps" in claims.coq_summary(replay))
    sample = "per winner the box with the largest tau whose chain fits 16 steps"
    rows = {"sample": sample, "slices": {"conflict3": {"coq_seconds": 12.0, "boxes": [
        {"key": [3, 4, 7], "replay": True, "steps": 4}, {"key": [3, 0, 4], "replay": False, "reason": "x"}]}}}
    said = claims.coq_summary(rows)
    assert "1 of 2 boxes (the sample: per winner the box with the largest tau whose chain fits 16 steps)" in said
    assert "4 enclosure steps" in said
    assert "1 closed by the integrator's enclosure only" in said
    assert "rests on the integrator's enclosure" in said


def test_the_full_profiles_coq_sample_is_the_largest_tau_within_the_step_bound(atlas_sample):
    """ATLAS's full-profile sample (issue 40: every box, or the largest-tau ones at 120-145 steps each, took
    hours): per winner the box with the largest tau whose chain fits the bound. A bound of 0 steps admits none."""
    from softpolar.atlas.coqreplay import bounded_sample_keys, replay_boxes
    cert = atlas_sample[0]
    keys = bounded_sample_keys(cert, max_steps=4, tries=40)
    _, records = replay_boxes(cert, keys)
    assert records and all(r["replay"] and 1 <= r["steps"] <= 4 for r in records)
    assert len({r["winner"] for r in records}) == len(records)  # one per winner
    by_key = {tuple(b["key"]): b for b in cert["boxes"]}
    for r in records:  # no larger-tau box of that winner within the bound and the search's reach fits
        larger = [b["key"] for b in cert["boxes"] if b["status"] == "certified" and b["winner"] == r["winner"]
                  and Fraction(by_key[tuple(r["key"])]["tau"]) < Fraction(b["tau"]) <= Fraction(4, 34)]
        _, above = replay_boxes(cert, larger)
        assert all(not a["replay"] or a["steps"] > 4 for a in above)
    assert bounded_sample_keys(cert, max_steps=0) == []
