"""The generated right-hand sides agree with torch autograd, across backends."""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent

from numerics import flow_rhs
from theorems import LINKS, LOSSES

from .helpers import assert_close

# relu-norm / sum-norm are only defined where the normalizer is non-zero: shift
# the logits to make the sum positive, as the authors' a(0)=1+0.1N does.
_SHIFT = {"relu-norm": 2.0, "sum-norm": 2.0}


def _inputs(rng, loss, link, d=4, n=6):
    V = rng.normal(size=(d, n))
    a = rng.normal(size=n) + _SHIFT.get(link, 0.0)
    target = rng.dirichlet(np.ones(d)) if loss == "kl" else rng.normal(size=d)
    X = rng.normal(size=(d, d)) if loss == "square" else None
    return V, a, target, X


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("link", sorted(LINKS))
def test_numpy_and_torch_match_autograd(loss, link, rng):
    V, a, target, X = _inputs(rng, loss, link)
    t = lambda x: None if x is None else torch.tensor(x, dtype=torch.float64)
    Vt, at = t(V).requires_grad_(), t(a).requires_grad_()
    L = flow_rhs(loss, link, backend="torch").loss_value(Vt, at, t(target), t(X))
    gV, ga = torch.autograd.grad(L, (Vt, at))
    dV, da = flow_rhs(loss, link)(V, a, target, X)
    assert_close(dV, -gV, what="numpy dV vs autograd")
    assert_close(da, -ga, what="numpy da vs autograd")
    dVt, dat = flow_rhs(loss, link, backend="torch")(t(V), t(a), t(target), t(X))
    assert_close(dVt, -gV, what="torch dV vs autograd")
    assert_close(dat, -ga, what="torch da vs autograd")


def test_negative_control_sign_flip_is_caught(rng):
    """The comparison has power: a flipped sign in da fails the same assertion."""
    V, a, target, X = _inputs(rng, "logistic", "softmax")
    Vt, at = torch.tensor(V, requires_grad=True), torch.tensor(a, requires_grad=True)
    L = flow_rhs("logistic", "softmax", backend="torch").loss_value(Vt, at, torch.tensor(target))
    _, ga = torch.autograd.grad(L, (Vt, at))
    _, da = flow_rhs("logistic", "softmax")(V, a, target)
    with pytest.raises(AssertionError):
        assert_close(-da, -ga)


def test_batched_torch_matches_loop(rng):
    B, d, n = 5, 3, 4
    V = rng.normal(size=(B, d, n))
    a = rng.normal(size=(B, n))
    w = rng.normal(size=(B, d))
    rhs_t = flow_rhs("logistic", "softmax", backend="torch")
    dV, da = rhs_t(torch.tensor(V), torch.tensor(a), torch.tensor(w))
    for b in range(B):
        dVb, dab = flow_rhs("logistic", "softmax")(V[b], a[b], w[b])
        assert_close(dV[b], dVb)
        assert_close(da[b], dab)


def test_softmax_is_stable_at_extreme_logits():
    a = np.array([1000.0, -1000.0, 0.0])
    phi = flow_rhs("logistic", "softmax").phi(a)
    assert np.all(np.isfinite(phi)) and phi[0] == 1.0
