"""The induction and classification data generators (paper-notes#transformers)."""
from __future__ import annotations

import numpy as np
import pytest

from softpolar.experiments import BOS, CLS, make_classification_data, make_induction_data, token_label
from theorems import InvalidArgument


def test_induction_sequences_follow_the_spec(seed):
    x, y = make_induction_data(500, seed=seed)
    assert x.shape == y.shape == (500, 12) and x.dtype == np.int64
    assert (x[:, 0] == BOS).all()
    main = x[:, 1:11]
    assert ((main >= 1) & (main <= 49)).all()
    assert all(len(set(row)) == 10 for row in main), "prefix tokens are drawn without replacement"
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])  # target = input shifted by one
    query, answer = x[:, -1], y[:, -1]
    assert ((query >= 51) & (query <= 99)).all(), "shifted query lives in 51..99"
    for row, q, c in zip(main, query, answer):
        k = int(np.flatnonzero(row == q - 50)[0])
        expected = row[k + 1] if k + 1 < 10 else q  # edge case: the shifted query itself
        assert c == expected
    # every position k (including the edge case) occurs
    ks = {int(np.flatnonzero(r == q - 50)[0]) for r, q in zip(main, query)}
    assert ks == set(range(10))


def test_induction_without_shift_and_determinism():
    x, y = make_induction_data(50, shift_query=False, seed=3)
    assert x[:, -1].max() <= 49
    x2, y2 = make_induction_data(50, shift_query=False, seed=3)
    np.testing.assert_array_equal(x, x2)
    x3, _ = make_induction_data(50, shift_query=False, seed=4)
    assert not np.array_equal(x, x3)


def test_classification_sequences_follow_the_spec(seed):
    x, labels = make_classification_data(400, seed=seed)
    assert x.shape == (400, 11) and labels.shape == (400,)
    assert (x[:, -1] == CLS).all()
    content = x[:, :-1]
    groups = token_label(content, vocab_size=41)
    assert (groups == labels[:, None]).all(), "every token comes from its label's group"
    assert all(len(set(r)) == 10 for r in content)
    # vocab 41: a sequence is a permutation of the whole group
    assert all(set(r) == set(range(1 + 10 * lab, 11 + 10 * lab)) for r, lab in zip(content, labels))
    assert set(labels.tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize("kwargs", [dict(vocab_size=40), dict(vocab_size=21), dict(n=0)])
def test_classification_rejects_bad_sizes(kwargs):
    args = {"n": 3, "seed": 0, **kwargs}
    with pytest.raises(InvalidArgument):
        make_classification_data(args.pop("n"), **args)


def test_induction_rejects_bad_sizes():
    with pytest.raises(InvalidArgument, match="vocab_size"):
        make_induction_data(3, vocab_size=5, seed=0)
    with pytest.raises(InvalidArgument, match="seq_length"):
        make_induction_data(3, seq_length=3, seed=0)
