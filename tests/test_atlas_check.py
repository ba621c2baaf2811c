"""``atlas --check`` refuses unknown keys at every level and a wrong provenance tag.

Found by review: a certificate whose ``provenance`` was changed from "D" to "P" passed, and so did
certificates with extra keys inside ``engine`` and ``float64`` (the checker looked at the top level,
the spec and the boxes only).
"""
from __future__ import annotations

import copy
import inspect

import pytest

pytest.importorskip("flint")

from numerics.validated import atlas_check as ac


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    from softpolar.atlas import run_atlas

    out = tmp_path_factory.mktemp("atlas-check") / "c3"
    return run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
                     progress=False, draw=False)


def _edit(cert, change):
    bad = copy.deepcopy(cert)
    change(bad)
    return bad


def test_the_honest_certificate_passes(cert):
    """The control on the same code path: every part the new checks read, as the engine wrote it."""
    assert {"provenance", "engine", "float64", "seconds"} <= set(cert)
    assert cert["float64"]["rule"] and cert["float64"]["float_area"]
    res = ac.check_atlas(cert)
    assert res.passed and res.verified == res.certified > 0, res.problems


@pytest.mark.parametrize("tag", ["P", "C", "A", "", None])
def test_a_wrong_provenance_tag_is_refused(cert, tag):
    """Failed before the fix: 'P' passed."""
    res = ac.check_atlas(_edit(cert, lambda c: c.__setitem__("provenance", tag)))
    assert not res.passed and "provenance" in res.problems[0] and "'D'" in res.problems[0]


@pytest.mark.parametrize("where, change", [
    ("engine", lambda c: c["engine"].__setitem__("note", "x")),
    ("engine", lambda c: c["engine"].__setitem__("order", {"nested": 1})),
    ("float64", lambda c: c["float64"].__setitem__("note", "x")),
    ("float64.rule", lambda c: c["float64"]["rule"].__setitem__("note2", "x")),
    ("float64.float_area", lambda c: c["float64"]["float_area"].__setitem__("token 9", 0.5)),
    ("float64.examples", lambda c: c["float64"]["examples"].append({"box": [1, 0, 0], "winner": 0, "float64": [1],
                                                                    "note": "x"})),
    ("float64.disagreements", lambda c: c["float64"].__setitem__("disagreements", "none")),
    ("engine", lambda c: c.__setitem__("engine", ["lohner"])),
    ("seconds", lambda c: c.__setitem__("seconds", "fast")),
    ("max_error", lambda c: c["boxes"][0].__setitem__("max_error", [0.1])),
])
def test_unknown_keys_and_wrong_types_are_refused_at_every_level(cert, where, change):
    """Failed before the fix: each of these passed."""
    res = ac.check_atlas(_edit(cert, change))
    assert not res.passed and where.split(".")[0] in res.problems[0], res.problems


def test_the_engine_keys_are_those_of_the_engines_box_enclosure():
    from numerics import enclose_box

    params = set(inspect.signature(enclose_box).parameters) - {"center", "directions", "b", "record", "hints"}
    assert params == ac.ENGINE_KEYS


def test_what_is_only_checked_for_form_is_said_not_covered():
    for part in ("'float64' section", "'engine' settings", "'seconds'", "'max_error'", "form only"):
        assert part in ac.NOT_COVERED
    assert "provenance" not in ac.NOT_COVERED  # verified: the tag of an atlas claim is known
