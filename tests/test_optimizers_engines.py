"""numerics.optim: the discrete forms against torch.optim step for step, the continuous forms, name-blindness."""
import ast
import pathlib

import numpy as np
import pytest
import sympy as sp

import numerics as N
from numerics import flow_rhs
from numerics.optim import optimizer_descent, optimizer_flow, steps_for
from theorems import InvalidArgument
from theorems import optimizers as O

torch = pytest.importorskip("torch")

EPS = np.finfo(np.float64).eps
#: per-step drift allowed between two float64 implementations of one update: each step of Adam is about ten
#: float64 operations on every coordinate (lerp, mul/addcmul, sqrt, two divisions, add, addcdiv), each rounding
#: by at most eps/2 relative, and torch fuses some of them (FMA in add/lerp/addcdiv); 8 eps per step relative to
#: max(1, |theta|) covers that with room, and the difference may add up over k steps (the iteration is stable,
#: not contracting, on these short runs): the bound at step k is k * 8 eps. Measured (seed 123, n = d = 8,
#: 300 steps): 1e-14 for Adam, 3e-17 for SGD, below the bound 5e-13 at the last step.
ULPS_PER_STEP = 8


def _problem(n=8, d=8, seed=123):
    return N.Problem.from_seed(seed, loss="logistic", n=n, d=d)


def _torch_run(problem, make, steps, lr):
    """torch.optim fed the generated gradient (isolates the optimizer arithmetic)."""
    V = torch.tensor(np.array(problem.V), dtype=torch.float64, requires_grad=True)
    a = torch.tensor(np.array(problem.a), dtype=torch.float64, requires_grad=True)
    opt = make([V, a], lr)
    rhs = flow_rhs(problem.loss, problem.link)
    out = [np.concatenate([V.detach().numpy().ravel(), a.detach().numpy()])]
    for _ in range(steps):
        opt.zero_grad()
        dV, da = rhs(V.detach().numpy(), a.detach().numpy(), problem.target, None)
        V.grad, a.grad = torch.tensor(-dV), torch.tensor(-da)
        opt.step()
        out.append(np.concatenate([V.detach().numpy().ravel(), a.detach().numpy()]))
    return np.array(out)


def _ours(problem, opt, steps, lr, backend="numpy"):
    tr = optimizer_descent(problem, opt, lr=lr, steps=steps, record=list(range(steps + 1)), backend=backend)
    return np.array([np.concatenate([np.ravel(V), np.ravel(a)]) for V, a in zip(tr.V, tr.a)], dtype=float)


def _excess(ours, ref):
    """max over steps k of |ours_k - ref_k|_inf / (k * ULPS_PER_STEP * eps * max(1, |ref_k|_inf)) (<= 1: agree)."""
    k = np.arange(len(ref)).clip(min=1)
    scale = np.maximum(1.0, np.abs(ref).max(axis=1))
    return float((np.abs(ours - ref).max(axis=1) / (k * ULPS_PER_STEP * EPS * scale)).max())


TORCH = {
    "gd": lambda ps, lr: torch.optim.SGD(ps, lr=lr, foreach=False),
    "adam": lambda ps, lr: torch.optim.Adam(ps, lr=lr, foreach=False),
    "rmsprop": lambda ps, lr: torch.optim.RMSprop(ps, lr=lr, foreach=False),
}


@pytest.mark.parametrize("name", sorted(TORCH))
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_discrete_form_matches_torch_optim_every_step(name, backend):
    p, lr, steps = _problem(), 0.01, 300
    ref = _torch_run(p, TORCH[name], steps, lr)
    assert _excess(_ours(p, name, steps, lr, backend), ref) <= 1.0


def _variant(name, flow_theta, step_theta):
    return O.Optimizer(name, state={O.m: 0, O.v: 0}, hyper=dict(O.ADAM.hyper),
                       flow={**O.ADAM.rules["a"].flow, O.theta: flow_theta},
                       step=[*O.ADAM.rules["a"].step[:2], (O.theta, step_theta)])


def test_near_miss_adams_are_rejected_by_the_same_bound():
    """Negative controls: eps inside the square root, and no bias correction of v: same engine, same bound."""
    th, lr, k, m, v, b1, b2, eps = O.theta, O.lr, O.k, O.m, O.v, O.beta1, O.beta2, O.eps
    flow = O.ADAM.rules["a"].flow[th]
    inside = _variant("adam-eps-inside", flow, th - lr / (1 - b1**k) * m / sp.sqrt(v / (1 - b2**k) + eps))
    no_bc2 = _variant("adam-no-bc2", flow, th - lr / (1 - b1**k) * m / (sp.sqrt(v) + eps))
    p, steps = _problem(), 50
    ref = _torch_run(p, TORCH["adam"], steps, 0.01)
    for bad in (inside, no_bc2):
        assert _excess(_ours(p, bad, steps, 0.01), ref) > 1e3


def test_autograd_driven_adam_agrees_to_rounding():
    """torch.optim.Adam with torch's own autograd gradient of softplus(-<w, V softmax(a)>) (an independent
    gradient): the iterates agree to 1e-12 over 300 steps (the two gradients differ by rounding)."""
    p, lr, steps = _problem(), 0.01, 300
    V = torch.tensor(np.array(p.V), dtype=torch.float64, requires_grad=True)
    a = torch.tensor(np.array(p.a), dtype=torch.float64, requires_grad=True)
    w = torch.tensor(np.array(p.target), dtype=torch.float64)
    opt = torch.optim.Adam([V, a], lr=lr, foreach=False)
    ref = [np.concatenate([V.detach().numpy().ravel(), a.detach().numpy()])]
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.softplus(-(w @ (V @ torch.softmax(a, 0)))).backward()
        opt.step()
        ref.append(np.concatenate([V.detach().numpy().ravel(), a.detach().numpy()]))
    assert _excess(_ours(p, "adam", steps, lr), np.array(ref)) <= 1.0


def test_t_end_over_lr_steps():
    assert steps_for(1.0, 0.01) == 100 and steps_for(0.3, 0.1) == 3
    with pytest.raises(InvalidArgument, match="whole number of steps"):
        steps_for(1.0, 0.3)


# ---- no engine reads the optimizer's name --------------------------------------------------------------------
def _copy(opt, name):
    if opt.rules["V"] is opt.rules["a"]:
        r = opt.rules["a"]
        return O.Optimizer(name, flow=r.flow, step=list(r.step), state=r.state, hyper=dict(opt.hyper),
                           norm=r.norm)
    return O.Optimizer.blockwise(name, V=opt.rules["V"], a=opt.rules["a"], hyper=dict(opt.hyper))


@pytest.mark.parametrize("opt", O.BUILTIN_OPTIMIZERS, ids=lambda o: o.name)
def test_a_renamed_copy_computes_the_same_numbers(opt):
    p = _problem(n=4, d=3)
    twin = _copy(opt, f"zz-{opt.name}-twin")
    a = _ours(p, opt, 20, 0.05)
    b = _ours(p, twin, 20, 0.05)
    assert np.array_equal(a, b)
    if opt.smooth:
        kw = {"times": ["0", "0.5"], "lr": 0.05}
        fa, fb = optimizer_flow(p, opt, **kw), optimizer_flow(p, twin, **kw)
        assert np.array_equal(np.array(fa.a, float), np.array(fb.a, float))


def test_swapped_names_follow_the_definition_not_the_name():
    """A definition of GD called 'adam-like' runs GD: the numbers follow the expressions."""
    p = _problem(n=4, d=3)
    fake = _copy(O.GD, "adam-like")
    assert np.array_equal(_ours(p, fake, 10, 0.05), _ours(p, "gd", 10, 0.05))
    assert not np.array_equal(_ours(p, fake, 10, 0.05), _ours(p, "adam", 10, 0.05))


def test_engine_sources_never_compare_an_optimizer_name():
    """Static check: no engine module of numerics.optim holds a built-in optimizer's name as a string literal,
    nor reads ``.name`` in a comparison (names appear only in labels built with f-strings)."""
    names = {o.name for o in O.BUILTIN_OPTIMIZERS}
    root = pathlib.Path(N.__file__).parent / "optim"
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in names, f"{path.name}: string literal {node.value!r}"
            if isinstance(node, ast.Compare):
                for sub in ast.walk(node):
                    assert not (isinstance(sub, ast.Attribute) and sub.attr == "name"), \
                        f"{path.name}:{node.lineno}: compares an optimizer's name"


# ---- continuous forms ------------------------------------------------------------------------------------------
def test_adam_ode_is_the_first_order_limit_of_adam():
    """Discrete Adam at lr -> its ODE (same lr for the moment rates) on [0, 2]: the error halves with lr."""
    p, T = _problem(n=4, d=3), 2
    errs = []
    for lr in (0.02, 0.01, 0.005):
        st = steps_for(T, lr)
        tr = optimizer_descent(p, "adam", lr=lr, steps=st, record=[st])
        fl = optimizer_flow(p, "adam", times=["0", str(T)], lr=lr, rtol=1e-13)
        errs.append(np.abs(np.ravel(tr.a[-1]) - np.ravel(fl.a[-1])).max())
    ratios = [errs[0] / errs[1], errs[1] / errs[2]]
    assert all(1.6 < r < 2.4 for r in ratios), ratios  # first order: 2 in the limit


def test_continuous_forms_agree_across_engines():
    p = _problem(n=3, d=2)
    for opt in ("ngd", "muon", "adam"):
        fn = optimizer_flow(p, opt, times=["0", "1"], lr=0.05, rtol=1e-13)
        fm = optimizer_flow(p, opt, times=["0", "1"], lr=0.05, backend="mpmath", dps=20)
        assert np.abs(np.array(fm.a[-1], float) - np.array(fn.a[-1])).max() < 1e-11


def test_discontinuous_flow_is_refused_by_the_smooth_engines():
    with pytest.raises(InvalidArgument, match="discontinuous"):
        optimizer_flow(_problem(n=3, d=2), "sign", times=["0", "1"])


def test_normalized_flow_moves_at_unit_speed():
    """The arc-length clock, numerically: ||theta(s + h) - theta(s)|| = h (1 - O(h^2 curvature))."""
    p = _problem(n=4, d=3)
    tr = optimizer_flow(p, "ngd", times=["0", "0.001", "1", "1.001"], rtol=1e-13)
    th = [np.concatenate([np.ravel(V), a]) for V, a in zip(tr.V, tr.a)]
    for i in (0, 2):
        assert abs(np.linalg.norm(th[i + 1] - th[i]) / 1e-3 - 1) < 1e-5
    gd = optimizer_flow(p, "gd", times=["0", "0.001"], rtol=1e-13)  # control: GD's speed is ||grad||, not 1
    g0 = np.concatenate([np.ravel(gd.V[1]), gd.a[1]]) - np.concatenate([np.ravel(gd.V[0]), gd.a[0]])
    assert abs(np.linalg.norm(g0) / 1e-3 - 1) > 1e-2


# ---- sign flow: Filippov -----------------------------------------------------------------------------------------
def _state(tr, i=-1):
    return np.concatenate([np.ravel(tr.V[i]), np.ravel(tr.a[i])]).astype(float)


def test_sign_flow_crosses_transversally_and_signgd_converges_to_it():
    from numerics.optim import filippov_flow

    p, T = N.Problem.from_seed(7, loss="logistic", n=6, d=3), 3
    tr = filippov_flow(p, "sign", times=["0", "1", str(T)])
    kinds = [e["kind"] for e in tr.switching]
    assert "crossing" in kinds and "sliding" not in kinds
    for lr in (1e-3, 1e-4):  # signGD -> the Filippov solution as lr -> 0 (first order: the crossing times)
        st = steps_for(T, lr)
        d = optimizer_descent(p, "sign", lr=lr, steps=st, record=[st])
        assert np.abs(_state(d) - _state(tr)).max() < 4 * lr


def test_sign_flow_slides_on_a_square_loss_surface():
    from numerics.optim import filippov_flow

    p, T = N.Problem.from_seed(123, loss="square", n=4, d=3, a0="noise"), 0.5
    tr = filippov_flow(p, "sign", times=["0", str(T)])
    slides = [e for e in tr.switching if e["kind"] == "sliding"]
    assert slides and slides[0]["coords"] == [8, 9, 10, 11]  # the row V[2, :] of one output coordinate
    assert slides[0]["max_drift"] < 1e-9
    assert any("sliding on g[8, 9, 10, 11]" in n for n in tr.notes)
    lr = 1e-4
    d = optimizer_descent(p, "sign", lr=lr, steps=steps_for(T, lr), record=[steps_for(T, lr)])
    assert np.abs(_state(d) - _state(tr)).max() < 4 * lr
    # control: the flow that ignores the surface (old signs kept, "integrated through blindly") leaves it
    blind = optimizer_descent(p, "sign", lr=lr, steps=steps_for(0.3245, lr), record=[steps_for(0.3245, lr)])
    assert blind.loss[-1] > 0  # (the point reached before the surface; sliding keeps beta_3 = y_3 exactly after)
    beta3 = (np.array(tr.V[-1]) @ np.array(tr.weights[-1]))[2]
    assert abs(beta3 - p.target[2]) < 1e-9


def test_sign_flow_refuses_at_a_critical_point_with_the_reason():
    from numerics import IntegrationError
    from numerics.optim import filippov_flow

    p = N.Problem.from_seed(123, loss="square", n=4, d=3, a0="noise")
    with pytest.raises(IntegrationError, match="critical point in finite time") as e:
        filippov_flow(p, "sign", times=["0", "3"])
    assert [x["kind"] for x in e.value.switching].count("sliding") == 2


def test_normalized_kernels_survive_a_tiny_gradient():
    """Normalized flow on the logistic toy: |g| ~ e^{-s}, so sum g^2 underflows near s = 354; the scale-free
    kernels (g / max|g|) integrate on to s = 600 (the unscaled kernels returned inf at s = 355)."""
    from numerics.optim import optimizer_kernels

    p = N.Problem.preset("logistic-toy")
    tr = optimizer_flow(p, "ngd", times=["0", "600"], rtol=1e-12)
    assert float(tr.one_minus_max[-1]) < 1e-5
    kern = optimizer_kernels(O.NGD, "numpy")
    assert kern.blocks["V"].scale_free and not optimizer_kernels(O.GD, "numpy").blocks["V"].scale_free
    g = np.full(4, 1e-170)
    (gs, G2) = kern.inputs(g[:2].reshape(1, 2), g[2:])["V"]
    assert G2 == 4.0 and np.all(gs == 1.0)  # control: the raw sum of squares is 0 in float64
    assert float((g * g).sum()) == 0.0


def test_sign_flow_keeps_the_winner_argmax_u0_where_gradient_flow_does_not():
    """Logistic loss, softmax, a(0) = N(0, 1): sign flow's winner is argmax u(0) (its V moves every column alike,
    so the gaps of u are constant); gradient flow's is not, for seed 1 (control: the winner there is argmax a(0))."""
    from numerics.optim import filippov_flow

    p = N.Problem.from_seed(1, loss="logistic", n=5, d=3, a0="noise", a_scale=1.0)
    u0 = np.array(p.V).T @ np.array(p.target)
    tr = filippov_flow(p, "sign", times=["0", "10"])
    assert tr.argmax[-1] == int(np.argmax(u0)) and float(tr.one_minus_max[-1]) < 1e-6
    gf = N.simulate(p, t_end="1e6", backend="numpy", times=["0", "1e6"])
    assert gf.argmax[-1] != int(np.argmax(u0))


def test_sign_flow_refuses_a_float64_rounding_zero():
    """Past t = 20 on the toy, float64 returns exactly 0 for the winner's logit gradient (u - z ~ e^{-40} below the
    rounding of its terms): the engine checks the zero at 40 digits and refuses, after the 4 real crossings (each of
    which the same check accepted)."""
    from numerics import IntegrationError
    from numerics.optim import filippov_flow

    with pytest.raises(IntegrationError, match="float64 cannot resolve gradient coordinate 70") as e:
        filippov_flow(N.Problem.preset("logistic-toy"), "sign", times=["0", "30"])
    assert [x["kind"] for x in e.value.switching] == ["crossing"] * 4


def test_sign_flow_runs_with_frozen_parameters():
    """A frozen parameter's gradient is 0 by definition, not a set-valued sign: the trainable sink (V[0] frozen)
    runs, its value column stays 0, and a_1 crosses when u_1 = <v_1, w> passes the margin z (V moves at unit speed,
    u_1 = -2 + |w| t; z = sum_j s_j u_j is slightly negative, the real tokens holding 0.7 % of the mass: the
    crossing comes 1.5e-5 before t = 2 / |w|)."""
    import math

    from numerics.optim import filippov_flow

    w = math.sqrt(0.1)
    u = np.array([0.0, -2.0, -2.5, -3.0])
    p = N.Problem(loss="logistic", link="softmax", V=[list(u / w)], a=[0, 0, 0, 0], target=[w], frozen=("V[0]",))
    tr = filippov_flow(p, "sign", times=["0", "10"])
    assert float(tr.V[-1][0][0]) == 0.0
    first = tr.switching[0]
    assert first["coords"] == [5] and -1e-4 < first["t"] - 2 / w < 0
