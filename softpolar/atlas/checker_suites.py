"""The atlas suites of the checker mutants (:mod:`proofs_check.mutation.checker_mutants`).

Tamper attacks on an atlas, and the engine's atlas re-proven by the independent checker.

They live here, beside the atlas driver they need; ``proofs_check`` finds them by module name.
"""
from __future__ import annotations

import copy
from fractions import Fraction
import tempfile
from numerics import check_atlas
from .claims import integrated_box, wrong_winner
from . import engine as atlas_engine

_CACHE: dict = {}


def small_atlas(fresh: bool = False):
    def build():
        with tempfile.TemporaryDirectory(prefix="softpolar-mutant-atlas-") as tmp:
            return atlas_engine.run_atlas("conflict3", f"{tmp}/a", start_width="1/4", min_width="1/4", map_size=32,
                                          scheduler="inline", progress=False, draw=False)
    if fresh:
        return build()
    if "atlas" not in _CACHE:
        _CACHE["atlas"] = build()
    return _CACHE["atlas"]


def atlas_attacks(cert: dict) -> dict:
    """The audit's attacks on an atlas certificate (each a false or unsupported statement)."""
    def edit(f):
        c = copy.deepcopy(cert)
        f(c)
        return c

    def lie(c):
        box = integrated_box(c)
        wrong_winner(c, box, (box["winner"] + 1) % c["spec"]["n"])

    def first(c):
        return integrated_box(c)

    def other(c):
        return (first(c)["winner"] + 1) % c["spec"]["n"]

    def box_area(c, box):
        X0, X1 = (Fraction(v) for v in c["spec"]["x"])
        Y0, Y1 = (Fraction(v) for v in c["spec"]["y"])
        return (X1 - X0) * (Y1 - Y0) / 4 ** box["key"][0]

    def drop_uncertified(c):
        box = next(b for b in c["boxes"] if b["status"] != "certified")
        c["boxes"].remove(box)
        left = Fraction(c["area"]["uncertified"]) - box_area(c, box)
        if left:
            c["area"]["uncertified"] = str(left)
        else:
            del c["area"]["uncertified"]

    def twice(c):
        box = first(c)
        c["boxes"].append(copy.deepcopy(box))
        label = f"token {box['winner']}"
        c["area"][label] = str(Fraction(c["area"][label]) + box_area(c, box))
        X0, X1 = (Fraction(v) for v in c["spec"]["x"])
        Y0, Y1 = (Fraction(v) for v in c["spec"]["y"])
        cert_area = sum(Fraction(v) for k, v in c["area"].items() if k != "uncertified")
        c["fraction_certified"] = float(cert_area / ((X1 - X0) * (Y1 - Y0)))

    def four_entries(c):
        c["spec"].update(u0=["x", "0", "-1", "5"], a0=["0", "y", "-1", "5"])

    return {
        "wrong winner on a box that needed integration (consistent lie)": edit(lie),
        "stored a_lower raised": edit(lambda c: first(c)["a_lower"].__setitem__(other(c), "1000")),
        "stored u_lower raised": edit(lambda c: first(c)["u_lower"].__setitem__(other(c), "1000")),
        "tau edited": edit(lambda c: first(c).update(tau=str(Fraction(first(c)["tau"]) + 1))),
        "area edited": edit(lambda c: c["area"].update({"token 0": str(Fraction(c["area"]["token 0"]) + 1)})),
        "fraction_certified edited": edit(lambda c: c.update(fraction_certified=c["fraction_certified"] + 0.01)),
        "a box removed": edit(lambda c: c["boxes"].pop()),
        "an uncertified box removed (areas updated)": edit(drop_uncertified),
        "a certified box counted twice (areas and fraction updated)": edit(twice),
        "n = 3 with 4-entry vectors": edit(four_entries),
        "an expression cut at 200 characters": edit(lambda c: c["spec"]["u0"].__setitem__(0, "x" + " " * 199 + "+ 5")),
        "a preset name on other data": edit(lambda c: c["spec"].update(name="uniform3")),
        "provenance tag P (the atlas claim is ours, D)": edit(lambda c: c.update(provenance="P")),
        "an unknown key in the engine settings": edit(lambda c: c["engine"].update(note="checked")),
        "an unknown key in the float64 section": edit(lambda c: c["float64"].update(note="checked")),
    }


def atlas_tamper() -> list[str]:
    cert = small_atlas()
    out = [] if check_atlas(cert).passed else ["the honest atlas is refused"]
    for name, bad in atlas_attacks(cert).items():
        if check_atlas(bad).passed:
            out.append(f"attack accepted: {name}")
    return out


def box_soundness() -> list[str]:
    cert = small_atlas(fresh=True)  # built by the (possibly mutated) engine
    res = check_atlas(cert)
    out = [f"engine output refused by the checker: {p}" for p in res.problems[:3]]
    if cert["float64"]["disagreements"]:
        out.append(f"{cert['float64']['disagreements']} float64 pixels disagree with certified boxes")
    return out


SUITES = {"atlas-tamper": atlas_tamper, "box-soundness": box_soundness}
