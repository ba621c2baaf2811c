"""Exact inputs stay exact into the mpmath backends; float64 rounding only in float64 backends."""
from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from numerics import InvalidArgument, Problem, gradient_descent, reduced_logistic, simulate

V_TXT = [["0.3", "-0.1", "0.05"], ["0.2", "0.1", "-0.7"]]
A_TXT = ["0.1", "-0.2", "0.3"]
W_TXT = ["0.6", "0.8"]


def _exact():
    return Problem(loss="logistic", V=V_TXT, a=A_TXT, target=W_TXT)


def _float64():
    return Problem(loss="logistic", V=np.array(V_TXT, dtype=float), a=np.array(A_TXT, dtype=float),
                   target=np.array(W_TXT, dtype=float))


def _rel(x, y):
    x, y = mpmath.mpf(x), mpmath.mpf(y)
    return abs(x - y) / max(abs(y), mpmath.mpf(10) ** -300)


def _worst(tr_a, tr_b):
    """Largest relative difference of a and V at the last time."""
    with mpmath.workdps(120):
        xs = list(tr_a.a[-1]) + [v for r in tr_a.V[-1] for v in r]
        ys = list(tr_b.a[-1]) + [v for r in tr_b.V[-1] for v in r]
        return max(_rel(x, y) for x, y in zip(xs, ys))


def test_problem_keeps_decimal_inputs_exactly():
    p = _exact()
    assert p.has_exact_inputs
    assert p.exact_values("V")[0][0] == Fraction(3, 10) and p.exact_values("a")[2] == Fraction(3, 10)
    assert p.V[0, 0] == 0.3  # the float64 array is the correctly rounded value
    assert 1e-17 < p.float64_rounding() < 1e-15
    assert p.input_note("mpmath").startswith("inputs: exact")
    assert "rounded to float64" in p.input_note("numpy")
    with mpmath.workdps(60):
        assert mpmath.mpf(p.mp_values("V")[0][0]) == mpmath.mpf("0.3")  # not mpf(0.3) from the float
        assert p.mp_values("V")[0][0] != mpmath.mpf(0.3)
    q = _float64()
    assert not q.has_exact_inputs and q.input_note("mpmath") == "inputs: float64 values (exact as given)"
    assert q.exact_values("V")[0][0] == Fraction(0.3) != Fraction(3, 10)
    # rationals and Decimals, too; to_json_dict writes exact text that reads back exactly
    r = Problem(loss="logistic", V=[[Fraction(1, 3), Decimal("1e-30"), 2]], a=["1/7", 0, "2.5e-3"],
                target=["1"])
    back = Problem.from_json(json.loads(json.dumps(r.to_json_dict())))
    assert back.same_as(r) and back.exact_values("V")[0][0] == Fraction(1, 3)
    assert r.to_json_dict()["a"] == ["1/7", "0", "0.0025"]


def test_json_numbers_are_read_as_exact_decimals(tmp_path):
    path = tmp_path / "init.json"
    path.write_text('{"loss": "logistic", "V": [[0.3, -0.1, 0.05], [0.2, 0.1, -0.7]], "a": [0.1, -0.2, 0.3], '
                    '"target": [0.6, 0.8]}')
    p = Problem.from_json(str(path))
    assert p.same_as(_exact()) and p.exact_values("target") == [Fraction(3, 5), Fraction(4, 5)]
    for bad in ('["x"]', '["1e99999"]', '[true]'):
        with pytest.raises(InvalidArgument):
            Problem(loss="logistic", V=[[0.1]], a=json.loads(bad), target=[1.0])


def test_dps50_from_decimal_strings_agrees_with_exact_reference_to_45_digits():
    """A dps-50 run from decimal strings vs a dps-70 run from the same exact decimals: >= 45 digits.

    The float64 path (the same decimals rounded to float64 first, then dps 50) differs at ~1e-17:
    the comparison can fail, and does for the old behaviour (inputs through float64)."""
    kw = dict(t_end="0.25", times=["0", "0.25"], backend="mpmath", clock="t")
    ref = simulate(_exact(), dps=70, **kw)
    run = simulate(_exact(), dps=50, **kw)
    old = simulate(_float64(), dps=50, **kw)
    assert _worst(run, ref) < mpmath.mpf(10) ** -45
    assert 1e-19 < _worst(old, ref) < 1e-15
    assert any(n.startswith("inputs: exact") for n in run.notes)
    assert "inputs: float64 values (exact as given)" in old.notes


def test_reduced_logistic_keeps_decimal_strings_exact():
    u0, a0 = ["0.3", "-0.1", "0.05"], ["0.1", "-0.2", "0.3"]
    kw = dict(tau_end="0.25", times=["0", "0.25"])
    ref = reduced_logistic(u0, a0, "1", dps=70, **kw)
    run = reduced_logistic(u0, a0, "1", dps=50, **kw)
    old = reduced_logistic([float(x) for x in u0], [float(x) for x in a0], "1", dps=50, **kw)
    with mpmath.workdps(120):
        worst = lambda tr: max(_rel(x, y) for x, y in zip(tr.u[-1] + tr.a[-1], ref.u[-1] + ref.a[-1]))
        assert worst(run) < mpmath.mpf(10) ** -45
        assert 1e-19 < worst(old) < 1e-15
    assert any(n.startswith("inputs: exact") for n in run.notes)
    num = reduced_logistic(u0, a0, "1", backend="numpy", **kw)
    assert any("rounded to float64" in n for n in num.notes)


def test_gd_in_mpmath_keeps_decimal_inputs_exact():
    ref = gradient_descent(_exact(), lr=0.5, steps=4, backend="mpmath", dps=70)
    run = gradient_descent(_exact(), lr=0.5, steps=4, backend="mpmath", dps=50)
    old = gradient_descent(_float64(), lr=0.5, steps=4, backend="mpmath", dps=50)
    assert _worst(run, ref) < mpmath.mpf(10) ** -45
    assert 1e-19 < _worst(old, ref) < 1e-15
    assert any(n.startswith("inputs: exact") for n in run.notes)


def test_cli_json_records_how_inputs_were_used(tmp_path, capsys):
    from softpolar import main
    path = tmp_path / "init.json"
    path.write_text(json.dumps({"loss": "logistic", "V": V_TXT, "a": A_TXT, "target": W_TXT}))
    for backend, word in (("mpmath", "inputs: exact"), ("numpy", "rounded to float64")):
        code = main(["simulate", "--init", str(path), "--t-end", "1", "--times", "0,1", "--backend", backend,
                     "--json", "--quiet"])
        assert code == 0
        data = json.loads(capsys.readouterr().out)
        assert any(n.startswith("inputs:") and word in n for n in data["meta"]["notes"]), data["meta"]
        assert data["problem"]["V"][0][0] == "0.3"


@pytest.mark.parametrize("bad", [["0.1", "x"], [["0.1"]], [True, 0.1], [], "0.1", [float("nan")], ["1e99999"]])
def test_reduced_logistic_rejects_bad_vectors(bad):
    with pytest.raises(InvalidArgument) as exc:
        reduced_logistic(bad, ["0", "0"][:len(bad) if isinstance(bad, list) and bad else 2], "1", tau_end="0.1")
    assert "u0" in str(exc.value)


def test_reduced_logistic_accepts_mixed_exact_entries():
    tr = reduced_logistic([Fraction(1, 3), Decimal("0.1"), 0.25, mpmath.mpf("0.5")], ["0", 0, "1/7", 2], "1",
                          tau_end="0.1", times=["0", "0.1"], dps=20)
    with mpmath.workdps(40):  # rounded to 20 digits from the exact rationals (not from a float64)
        assert abs(tr.u[0][0] - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -20
        assert abs(tr.a[0][2] - mpmath.mpf(1) / 7) < mpmath.mpf(10) ** -20
        assert abs(tr.u[0][1] - mpmath.mpf("0.1")) < mpmath.mpf(10) ** -20
