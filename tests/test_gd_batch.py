"""numerics.gradient_descent_batch: several problems in one stacked GD loop. Every member must equal the
single-problem run bit for bit (the batched right-hand side evaluates each member with the kernels it runs
alone); bad input names the argument; a non-finite member raises at its first non-finite step; and the
in-place, segmented loop of numerics.gradient_descent still gives the iterates of the plain loop."""
from __future__ import annotations

import numpy as np
import pytest

from numerics import (DescentWarning, IntegrationError, InvalidArgument, Problem, flow_rhs, gradient_descent,
                      gradient_descent_batch)
from numerics.integrate import FINITE_BLOCK


def _plain_loop(p, lr, record):
    """The reference: ``V = V + lr * dV`` after every step, a copy at each recorded iteration."""
    rhs = flow_rhs(p.loss, p.link, frozen=p.frozen)
    V, a = p.V.copy(), p.a.copy()
    out = {}
    for k in range(record[-1] + 1):
        if k in record:
            out[k] = (V.copy(), a.copy())
        dV, da = rhs(V, a, p.target, p.X)
        V, a = V + lr * dV, a + lr * da
    return out


def _same(t, u):
    """Two trajectories with identical float64 numbers (not just close) and bookkeeping."""
    for name in ("a", "V", "loss", "entropy", "weights", "max_weight", "one_minus_max"):
        np.testing.assert_array_equal(np.asarray(getattr(t, name), float), np.asarray(getattr(u, name), float),
                                      err_msg=name)
    assert t.times == u.times and t.n_steps == u.n_steps and t.method == u.method and t.argmax == u.argmax


_CASES = [  # (loss, link, d, n, extra): square with a design, no design, logistic, kl, other links, frozen
    ("square", "softmax", 20, 20, {"kappa": 3.0}),
    ("square", "softmax", 3, 5, {}),
    ("logistic", "softmax", 4, 3, {"a0": "noise"}),
    ("kl", "softmax", 3, 6, {"a0": "noise"}),
    ("square", "sigmoid", 3, 4, {"a0": "noise"}),
    ("logistic", "softmax1", 2, 9, {"a0": "noise"}),
]


@pytest.mark.parametrize("loss,link,d,n,extra", _CASES)
def test_every_member_equals_its_single_run(loss, link, d, n, extra):
    probs = [Problem.from_seed(s, d=d, n=n, loss=loss, link=link, v_scale=0.5, **extra) for s in range(3)]
    record = [0, 1, 7, FINITE_BLOCK, FINITE_BLOCK + 3, 700]
    batch = gradient_descent_batch(probs, lr=0.05, steps=700, record=record)
    assert len(batch) == 3
    for p, t in zip(probs, batch):
        _same(t, gradient_descent(p, lr=0.05, steps=700, record=record))
        assert any("batch of 3" in note for note in t.notes)


def test_frozen_members_and_default_record():
    probs = [Problem.from_seed(s, d=3, n=4, loss="square", v_scale=0.5).with_frozen(["V[1]", "a[0]"])
             for s in range(2)]
    batch = gradient_descent_batch(probs, lr=0.1, steps=300)
    for p, t in zip(probs, batch):
        _same(t, gradient_descent(p, lr=0.1, steps=300))
        np.testing.assert_array_equal(np.asarray(t.V[-1])[:, 1], p.V[:, 1])  # the frozen column stays
        assert float(t.a[-1][0]) == float(p.a[0])


def test_single_run_matches_the_plain_loop_bit_for_bit():
    """The in-place update and the segments between records and finiteness tests change no bit."""
    p = Problem.from_seed(2, d=4, n=5, loss="square", v_scale=1.0, kappa=2.0)
    record = [0, 3, FINITE_BLOCK - 1, FINITE_BLOCK, 2 * FINITE_BLOCK + 1, 900]
    ref = _plain_loop(p, 0.03, record)
    g = gradient_descent(p, lr=0.03, steps=1000, record=record)
    for j, k in enumerate(record):
        np.testing.assert_array_equal(np.asarray(g.V[j], float), ref[k][0])
        np.testing.assert_array_equal(np.asarray(g.a[j], float), ref[k][1])
    assert g.n_steps == 900


def test_one_member_batch_and_progress():
    p = Problem.preset("logistic-toy")
    (t,) = gradient_descent_batch((p,), lr=0.1, steps=2000, record=[0, 10, 2000], progress=True)
    _same(t, gradient_descent(p, lr=0.1, steps=2000, record=[0, 10, 2000]))


def test_bad_input_names_the_argument():
    p = Problem.from_seed(0, d=2, n=3, loss="square")
    q = Problem.from_seed(1, d=2, n=4, loss="square")
    cases = [
        (p, "problems=.*list of numerics.Problem"),
        ("abc", "problems="),
        (3, "problems=3"),
        ([], r"problems=\[\]"),
        ([p, "x"], r"problems\[1\]"),
        ([p, q], r"problems\[1\] has V shape \(2, 4\)"),
        ([p, Problem.from_seed(0, d=2, n=3, loss="logistic")], r"problems\[1\] has loss 'logistic'"),
        ([p, Problem.from_seed(0, d=2, n=3, loss="square", link="sigmoid")], r"problems\[1\] has link"),
        ([p, p.with_frozen(["a"])], r"problems\[1\] has frozen"),
        ([p, Problem.from_seed(0, d=2, n=3, loss="square", kappa=2.0)], r"problems\[1\] has .*X shape"),
    ]
    for problems, match in cases:
        with pytest.raises(InvalidArgument, match=match):
            gradient_descent_batch(problems, lr=0.1, steps=10)
    for kw, arg in [({"lr": 0}, "lr"), ({"lr": 0.1, "steps": -1}, "steps"), ({"lr": 0.1, "record": [5, 2]}, "record"),
                    ({"lr": 0.1, "record": [0, 99]}, "record"), ({"lr": 0.1, "record": 3}, "record"),
                    ({"lr": 0.1, "steps": 100, "max_steps": 50}, "max_steps")]:
        with pytest.raises(InvalidArgument, match=arg):
            gradient_descent_batch([p, p], **{"steps": 10, **kw})


def test_a_nonfinite_member_raises_at_its_first_nonfinite_step():
    good = Problem.from_seed(0, d=2, n=2, loss="square", v_scale=0.1)
    bad = Problem.from_seed(0, d=2, n=2, loss="square", v_scale=1.0)
    with pytest.raises(IntegrationError) as single:
        gradient_descent(bad, lr=3.0, steps=2000)
    k = int(str(single.value).rsplit(" ", 1)[-1])
    assert k > FINITE_BLOCK  # past the first block: the replay starts mid-run
    with pytest.raises(IntegrationError, match=rf"non-finite GD iterate at step {k} \(problems\[1\]\)$"):
        gradient_descent_batch([good, bad, good], lr=3.0, steps=2000)
    # a horizon ending inside the failing block (the end-of-run test finds it)
    with pytest.raises(IntegrationError, match=rf"at step {k} \(problems\[1\]\)$"):
        gradient_descent_batch([good, bad], lr=3.0, steps=k, record=[0, k])


def test_each_member_warns_on_ascent_as_alone():
    bad = Problem.from_seed(0, d=2, n=2, loss="square", v_scale=1.0)
    alone = gradient_descent(Problem.from_seed(0, d=2, n=2, loss="square", v_scale=0.1), lr=0.01, steps=50)
    assert not any(n.startswith("WARNING") for n in alone.notes)
    with pytest.raises(IntegrationError) as single:
        gradient_descent(bad, lr=3.0, steps=2000)
    k = int(str(single.value).rsplit(" ", 1)[-1])
    with pytest.warns(DescentWarning):
        runs = gradient_descent_batch([bad, bad], lr=3.0, steps=k - 1, record=[0, k - 1])
    assert all(any(n.startswith("WARNING") for n in t.notes) for t in runs)


def test_the_record_mutant_acts_on_the_batch():
    """C25's witness mutant (a record aliasing the last iterate) patches the code path of the batch too."""
    from proofs_check.mutation import mutant

    probs = [Problem.from_seed(s, d=2, n=3, loss="square", v_scale=1.0) for s in range(2)]
    g = gradient_descent_batch(probs, lr=0.05, steps=50, record=[0, 10, 50])
    with mutant("witness.gd_record_alias").patch():
        h = gradient_descent_batch(probs, lr=0.05, steps=50, record=[0, 10, 50])
    for gi, hi in zip(g, h):
        assert not np.allclose(np.asarray(gi.a[0], float), np.asarray(gi.a[-1], float))
        for k in range(3):
            np.testing.assert_array_equal(np.asarray(hi.a[k], float), np.asarray(gi.a[-1], float))
