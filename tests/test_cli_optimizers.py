"""``softpolar derive --optimizer`` and ``softpolar simulate --optimizer``: end to end, in process."""
from __future__ import annotations

import json

import numpy as np
import pytest

from softpolar import main


def _run(capsys, *args):
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_derive_optimizer_shows_the_proofs_and_controls(capsys):
    rc, out, _ = _run(capsys, "derive", "--optimizer", "muon")
    assert rc == 0
    assert "polar factor: muon d=2 n=3: P H = G" in out and "[proved" in out
    assert "polar factor, control" in out and "[disproved" in out
    assert "not a time change of gradient flow" in out
    rc, out, _ = _run(capsys, "derive", "--optimizer", "ngd")
    assert "arc length" in out and "unit speed" in out


def test_simulate_adam_takes_t_end_over_lr_steps_and_matches_torch_adam(capsys):
    """The issue's must-show: simulate --optimizer adam --lr 0.01 --t-end T matches torch.optim.Adam at every
    reported step (to float64 rounding: the bound of tests/test_optimizers_engines.py)."""
    torch = pytest.importorskip("torch")
    from numerics import Problem, flow_rhs

    rc, out, _ = _run(capsys, "simulate", "--preset", "logistic-toy", "--optimizer", "adam", "--lr", "0.01",
                      "--t-end", "2", "--json", "--full-json", "--quiet")
    assert rc == 0
    data = json.loads(out)
    assert data["meta"]["n_steps"] == 200 and data["meta"]["optimizer"] == "adam"
    steps = [round(float(t) / 0.01) for t in data["times"]]
    p = Problem.preset("logistic-toy")
    V = torch.tensor(np.array(p.V), dtype=torch.float64, requires_grad=True)
    a = torch.tensor(np.array(p.a), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([V, a], lr=0.01, foreach=False)
    rhs = flow_rhs(p.loss, p.link)
    eps = np.finfo(float).eps
    k = 0
    for i, target in enumerate(steps):
        while k < target:
            opt.zero_grad()
            dV, da = rhs(V.detach().numpy(), a.detach().numpy(), p.target, None)
            V.grad, a.grad = torch.tensor(-dV), torch.tensor(-da)
            opt.step()
            k += 1
        ref = np.concatenate([V.detach().numpy().ravel(), a.detach().numpy()])
        ours = np.concatenate([np.ravel(np.array(data["V"][i], float)), np.array(data["a"][i], float)])
        assert np.abs(ours - ref).max() <= max(k, 1) * 8 * eps * max(1.0, np.abs(ref).max())


def test_simulate_gd_matches_torch_sgd(capsys):
    torch = pytest.importorskip("torch")
    from numerics import Problem, flow_rhs

    rc, out, _ = _run(capsys, "simulate", "--preset", "logistic-toy", "--optimizer", "gd", "--lr", "0.1",
                      "--t-end", "5", "--times", "0,1,5", "--json", "--full-json", "--quiet")
    data = json.loads(out)
    p = Problem.preset("logistic-toy")
    V = torch.tensor(np.array(p.V), dtype=torch.float64, requires_grad=True)
    a = torch.tensor(np.array(p.a), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([V, a], lr=0.1, foreach=False)
    rhs = flow_rhs(p.loss, p.link)
    got = {}
    for k in range(51):
        if k in (0, 10, 50):
            got[k] = np.concatenate([V.detach().numpy().ravel(), a.detach().numpy()])
        opt.zero_grad()
        dV, da = rhs(V.detach().numpy(), a.detach().numpy(), p.target, None)
        V.grad, a.grad = torch.tensor(-dV), torch.tensor(-da)
        opt.step()
    for i, k in enumerate((0, 10, 50)):
        ours = np.concatenate([np.ravel(np.array(data["V"][i], float)), np.array(data["a"][i], float)])
        assert np.abs(ours - got[k]).max() <= max(k, 1) * 8 * np.finfo(float).eps * max(1, np.abs(got[k]).max())


def test_simulate_sign_flow_reports_or_refuses(capsys):
    rc, out, _ = _run(capsys, "simulate", "--preset", "logistic-toy", "--optimizer", "sign", "--t-end", "5",
                      "--times", "0,1,5", "--json", "--quiet")
    assert rc == 0
    sw = json.loads(out)["meta"]["switching"]
    assert [e["kind"] for e in sw] == ["crossing"] * 4
    rc, out, err = _run(capsys, "simulate", "--seed", "123", "--d", "3", "--n", "4", "--loss", "square", "--a0",
                        "noise", "--optimizer", "sign", "--t-end", "3", "--quiet")
    assert rc == 1 and "critical point in finite time" in err and "2 sliding" in err


@pytest.mark.parametrize("args, needle", [
    (["--optimizer", "adam", "--lr", "0.01", "--opt", "gamma=1"], "no parameter 'gamma'"),
    (["--optimizer", "adam", "--lr", "0.3"], "whole number of steps"),
    (["--lr", "0.01"], "without --optimizer"),
    (["--optimizer", "nope"], "optimizer='nope' is not allowed"),
    (["--optimizer", "adam", "--form", "continuous"], "expected lr"),
    (["--optimizer", "gd", "--lr", "0.1", "--gd-lr", "0.1"], "--gd-lr with --optimizer"),
])
def test_bad_optimizer_options_exit_2_with_one_line(capsys, args, needle):
    rc, _, err = _run(capsys, "simulate", "--preset", "logistic-toy", "--t-end", "1", "--quiet", *args)
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_verify_optimizer_gives_verdicts_with_evidence(capsys, tmp_path):
    # sign flow: its rate law derived from the flow (exp(-2 t)) and settled in a few seconds (ngd's, on the mpmath
    # engine to s = 1e4: tests/test_optim_laws.py, slow)
    rc, out, _ = _run(capsys, "verify", "--optimizer", "sign", "--link", "softmax", "--loss", "logistic", "--out",
                      str(tmp_path / "sign"))
    assert rc == 0
    assert "ok   OPTF.rate[sign,logistic,softmax]" in out and "3/3 claims passed" in out
    rc, out, _ = _run(capsys, "verify", "--optimizer", "muon", "--out", str(tmp_path / "muon"))
    # Muon does not polarize: gradient flow's prediction fails, with the evidence in the report (a finding)
    assert "FAIL OPTF.polarizes[muon,logistic,softmax]" in out
    report = (tmp_path / "muon" / "report.md").read_text()
    assert "no polarization by t = 600" in report
