"""Atlas spec constants are read exactly from their digits, by the engine and by the checker (each its own code).

Found by review: ``u0 = ['x', '0.123456789012345678901', '-1']`` was read as 1543209862654321/12500000000000000
(the float64 nearest to it) and ``'1e-400'`` as 0, by both the engine and the independent checker
(``Fraction(str(float))``), while the certificate kept the original text: both proved things about a
number the spec does not say.
"""
from __future__ import annotations

import time
from fractions import Fraction

import pytest

from theorems import InvalidArgument

SPEC = {"name": "s", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"], "x": ["-1", "1"],
        "y": ["-1", "1"]}
LONG = "0.123456789012345678901"


def _engine(u1):
    from softpolar.atlas import load_slice

    return load_slice({**SPEC, "u0": ["x", u1, "-1"]}).u0[1][0]


def _checker(u1):
    from numerics.validated.atlas_check import check_spec

    return check_spec({**SPEC, "u0": ["x", u1, "-1"]}).u0[1][0]


@pytest.mark.parametrize("read", [_engine, _checker])
@pytest.mark.parametrize("text, value", [
    (LONG, Fraction(123456789012345678901, 10 ** 21)),          # was 1543209862654321/12500000000000000
    (f"2*{LONG} - 1/3", 2 * Fraction(123456789012345678901, 10 ** 21) - Fraction(1, 3)),
    ("0.1", Fraction(1, 10)),
    ("2.5e-30", Fraction(1, 4 * 10 ** 29)),
    ("1E3", Fraction(1000)),
    (".5", Fraction(1, 2)),
    ("3/7", Fraction(3, 7)),
])
def test_constants_are_read_exactly(read, text, value):
    assert read(text) == value


def test_engine_refuses_a_constant_it_cannot_take_exactly_naming_it():
    for text in ("1e-400", "1e-31", "1_0.5", "1e-999999999"):
        t0 = time.perf_counter()
        with pytest.raises(InvalidArgument, match=f"u0\\[1\\]={text!r} is not allowed \\(the constant {text}: "):
            _engine(text)
        assert time.perf_counter() - t0 < 10  # a bound on a hang, not a timing claim


def test_checker_refuses_the_same_constants():
    for text in ("1e-400", "1e-31", "1_0.5", "1e-999999999"):
        with pytest.raises(ValueError, match=repr(text)[1:-1]):
            _checker(text)


def test_the_presets_read_as_before_and_the_bounds_are_the_engines():
    from numerics.validated import atlas_check as ac
    from softpolar.atlas import engine

    assert ac.MAX_EXPONENT == engine.MAX_SPEC_EXPONENT
    for name, spec in engine.PRESETS.items():
        sl, sv = engine.load_slice(name), ac.check_spec(spec)
        assert (sl.u0, sl.a0) == (sv.u0, sv.a0)
        assert all(c.denominator in (1, 2) for row in sl.u0 + sl.a0 for c in row)


def test_an_atlas_with_a_long_decimal_constant_passes_the_checker(tmp_path):
    pytest.importorskip("flint")
    from numerics import check_atlas
    from softpolar.atlas import run_atlas

    spec = {**SPEC, "u0": ["x", f"{LONG} - 1/2", "-1"]}
    cert = run_atlas(spec, tmp_path / "o", start_width="1/2", min_width="1/4", map_size=16, scheduler="inline",
                     progress=False, draw=False)
    assert cert["spec"]["u0"][1] == f"{LONG} - 1/2"
    res = check_atlas(cert)
    assert res.passed and res.verified == res.certified > 0, res.problems
