"""LICENSE and CITATION.cff agree with setup.cfg and the package version (what a citation or a license scan reads)."""
import configparser
from pathlib import Path

import pytest

import proofs_check

ROOT = Path(__file__).resolve().parent.parent


def _files_or_skip(*names):
    paths = [ROOT / n for n in names]
    if not all(p.is_file() for p in paths):
        pytest.skip("run from outside the checkout (the wheel stage copies tests/ and setup.cfg only)")
    return paths


def test_license_is_the_mit_text_setup_cfg_declares():
    lic, cfg = _files_or_skip("LICENSE", "setup.cfg")
    parser = configparser.ConfigParser()
    parser.read(cfg)
    assert parser["metadata"]["license"] == "MIT"
    text = lic.read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_citation_cff_names_the_software_and_the_paper():
    yaml = pytest.importorskip("yaml")
    (cff,) = _files_or_skip("CITATION.cff")
    data = yaml.safe_load(cff.read_text())
    assert data["cff-version"] == "1.2.0" and data["type"] == "software"
    assert data["version"] == proofs_check.__version__ and data["license"] == "MIT"
    assert data["title"].startswith("softpolar")
    paper = data["preferred-citation"]
    assert [a["family-names"] for a in paper["authors"]] == ["Varre", "Rofin", "Flammarion"]
    assert paper["identifiers"][0]["value"] == "arXiv:2603.06248"
