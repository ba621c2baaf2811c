"""The index normal form with ranged indices: a delta is contracted only into an index provably in range.

Pins: the auditor's out-of-range contractions are no longer proved (or disproved when true), and a
property test compares the prover's verdict on random identities that mix token, output and concrete
indices with exact evaluation at several concrete sizes: never ``proved`` when a size refutes the
identity, never ``disproved`` when every size (and the disproof's own witness point) satisfies it.
"""
from __future__ import annotations


import pytest
import sympy as sp

from theorems import id_generic_model as G
from theorems.id_generic_nf import MIN_SIZE, D, N, in_range, is_zero, normal_form
from theorems.id_generic_proofs import free_ranges, prove_parts, refute_parts

b, c = sp.symbols("b c", integer=True, positive=True)
q = sp.Symbol("q", integer=True, positive=True)
dl = sp.KroneckerDelta


# ---- the auditor's expressions ------------------------------------------------------------------------
AUDIT = [
    # (label, expression that the old normal form reduced to 0 or to a wrong residue, ranges, true?)
    ("sum_{b<=n} delta_{b,3} = 1 (false at n = 2)", sp.Sum(dl(b, 3), (b, 1, N)) - 1, {}, False),
    ("sum_{b<=n} delta_{b,3} a_b = a_3 (false at n = 2)", sp.Sum(dl(b, 3) * G.a[b], (b, 1, N)) - G.a[3], {}, False),
    ("sum_{k<=d} delta_{k,q} g_k = g_q, q a token index", sp.Sum(dl(c, q) * G.g[c], (c, 1, D)) - G.g[q], {q: N}, False),
    ("sum_{b<=n} delta_{b,q} c_b = c_q, q an output index",
     sp.Sum(dl(b, q) * G.c[b], (b, 1, N)) - G.c[q], {q: D}, False),
    ("sum_{b<=n} delta_{b,n+1} = 0 (true)", sp.Sum(dl(b, N + 1), (b, 1, N)), {}, True),
]


@pytest.mark.parametrize("label, expr, ranges, true", AUDIT, ids=[a[0] for a in AUDIT])
def test_audit_expressions(label, expr, ranges, true):
    res = prove_parts([(label, expr)], label, ranges=ranges)
    if true:
        assert res.status == "proved", res.detail
        assert refute_parts([(label, expr)], label, ranges=ranges).status == "proved"  # never "disproved"
    else:
        assert res.status != "proved", res.detail
        assert not is_zero(expr, ranges)
        assert refute_parts([(label, expr)], label, ranges=ranges).status != "proved"


def test_the_old_contraction_is_what_the_audit_expressions_need():
    # the in-range versions of the same expressions are proved: the rule is restricted, not removed
    assert is_zero(sp.Sum(dl(b, 2), (b, 1, N)) - 1)              # 2 <= n for every n >= MIN_SIZE[n] = 2
    assert is_zero(sp.Sum(dl(b, 1) * G.g[b], (b, 1, D)) - G.g[1])
    assert is_zero(sp.Sum(dl(c, q) * G.g[c], (c, 1, D)) - G.g[q], {q: D})
    assert is_zero(sp.Sum(dl(b, N), (b, 1, N)) - 1)
    assert is_zero(sp.Sum(sp.Sum(dl(b, c) * G.c[b], (b, 1, N)), (c, 1, N)) - sp.Sum(G.c[b], (b, 1, N)))
    # a token and an output bound index: only min(n, d) terms survive, nothing is contracted
    assert normal_form(sp.Sum(sp.Sum(dl(b, c) * G.c[b], (b, 1, N)), (c, 1, D)))


@pytest.mark.parametrize("x, hi, ranges, expected", [
    (1, N, {}, True), (2, N, {}, True), (3, N, {}, None), (2, D, {}, None), (N + 1, N, {}, False),
    (0, D, {}, False), (N, N, {}, True), (q, N, {q: N}, True), (q, N, {q: D}, None), (q, N, {}, None),
    (N - 1, N, {}, True), (D + N, N, {}, False), (q + 1, N, {q: N}, None),
])
def test_in_range(x, hi, ranges, expected):
    assert in_range(x, hi, ranges) is expected


def test_free_ranges_from_slots_and_declarations():
    i, k = G.IDX["i"], G.IDX["k"]
    assert free_ranges(G.V[k, i] * G.a[i]) == {k: D, i: N}
    assert free_ranges(sp.Sum(G.V[k, i], (k, 1, D))) == {i: N}        # a bound k is not free
    assert free_ranges(dl(i, k)) == {}                                 # deltas alone give no range
    assert free_ranges(G.a[q] * G.g[q], {q: N}) == {q: N}
    with pytest.raises(Exception, match="declare its range"):
        free_ranges(G.a[q] * G.g[q])


def test_a_free_index_of_unknown_range_is_placed_at_position_1_only():
    # c_q - c_1 with q of unknown range (deltas only): the family must not put q at position 2
    t = G.IDX["t"]  # the families place t at position 2
    expr = sp.Sum(dl(b, t), (b, 1, N)) - 1
    res = refute_parts([("e", expr)], "e")
    assert res.status != "disproved", res.detail


# ---- property test: random identities with mixed ranges ---------------------------------------------
from theorems.id_generic_fuzz import run as _run


@pytest.mark.parametrize("seed", range(2))
def test_random_identities_with_mixed_ranges(seed, capsys):
    tally = _run(seed, 25)
    with capsys.disabled():
        print(f"\n[generic prover property test] seed {seed}, 25 identities: {tally}")
    assert sum(tally.values()) == 25
    assert any(k[0] == "proved" for k in tally)       # the generator reaches every verdict it should
    assert any(k[1] == "refuted" for k in tally)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 10))
def test_random_identities_with_mixed_ranges_long(seed, capsys):
    tally = _run(seed, 50)
    with capsys.disabled():
        print(f"\n[generic prover property test] seed {seed}, 50 identities: {tally}")
    assert sum(tally.values()) == 50


def test_min_sizes_are_the_premise_of_the_generic_statements():
    assert MIN_SIZE == {N: 2, D: 1, G.M: 1}


def test_the_property_test_catches_the_unranged_contraction(monkeypatch):
    # the planted bug: contract every delta whatever the range (the rule before ranges were tracked)
    import theorems.id_generic_nf as nf
    monkeypatch.setattr(nf, "in_range", lambda x, hi, ranges=None: True)
    with pytest.raises(AssertionError):
        _run(0, 25)
    assert is_zero(AUDIT[0][1])  # and the auditor's first expression is "proved" again
