"""The GD loop tests its iterate for non-finite entries once per block (``FINITE_BLOCK`` updates) and replays a
failed block: the error must name the first non-finite step exactly, as a test after every update would."""
from __future__ import annotations

import numpy as np
import pytest

from numerics import IntegrationError, Problem, flow_rhs, gradient_descent
from numerics.integrate import FINITE_BLOCK


def _first_nonfinite_step(p, lr, steps):
    """The reference: a test after every update (the loop before blocks)."""
    rhs = flow_rhs(p.loss, p.link)
    V, a = p.V.copy(), p.a.copy()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for k in range(1, steps + 1):
            dV, da = rhs(V, a, p.target, p.X)
            V, a = V + lr * dV, a + lr * da
            if not (np.all(np.isfinite(V)) and np.all(np.isfinite(a))):
                return k
    return None


@pytest.mark.parametrize("lr", [1e6, 10.0, 3.0])
def test_nonfinite_step_is_the_first_one(lr):
    p = Problem.from_seed(0, d=2, n=2, loss="square", v_scale=1.0)
    k = _first_nonfinite_step(p, lr, 2000)
    assert k is not None
    with pytest.raises(IntegrationError, match=f"non-finite GD iterate at step {k}$"):
        gradient_descent(p, lr=lr, steps=2000)
    # a horizon that ends inside the failing block (the end-of-run test finds it), and one that ends before it
    with pytest.raises(IntegrationError, match=f"at step {k}$"):
        gradient_descent(p, lr=lr, steps=k, record=[0, k])
    from numerics import DescentWarning
    with pytest.warns(DescentWarning):  # finite, but ascending: returned with the warning
        g = gradient_descent(p, lr=lr, steps=k - 1, record=[0, k - 1])
    assert g.n_steps == k - 1


def test_the_replay_path_is_exercised():
    """At lr = 3 and lr = 10 the first non-finite step lies past the first block (the replay starts mid-run)."""
    p = Problem.from_seed(0, d=2, n=2, loss="square", v_scale=1.0)
    assert _first_nonfinite_step(p, 3.0, 2000) > 2 * FINITE_BLOCK
    assert FINITE_BLOCK > 1
