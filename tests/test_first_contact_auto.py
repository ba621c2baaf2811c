"""``simulate --backend auto`` on a large problem (issue 39: n = d = 256 compiled the Taylor flow for 25 min and
21 GB). Above ``AUTO_MAX_ENTRIES`` auto takes numpy and says so; with ``--dps`` it refuses in one line.
Only small sizes here: the cut is n * d, so n = 1, d just past it exercises it cheaply."""
import json

from proofs_check.cli import main


def _run(tmp_path, capsys, *extra, n=1, d=4097):
    out = tmp_path / "run.json"
    rc = main(["simulate", "--seed", "1", "--n", str(n), "--d", str(d), "--loss", "logistic", "--link", "softmax",
               "--t-end", "1", "--times", "0,1", "--quiet", "--out", str(out), *extra])
    return rc, out, capsys.readouterr().err.strip()


def test_auto_above_the_cut_takes_numpy_and_says_why(tmp_path, capsys):
    rc, out, _ = _run(tmp_path, capsys)
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["meta"]["backend"] == "numpy"
    assert any("backend auto -> numpy: n * d = 4097 > 4096" in note for note in doc["meta"]["notes"])


def test_auto_at_the_cut_keeps_the_high_precision_engine(tmp_path, capsys):
    rc, out, _ = _run(tmp_path, capsys, n=2, d=3)
    assert rc == 0 and json.loads(out.read_text())["meta"]["backend"] in ("taylor", "mpmath")


def test_auto_with_dps_above_the_cut_is_refused_up_front(tmp_path, capsys):
    rc, out, err = _run(tmp_path, capsys, "--dps", "30")
    assert rc == 2 and len(err.splitlines()) == 1
    assert "--backend auto" in err and "n * d = 4097" in err and "--backend numpy" in err
    assert not out.exists()
