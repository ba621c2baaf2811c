"""One token convention (issue 39): tokens are counted from 0 in every output. ``certify`` printed
``e_1 (token 1)`` while its certificate held ``"winner": 0``, and the report figure said "token 7" where the API,
the JSON and ``Trajectory.plot`` said 6. Certificates of version 4 carry ``token`` = ``winner``; version 3
files (``token`` = winner + 1) are still read and checked with their own display fields; other versions are
refused in one line."""
import copy
import json
import re
from pathlib import Path

import pytest

from numerics import certify, check_certificate, parse_init
from numerics.io import canonical_json, content_digest
from proofs_check.cli import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "certify_init.json"


@pytest.fixture(scope="module")
def cert():
    return json.loads(json.dumps(certify(parse_init(json.loads(EXAMPLE.read_text()))).certificate))


def _as_version(cert, version, shown):
    c = copy.deepcopy(cert)
    c.update(version=version, token=shown, conclusion=f"softmax(a(t)) -> e_{shown} as t -> infinity")
    c["digest"] = content_digest(canonical_json({k: v for k, v in c.items() if k != "digest"}))
    return c


def test_certify_text_and_certificate_number_tokens_alike(cert, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOFTPOLAR_PROGRESS", "off")
    out = tmp_path / "cert.json"
    assert main(["certify", "--init", str(EXAMPLE), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    written = json.loads(out.read_text())
    w = written["winner"]
    assert written["version"] == 4 and written["token"] == w
    assert f"-> e_{w} (token {w};" in text and f"enters R_{w}^+" in text
    # every index the text prints is a token of this n = 3 problem counted from 0: never 3
    n = len(written["init"]["a"])
    assert {int(j) for j in re.findall(r"\bj = (\d+)", text)} == set(range(n)) - {w}
    assert main(["certify", "--check", str(out)]) == 0
    assert f"-> e_{w} (token {w})" in capsys.readouterr().out


def test_version_3_files_read_with_their_own_numbering(cert):
    w = cert["winner"]
    old = _as_version(cert, 3, w + 1)  # what certify wrote before: token and e_i counted from 1
    res = check_certificate(old, replay=False)
    assert res.ok, res.reason
    # the controls: a version 3 file numbered from 0, and a version 4 file numbered from 1, are both refused
    for bad in (_as_version(cert, 3, w), _as_version(cert, 4, w + 1)):
        res = check_certificate(bad, replay=False)
        assert not res.ok and "token=" in res.reason, res.reason


@pytest.mark.parametrize("version", [2, 5, "4", True])
def test_other_versions_refused_in_one_line(cert, version, tmp_path, capsys):
    f = tmp_path / "old.json"
    f.write_text(json.dumps(_as_version(cert, version, cert["winner"])))
    rc = main(["certify", "--check", str(f)])
    out = capsys.readouterr()
    lines = [x for x in (out.out + out.err).splitlines() if "version" in x]
    assert rc != 0 and len(lines) == 1 and f"/{version!r} is not" in lines[0] and "(3, 4)" in lines[0], lines
