"""User links and losses through every engine: the right numbers, the same numbers under any name, frozen parameters."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
torch = pytest.importorskip("torch")  # the system python may lack torch: skip, never a collection error

import theorems as T
from numerics import Problem, flow_rhs, gradient_descent, integrate_batch, simulate
from numerics.integrate import taylor

x = sp.Symbol("x", real=True)
z = sp.Symbol("z")
SOFTMAX1 = T.register(T.Link("softmax1", h=sp.exp(x), c=1))
STABLEMAX = T.register(T.Link("stablemax", h=sp.Piecewise((x + 1, x >= 0), (1 / (1 - x), True))))
EXP_MARGIN = T.register(T.Loss.margin("exp-margin", ell=sp.exp(-z)))
RENAMED = T.register(T.Link("softmax-renamed", h=sp.exp(sp.Symbol("q", positive=True))))
BACKENDS = ("numpy", "torch", "mpmath")
needs_heyoka = pytest.mark.skipif(not taylor.available(), reason="heyoka is not installed")


def _as_np(v):
    if torch.is_tensor(v):
        return v.detach().numpy()
    if isinstance(v, list):
        return np.array([[float(u) for u in r] if isinstance(r, list) else float(r) for r in v])
    return np.asarray(v, dtype=float)


def _arg(backend, v):
    if backend == "torch":
        return torch.tensor(np.asarray(v, dtype=float))
    if backend == "mpmath":
        return np.asarray(v, dtype=float).tolist()
    return np.asarray(v, dtype=float)


# ---- the two silent-wrong cases of the old interface --------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_exp_margin_loss_gives_its_own_gradient_and_value(backend):
    zz = -math.log(0.9005)   # <w, beta> with exp(-z) = 0.9005
    beta = np.array([zz, zz, zz - 0.0822])
    w = np.array([1.0, 0.0, 0.0])
    rhs = flow_rhs("exp-margin", "softmax", backend=backend)
    g = _as_np(rhs.grad_loss(_arg(backend, beta), _arg(backend, w)))
    assert g == pytest.approx([-0.9005, 0.0, 0.0], abs=1e-12)
    # the old silent answer was the kl gradient softmax(beta) - w = [-0.658, 0.342, 0.315]
    assert abs(g[1]) < 1e-12
    V = 3 * np.diag(beta)  # a = 0: phi = 1/3 each, so beta = V phi
    val = float(_as_np(rhs.loss_value(_arg(backend, V), _arg(backend, np.zeros(3)), _arg(backend, w))))
    assert val == pytest.approx(0.9005, abs=1e-12)


def test_exp_margin_loss_through_simulate():
    zz = -math.log(0.9005)
    p = Problem("exp-margin", V=3 * np.diag([zz, zz, zz - 0.0822]), a=[0.0, 0.0, 0.0], target=[1.0, 0.0, 0.0])
    tr = simulate(p, t_end=1, backend="numpy")
    assert tr.loss[0] == pytest.approx(0.9005, abs=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax1_phi(backend):
    phi = _as_np(flow_rhs("logistic", SOFTMAX1, backend=backend).phi(_arg(backend, [0.3, -0.2])))
    e1, e2 = math.exp(0.3), math.exp(-0.2)
    assert phi == pytest.approx([e1 / (1 + e1 + e2), e2 / (1 + e1 + e2)], rel=1e-14)
    assert phi == pytest.approx([0.426, 0.258], abs=5e-4)


def test_old_paths_are_refused():
    with pytest.raises(TypeError):
        T.LOSSES["exp"] = EXP_MARGIN
    with pytest.raises(T.InvalidArgument):
        Problem("exp", V=[[1.0, 0.0]], a=[0.0, 0.0], target=[1.0])
    with pytest.raises(T.InvalidArgument, match="overrides phi"):
        class Softmax1(T.Link):
            def phi(self, a):
                return a


def test_softmax1_stays_finite_at_large_logits():
    # the proven shift law h(x + t) = e^t h(x) lets the engines subtract max a (with c e^{-max a})
    phi = flow_rhs("logistic", SOFTMAX1).phi(np.array([800.0, 799.0]))
    assert np.all(np.isfinite(phi))
    assert phi == pytest.approx([1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1))])


# ---- simulate across engines against a torch-autograd reference written here ---------------------------------
def _phi_torch(name, a):
    if name == "softmax1":
        e = torch.exp(a)
        return e / (1 + e.sum())
    h = torch.where(a >= 0, a + 1, 1 / (1 - a))
    return h / h.sum()


def _reference(name, V0, a0, w, t_end):
    """RHS = minus torch autograd of softplus(-<w, V phi(a)>), integrated by SciPy's DOP853 at tight tolerances."""
    from scipy.integrate import solve_ivp
    d, n = V0.shape
    wt = torch.tensor(w)

    def f(t, y):
        yt = torch.tensor(y, requires_grad=True)
        V, a = yt[:d * n].reshape(d, n), yt[d * n:]
        F = torch.nn.functional.softplus(-(wt @ (V @ _phi_torch(name, a))))
        (g,) = torch.autograd.grad(F, yt)
        return -g.numpy()

    sol = solve_ivp(f, (0, t_end), np.concatenate([V0.ravel(), a0]), method="DOP853", rtol=1e-12, atol=1e-14)
    assert sol.success
    return sol.y[:, -1]


@pytest.mark.parametrize("link, engines", [
    ("softmax1", ("numpy", "mpmath", "torch", "taylor")),
    ("stablemax", ("numpy", "mpmath", "torch")),
])
def test_user_links_agree_across_engines_and_with_autograd(link, engines):
    rs = np.random.RandomState(3)
    V0, a0, w = rs.randn(2, 3) * 0.5, rs.randn(3) * 0.5, np.array([0.6, 0.8])
    ref = _reference(link, V0, a0, w, 5.0)
    p = Problem("logistic", V=V0, a=a0, target=w, link=link)
    for be in engines:
        if be == "taylor" and not taylor.available():
            continue
        tr = simulate(p, t_end=5, backend=be, dps=30 if be != "taylor" else None)
        got = np.concatenate([np.asarray(tr.V[-1], dtype=float).ravel(), np.asarray(tr.a[-1], dtype=float)])
        assert np.max(np.abs(got - ref)) < 1e-8, be


def test_auto_picks_taylor_for_a_smooth_user_link_and_not_for_stablemax():
    if not taylor.available():
        pytest.skip("heyoka is not installed")
    p = Problem("logistic", V=[[0.1, -0.2]], a=[0.0, 0.1], target=[1.0], link="softmax1")
    assert simulate(p, t_end=1).backend == "taylor"
    q = Problem("logistic", V=[[0.1, -0.2]], a=[0.0, 0.1], target=[1.0], link="stablemax")
    assert simulate(q, t_end=1).backend == "mpmath"


@pytest.mark.parametrize("link", ["softmax1", "stablemax"])
def test_derive_proves_flow_structured(link):
    from proofs_check.derivation import build_derivation
    der = build_derivation("logistic", link, n=3, d=2)
    sec = {s.key: s for s in der.sections}
    assert sec["flow.structured"].status == "proved"
    assert sec["flow.structured"].negative.startswith("disproved")
    assert sec["jacobian.structured"].status == "proved"
    assert any(s.title.startswith("Scope") and "replicator" in s.note for s in der.sections)


# ---- no engine reads a name ------------------------------------------------------------------------------
def test_softmax_under_another_name_gives_identical_numbers():
    assert RENAMED.same_definition(T.LINKS["softmax"])
    rs = np.random.RandomState(5)
    V0, a0, w = rs.randn(2, 3), rs.randn(3), np.array([0.6, 0.8])
    runs = {}
    for name in ("softmax", "softmax-renamed"):
        p = Problem("logistic", V=V0, a=a0, target=w, link=name)
        out = {}
        for be in ("numpy", "mpmath", "torch") + (("taylor",) if taylor.available() else ()):
            tr = simulate(p, t_end=20, backend=be)
            out[be] = (tr.a, np.asarray(tr.V).tolist(), tr.loss, tr.clock)  # V: one (K, d, n) array
        out["gd"] = gradient_descent(p, lr=0.1, steps=50).a
        b = integrate_batch(p, t_end=5)
        out["batch"] = b["a"].tolist()
        runs[name] = out
    assert runs["softmax"] == runs["softmax-renamed"]
    m1 = T.SymbolicModel("logistic", "softmax", 3, 2).flow_structured()
    m2 = T.SymbolicModel("logistic", "softmax-renamed", 3, 2).flow_structured()
    assert m1 == m2


# ---- frozen parameters -------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["numpy", "mpmath", "torch", "taylor"])
def test_bandit_and_sink_token_are_frozen_on_every_engine(backend):
    if backend == "taylor" and not taylor.available():
        pytest.skip("heyoka is not installed")
    rs = np.random.RandomState(7)
    V0, a0, w = rs.randn(2, 3), rs.randn(3), np.array([0.6, 0.8])
    kw = {"dps": None} if backend == "taylor" else {}
    bandit = simulate(Problem("logistic", V=V0, a=a0, target=w, frozen=("V",)), t_end=50, backend=backend, **kw)
    assert np.array_equal(np.asarray(bandit.V[-1], dtype=float), V0)
    assert not np.allclose(np.asarray(bandit.a[-1], dtype=float), a0)
    sink = simulate(Problem("logistic", V=V0, a=a0, target=w, frozen=("a[0]", "V[0]")), t_end=50, backend=backend,
                    **kw)
    Vt, at = np.asarray(sink.V[-1], dtype=float), np.asarray(sink.a[-1], dtype=float)
    assert at[0] == a0[0] and np.array_equal(Vt[:, 0], V0[:, 0])
    assert not np.allclose(at[1:], a0[1:]) and not np.allclose(Vt[:, 1:], V0[:, 1:])


def test_frozen_gd_and_canonical_spec():
    p = Problem("square", V=[[1.0, 2.0]], a=[0.1, 0.2], target=[0.5], frozen=("a[1]", "a[0]"))
    assert p.frozen == ("a",)
    out = gradient_descent(p, lr=0.1, steps=20)
    assert np.array_equal(np.asarray(out.a[-1], dtype=float), [0.1, 0.2])
    with pytest.raises(T.InvalidArgument, match="token 5"):
        Problem("square", V=[[1.0, 2.0]], a=[0.1, 0.2], target=[0.5], frozen=("V[5]",))


# ---- CLI -------------------------------------------------------------------------------------------------
MODELS = """import sympy as sp
from theorems import Link, Loss
x = sp.Symbol("x", real=True)
softmax1 = Link("softmax1", h=sp.exp(x), c=1)
exp_margin = Loss.margin("exp-margin", ell=sp.exp(-x))
"""


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "softpolar", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_cli_models_file_init_file_and_freeze(tmp_path):
    f = tmp_path / "models.py"
    f.write_text(MODELS)
    init = tmp_path / "init.json"
    init.write_text(json.dumps({"loss": "exp-margin", "link": "softmax1", "V": [[0.1, -0.2, 0.3]],
                                "a": [0.0, 0.1, -0.1], "target": [1.0]}))
    r = _cli("simulate", "--models", str(f), "--init", str(init), "--t-end", "5", "--backend", "numpy",
             "--freeze", "a[0]", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["problem"]["link"] == "softmax1" and out["problem"]["frozen"] == ["a[0]"]
    assert all(float(a[0]) == 0.0 for a in out["a"])
    r = _cli("simulate", "--init", str(init), "--t-end", "5")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--models" in r.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("import sympy as sp\nfrom theorems import Link\n"
                   "softmax = Link('softmax', h=sp.exp(sp.Symbol('x')), c=1)\n")
    r = _cli("derive", "--models", str(bad), "--loss", "logistic")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "shadow" in r.stderr


# ---- one API convention -------------------------------------------------------------------------------------
def test_certify_reduced_logistic_and_parse_init_take_a_problem():
    from numerics import certify, parse_init, reduced_logistic
    p = Problem("logistic", V=[[0.1, 0.2], [0.3, -0.1]], a=["0", "1/2"], target=["0.6", "0.8"], link=RENAMED)
    r = reduced_logistic(p, t_end=10, times=[0, 10])
    s = simulate(p, t_end=10, times=[0, 10], backend="mpmath")
    assert [float(v) for v in r.a[-1]] == pytest.approx([float(v) for v in s.a[-1]], abs=1e-25)
    assert certify(p).status == "certified"  # softmax's definition under another name is certifiable
    init = parse_init({"loss": "logistic", "V": [[0.1, 0.25]], "a": [0.0, 0.5], "target": [1.0]})
    assert init.V[0][0] == "0.1000000000000000055511151231257827021181583404541015625"
    assert init.V[0][1] == "0.25" and len(init.notes) == 1 and "exact binary value" in init.notes[0]
    with pytest.raises(T.InvalidArgument, match="softmax"):
        parse_init({"loss": "logistic", "link": "softmax1", "V": [[0.1, 0.25]], "a": [0.0, 0.5], "target": [1.0]})


# ---- a general loss, entry points ----------------------------------------------------------------------
def _quartic(beta, t):
    return sum((b - y) ** 4 for b, y in zip(beta, t)) / 4


def test_general_loss_from_an_expression_through_every_engine():
    from proofs_check.claims import check_model
    L = T.register(T.Loss("quartic", value=_quartic, target="y"))
    res = check_model(link="softmax", loss=L, ns=(2,), sizes=((3, 2),), points=2)
    assert res.ok and {r["engine"] for r in res.autograd} >= {"numpy", "torch", "mpmath"}
    p = Problem("quartic", V=[[0.3, 0.1, -0.2], [0.1, 0.2, 0.3]], a=[0.0, 0.1, 0.2], target=[0.5, -0.5])
    finals = [np.asarray(simulate(p, t_end=5, backend=be, dps=None if be == "taylor" else 30).a[-1], dtype=float)
              for be in ("numpy", "mpmath", "torch") + (("taylor",) if taylor.available() else ())]
    assert max(float(np.max(np.abs(f - finals[1]))) for f in finals) < 1e-9
    with pytest.raises(T.InvalidArgument, match="value"):
        T.Loss("broken", value=lambda beta, t: beta)  # not a scalar


def test_entry_points_register_definitions(monkeypatch):
    import importlib.metadata as md

    class EP:
        name = "fake"

        def load(self):
            return [T.Link("ep-gate", h=(1 + sp.tanh(x)) / 2, normalized=False)]

    monkeypatch.setattr(md, "entry_points", lambda group=None: [EP()] if group == T.ENTRY_POINT_GROUP else [])
    T.load_entry_points(force=True)
    assert T.get_link("ep-gate").normalized is False
    phi = flow_rhs("logistic", "ep-gate").phi(np.array([0.0, 1.0]))
    assert phi == pytest.approx([0.5, (1 + math.tanh(1.0)) / 2])


def test_a_problem_with_user_definitions_travels_to_a_fresh_process(tmp_path):
    import pickle
    p = Problem("exp-margin", V=[[0.1, -0.2, 0.3]], a=[0.0, 0.1, -0.1], target=[1.0], link=SOFTMAX1)
    f = tmp_path / "p.pkl"
    f.write_bytes(pickle.dumps(p))
    code = ("import pickle, sys; from numerics import simulate; p = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "print(simulate(p, t_end=1, backend='numpy').loss[-1])")
    r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == pytest.approx(simulate(p, t_end=1, backend="numpy").loss[-1], rel=1e-14)
