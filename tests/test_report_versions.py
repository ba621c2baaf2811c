"""report.json records the versions behind CERT/ATLAS (python-flint), the Taylor backend (heyoka) and FORMAL (Coq),
and the backend engines.high_precision 'auto' resolved to, not only 'auto'."""
from __future__ import annotations

import importlib.metadata
import sys

import pytest

from numerics.integrate import taylor
from proofs_check import ENGINE_SETTINGS, Context
from proofs_check.report import environment
from theorems import coq


def test_versions_name_flint_heyoka_and_coq():
    v = environment(Context(), [])["versions"]
    assert v["python-flint"] == importlib.metadata.version("python-flint")
    assert v["heyoka"] == importlib.metadata.version("heyoka")
    assert v["coq"] == (coq.coq_version() if coq.coqc_path() else None)


def test_absent_programs_and_modules_are_none(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no coqc
    real = importlib.metadata.version

    def version(dist):
        if dist in ("python-flint", "heyoka"):
            raise importlib.metadata.PackageNotFoundError(dist)
        return real(dist)
    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setitem(sys.modules, "flint", None)   # import flint raises ImportError
    monkeypatch.setitem(sys.modules, "heyoka", None)
    v = environment(Context(), [])["versions"]
    assert v["python-flint"] is None and v["heyoka"] is None and v["coq"] is None


@pytest.mark.parametrize("heyoka", [True, False])
def test_engines_record_the_backend_auto_resolved_to(monkeypatch, heyoka):
    if not heyoka:
        monkeypatch.setattr(taylor, "_import_heyoka", lambda: None)
    elif not taylor.available():
        pytest.skip("heyoka is not installed")
    e = environment(Context(), [])["engines"]
    assert e["high_precision"] == "auto" and e["high_precision_backend"] == ("taylor" if heyoka else "mpmath")
    b = environment(Context(engines=ENGINE_SETTINGS["baseline"]), [])["engines"]
    assert b["high_precision"] == "mpmath" and b["high_precision_backend"] == "mpmath"
