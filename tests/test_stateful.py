r"""A Hypothesis state machine that steps the flow in torch and checks the invariants after every rule.

State: a problem $(V,a,\text{target},X)$ from :func:`numerics.strategies.flow_problems`.
Rules: an RK4 step and a gradient-descent step of the torch right-hand side with a
random fraction of the safe step $1/(2H)$ (``tests.helpers.smoothness_bound``), a shift
$a\mapsto a+c\mathbf 1$, and a permutation of the tokens. Checked after every rule:

* the loss does not increase on a step (Armijo decrease for GD), and is unchanged by
  a shift (softmax shift invariance) or a permutation (equivariance);
* $\sum_ia_i$ is conserved by the steps (claim 4 [D]) and moves by exactly $nc$ on a shift;
* logistic: $(I-P_w)V$ is fixed (claim 6 [D]); it is permuted with the tokens;
* everything stays finite.

Tolerances accumulate the rounding of each update (the size of what was added),
see ``tests/helpers.py``.
"""
from __future__ import annotations

import numpy as np
import pytest
torch = pytest.importorskip("torch")  # a hard dependency; skip, not error, where it is absent
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test,
)

from numerics import flow_rhs
from numerics.strategies import FlowProblem, flow_problems

from .helpers import (DTYPES, FlowScales, TextbookRHS, assert_close, assert_le, rk4_step, smoothness_bound, to_numpy,
                      torch_arrays)


class FlowMachine(RuleBasedStateMachine):
    device = "cpu"
    dtype = "float64"
    mutation = None  # a TextbookRHS mutation, for the negative control

    @initialize(problem=flow_problems(max_n=4, max_d=4, logit_max_abs=50.0))
    def start(self, problem):
        self.problem = problem
        self.rhs = flow_rhs(problem.loss, backend="torch") if self.mutation is None else \
            TextbookRHS(problem.loss, self.mutation)
        self.V, self.a, self.target, self.X = torch_arrays(problem, device=self.device, dtype=self.dtype)
        self.sum_a = float(np.sum(problem.a))  # expected value of sum(a)
        self.a_rounding = problem.n * float(np.max(np.abs(problem.a)))  # scale of the additions to a
        self.L = self._loss()
        if problem.loss == "logistic":
            w = problem.target
            self.P = np.eye(problem.d) - np.outer(w, w) / (w @ w)
            self.PV = self.P @ problem.V
            self.v_rounding = problem.d * float(np.max(np.abs(problem.V)))

    # ---- helpers ---------------------------------------------------------------------
    def _state(self) -> FlowProblem:
        return FlowProblem(self.problem.loss, to_numpy(self.V), to_numpy(self.a), self.problem.target,
                           self.problem.X)

    def _loss(self) -> float:
        return float(self.rhs.loss_value(self.V, self.a, self.target, self.X))

    def _loss_scale(self, state) -> float:
        sc = FlowScales(state)
        terms = np.abs(state.V) @ sc.s + np.abs(state.target)
        return abs(self.L) + float(terms @ terms) + float(sc.G @ terms)

    def _after_step(self, state, a_old, V_old, h, loss_bound):
        sc = FlowScales(state)
        L_new = self._loss()
        assert_le(L_new, loss_bound, dtype=self.dtype, scale=self._loss_scale(state), cond=sc.cond,
                  what="loss does not increase on a step")
        self.L = L_new
        self.a_rounding += float((self.a - a_old).abs().sum()) + 4 * h * float(np.sum(sc.da))
        if self.problem.loss == "logistic":
            self.v_rounding += self.problem.d * float((self.V - V_old).abs().max() + self.V.abs().max())

    # ---- rules -----------------------------------------------------------------------
    @rule(fraction=st.floats(0.05, 1.0))
    def rk4(self, fraction):
        state = self._state()
        h = fraction / (2 * smoothness_bound(state))
        a_old, V_old = self.a, self.V
        self.V, self.a = rk4_step(self.rhs, self.V, self.a, self.target, self.X, h)
        self._after_step(state, a_old, V_old, h, self.L)

    @rule(fraction=st.floats(0.05, 1.0))
    def gradient_descent(self, fraction):
        state = self._state()
        eta = fraction / (2 * smoothness_bound(state))
        dV, da = self.rhs(self.V, self.a, self.target, self.X)
        a_old, V_old = self.a, self.V
        self.V, self.a = self.V + eta * dV, self.a + eta * da
        norm2 = float((dV * dV).sum() + (da * da).sum())
        self._after_step(state, a_old, V_old, eta, self.L - 0.5 * eta * norm2)

    @rule(c=st.floats(-100.0, 100.0))
    def shift_logits(self, c):
        state = self._state()
        self.a = self.a + c
        self.sum_a += self.problem.n * c
        self.a_rounding += self.problem.n * (float(self.a.abs().max()) + abs(c))
        L_new = self._loss()
        # the rounding of a + c is a relative error eps (|a| + |c|) of e^{a - max a}
        cond = FlowScales(state).cond * (1 + 2 * (float(np.max(np.abs(state.a))) + abs(c)))
        assert_close(L_new, self.L, dtype=self.dtype, scale=self._loss_scale(state), cond=cond,
                     what="loss invariant under a + c 1")
        self.L = L_new

    @rule(data=st.data())
    def permute_tokens(self, data):
        perm = data.draw(st.permutations(range(self.problem.n)))
        idx = torch.as_tensor(perm, device=self.V.device)
        state = self._state()
        self.V, self.a = self.V[:, idx], self.a[idx]
        if self.problem.loss == "logistic":
            self.PV = self.PV[:, np.asarray(perm)]
        L_new = self._loss()
        assert_close(L_new, self.L, dtype=self.dtype, scale=self.problem.n * self._loss_scale(state),
                     cond=FlowScales(state).cond, what="loss invariant under a permutation of the tokens")
        self.L = L_new

    # ---- invariants ------------------------------------------------------------------
    @invariant()
    def finite(self):
        assert torch.isfinite(self.V).all() and torch.isfinite(self.a).all()

    @invariant()
    def sum_of_logits(self):
        assert_close(float(self.a.sum()), self.sum_a, dtype=self.dtype, scale=4 * self.a_rounding,
                     what="sum a conserved")

    @precondition(lambda self: self.problem.loss == "logistic")
    @invariant()
    def orthogonal_part_of_V(self):
        assert_close(self.P @ to_numpy(self.V), self.PV, dtype=self.dtype, scale=4 * self.v_rounding,
                     what="(I - P_w) V fixed")


# Steps per example: 20 keeps the CI run short (each RK4 step is four RHS calls);
# the thorough profile's 500 examples explore the rest.
_SETTINGS = settings(stateful_step_count=20)


def _machine(device: str, dtype: str):
    cls = type(f"FlowMachine_{device}_{dtype}", (FlowMachine,), {"device": device, "dtype": dtype})
    case = cls.TestCase
    case.settings = _SETTINGS
    if device == "cuda":
        case = pytest.mark.gpu(case)
    return case


TestFlowMachineCPU = _machine("cpu", "float64")
TestFlowMachineCUDA = _machine("cuda", "float64")
if "float32" in DTYPES:
    TestFlowMachineCPUFloat32 = _machine("cpu", "float32")
    TestFlowMachineCUDAFloat32 = _machine("cuda", "float32")


@pytest.mark.parametrize("mutation", ["flip_da", "wrong_dell"])
def test_negative_control_machine_finds_a_wrong_field(mutation):
    """The same machine, driving a field with a deliberate bug, fails (derandomized, no shrinking)."""
    cls = type(f"Mutant_{mutation}", (FlowMachine,), {"mutation": mutation})
    with pytest.raises(AssertionError):
        run_state_machine_as_test(cls, settings=settings(
            max_examples=200, stateful_step_count=20, derandomize=True, database=None,
            phases=[Phase.generate], suppress_health_check=list(HealthCheck)))


# ---- the output folder's life cycle (never delete what softpolar did not write) ---------------
class ReportFolderMachine(RuleBasedStateMachine):
    """``verify``'s report folder: created, refilled, refused; never loses a file it did not write.

    Model: the target is ``absent``, an ``empty`` folder, ``ours`` (an earlier report), or a
    ``file``; ``foreign`` maps the names of files a user put there to their contents. A write
    must succeed exactly when the target is absent, an empty folder, or an earlier report with
    nothing foreign in it; a refused write raises :class:`InvalidArgument` and changes nothing.
    After every rule: every foreign file is intact, no temporary folder is left behind, and an
    ``ours`` folder holds exactly the files its marker lists (plus the marker).
    """

    def __init__(self):
        super().__init__()
        import tempfile
        from pathlib import Path
        self.root = Path(tempfile.mkdtemp(prefix="softpolar-report-machine-"))
        self.out = self.root / "rep"
        self.state = "absent"
        self.foreign = {}

    def teardown(self):
        import shutil
        shutil.rmtree(self.root, ignore_errors=True)

    @rule()
    def write(self):
        from proofs_check.report import write_report
        from theorems import InvalidArgument

        from .test_report import _env, _result

        ok = self.state == "absent" or (self.state in ("empty", "ours") and not self.foreign)
        if ok:
            write_report([_result()], self.out, _env(), 1.0)
            self.state = "ours"
        else:
            with pytest.raises(InvalidArgument):
                write_report([_result()], self.out, _env(), 1.0)

    @precondition(lambda self: self.state in ("empty", "ours"))
    @rule(name=st.sampled_from(["thesis.tex", "report.md", "fig.png", "notes", ".hidden"]),
          text=st.text(max_size=5))
    def add_foreign(self, name, text):
        if self.state == "ours" and name not in self.foreign and (self.out / name).exists():
            name = "x-" + name  # a user file next to ours, never over ours (that would be a user edit)
        (self.out / name).write_bytes(text.encode())
        self.foreign[name] = text

    @precondition(lambda self: bool(self.foreign))
    @rule(data=st.data())
    def remove_foreign(self, data):
        name = data.draw(st.sampled_from(sorted(self.foreign)))
        (self.out / name).unlink()
        del self.foreign[name]

    @precondition(lambda self: self.state == "absent")
    @rule(as_file=st.booleans())
    def create(self, as_file):
        if as_file:
            self.out.write_text("a file")
            self.state = "file"
        else:
            self.out.mkdir()
            self.state = "empty"

    @precondition(lambda self: self.state == "file")
    @rule()
    def remove_file(self):
        self.out.unlink()
        self.state = "absent"

    @invariant()
    def nothing_lost_nothing_left_over(self):
        import json
        from proofs_check.report import MARKER
        for name, text in self.foreign.items():
            assert (self.out / name).read_bytes() == text.encode(), f"{name} was changed or removed"
        assert sorted(p.name for p in self.root.iterdir()) == ([] if self.state == "absent" else ["rep"])
        if self.state == "ours" and not self.foreign:
            listed = set(json.loads((self.out / MARKER).read_text())["files"])
            assert {p.name for p in self.out.iterdir()} == listed | {MARKER}
        if self.state == "file":
            assert self.out.read_text() == "a file"


TestReportFolderMachine = ReportFolderMachine.TestCase
TestReportFolderMachine.settings = settings(max_examples=25, stateful_step_count=12, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow])


def test_report_folder_machine_catches_a_replacing_writer(monkeypatch):
    """Negative control: with the folder check switched off (the old behaviour: any folder is
    replaced whole), the same machine finds a lost user file."""
    from pathlib import Path

    from proofs_check.report import _report

    monkeypatch.setattr(_report, "check_target", lambda out, argument="out": Path(out).resolve())
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        run_state_machine_as_test(ReportFolderMachine, settings=settings(
            max_examples=100, stateful_step_count=12, derandomize=True, database=None,
            phases=[Phase.generate], suppress_health_check=list(HealthCheck), deadline=None))
