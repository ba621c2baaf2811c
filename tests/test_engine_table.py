"""simulate picks its engine from one table (numerics.integrate.ENGINES), not from ``if backend ==``."""
from __future__ import annotations

import pytest

import numerics
from numerics import InvalidArgument
from numerics.integrate import ENGINES


def test_the_table_has_one_engine_a_backend():
    """A backend simulate does not know is refused in one line naming every engine of the table (and auto)."""
    with pytest.raises(InvalidArgument) as e:
        numerics.simulate(numerics.Problem.preset("logistic-toy"), t_end=1, backend="nope")
    assert "nope" in str(e.value) and "\n" not in str(e.value)
    assert all(repr(b) in str(e.value) or b in str(e.value) for b in [*ENGINES, "auto"])


@pytest.mark.parametrize("backend", ["numpy", "mpmath"])
def test_simulate_runs_the_engine_the_table_names(monkeypatch, backend):
    """Replace one table entry: simulate calls the replacement (the control: the other backend still runs its own)."""
    seen = []
    real = ENGINES[backend]

    def spy(problem, tstr, **kw):
        seen.append(backend)
        return real(problem, tstr, **kw)

    monkeypatch.setitem(ENGINES, backend, spy)
    problem = numerics.Problem.preset("logistic-toy")
    numerics.simulate(problem, t_end=1, times=[0, 1], backend=backend, dps=15)
    assert seen == [backend]
    other = "mpmath" if backend == "numpy" else "numpy"
    numerics.simulate(problem, t_end=1, times=[0, 1], backend=other, dps=15)
    assert seen == [backend]
