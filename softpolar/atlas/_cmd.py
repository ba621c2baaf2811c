"""``softpolar atlas``: certified basin atlases of 2-D slices of initializations (and ``--check``).

``softpolar atlas conflict3 --out DIR`` builds (or resumes) the atlas of a preset or of a JSON
slice spec (see :mod:`softpolar.atlas.engine`); ``softpolar atlas --check DIR/atlas.json`` re-verifies
a certificate with the independent checker (:mod:`numerics.validated.atlas_check`): exit 0 if it passes,
1 if it is rejected (each reason printed), 2 on bad input.
"""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

from softpolar.cluster import add_scheduler_option, probe_scheduler
from theorems import InvalidArgument
from numerics import check_atlas
from numerics.io import read_json
from numerics.progress import Progress
from theorems.errors import check_int
from . import engine as atlas_engine
from .engine import _client, _close


def add_parser(subparsers) -> None:
    """Create the ``atlas`` subcommand."""
    p = subparsers.add_parser(
        "atlas", help="certified basin atlas of a 2-D slice of initializations (computer-assisted theorem)",
        description="Prove, box by box, which token the logistic tau-system polarizes to over a 2-D "
                    "slice of initializations (quadtree of interval enclosures entering R_i^+), "
                    "beside a float64 map; or re-verify an atlas certificate with --check.")
    p.add_argument("spec", nargs="?", default=None,
                   help="preset (conflict3, uniform3, conflict4) or a JSON slice spec file")
    p.add_argument("--out", default=None, help="result folder (default softpolar-atlas/NAME); reruns resume")
    p.add_argument("--min-width", default="1/128", help="smallest box width in units of x (default 1/128)")
    p.add_argument("--start-width", default="1/4", help="width of the first boxes (default 1/4)")
    add_scheduler_option(p)
    p.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: usable cores)")
    p.add_argument("--map-size", type=int, default=1024, help="float64 map resolution (default 1024)")
    p.add_argument("--check", default=None, metavar="ATLAS",
                   help="re-verify an atlas certificate (atlas.json or its folder) independently")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def _summary(cert: dict) -> dict:
    f = cert.get("float64", {})
    boxes = cert["boxes"]
    return {"slice": cert["spec"]["name"], "fraction_certified": cert["fraction_certified"],
            "area": cert["area"], "boxes_certified": sum(b["status"] == "certified" for b in boxes),
            "boxes_uncertified": sum(b["status"] != "certified" for b in boxes),
            "float64_disagreements": f.get("disagreements"), "float64_undecided": f.get("undecided"),
            "rule": f.get("rule"), "seconds": cert.get("seconds")}


def _check(args) -> int:
    path = Path(args.check)
    if path.is_dir():
        path = path / "atlas.json"

    cert = read_json(path, "--check", expected="an atlas certificate")

    bar = Progress("check", enabled=not args.no_progress)
    n_boxes = sum(b.get("status") == "certified" for b in cert.get("boxes", [])) if isinstance(cert, dict) else 0

    def counted(results):
        out = []
        for r in results:
            out.append(r)
            bar.set_count(len(out), n_boxes, note="boxes re-proven")
        return out

    probe_scheduler(args.scheduler)
    try:
        if args.scheduler == "inline":
            res = check_atlas(cert, mapper=lambda f, items: counted(map(f, items)))
        else:
            from distributed import as_completed

            client, cluster = _client(args.scheduler, args.workers)

            def mapper(f, items):
                futures = client.map(f, items, pure=False)
                counted(as_completed(futures))
                return [fu.result() for fu in futures]

            try:
                res = check_atlas(cert, mapper=mapper)
            finally:
                _close(client, cluster)
    finally:
        bar.close()
    area = {k: str(v) for k, v in sorted(res.area.items())} if res.area is not None else None
    out = {"certificate": str(path), "passed": res.passed, "verified": res.verified,
           "certified": res.certified, "problems": res.problems, "seconds": round(res.seconds, 2),
           "recomputed": None if res.fraction is None else {
               "slice": res.slice, "fraction_certified": str(res.fraction), "area": area, "boxes": res.boxes,
               "boxes_certified": res.certified, "boxes_uncertified": res.uncertified},
           "not_covered": res.not_covered}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        verdict = "PASSED" if res.passed else "REJECTED"
        print(f"{verdict}: {res.verified}/{res.certified} certified boxes re-proven by the independent "
              f"checker ({res.seconds:.1f} s)")
        if res.fraction is not None:
            print(f"  recomputed by the checker: {res.slice}: {100 * float(res.fraction):.2f}% certified "
                  f"(= {res.fraction}); " + ", ".join(f"{k} {v}" for k, v in area.items())
                  + f" (of {sum(res.area.values())}); {res.boxes} boxes: {res.certified} certified, "
                  f"{res.uncertified} uncertified")
        for p in res.problems[:20]:
            print(f"  - {p}")
        if len(res.problems) > 20:
            print(f"  ... {len(res.problems) - 20} more")
        print(f"  not covered by --check: {res.not_covered}")
    return 0 if res.passed else 1


def run(args) -> int:
    if args.workers is not None:
        check_int("--workers", args.workers, minimum=1, maximum=256)
    if args.check is not None:
        if args.spec is not None:
            raise InvalidArgument(f"spec={args.spec!r} given with --check; expected one of them")
        return _check(args)
    if args.spec is None:
        raise InvalidArgument("no slice given; expected a preset (conflict3, uniform3, conflict4), a JSON "
                              "spec file, or --check ATLAS")
    check_int("--map-size", args.map_size, minimum=16, maximum=4096)

    sl = atlas_engine.load_slice(args.spec)
    out = Path(args.out or f"softpolar-atlas/{sl.name}")
    cert = atlas_engine.run_atlas(sl.spec, out, min_width=args.min_width, start_width=args.start_width,
                                  scheduler=args.scheduler, workers=args.workers, map_size=args.map_size,
                                  progress=not args.no_progress)
    s = _summary(cert)
    if args.json:
        print(json.dumps(s, indent=1))
    else:
        print(f"{s['slice']}: {100 * s['fraction_certified']:.2f}% of the slice certified "
              f"({s['boxes_certified']} boxes; {s['boxes_uncertified']} uncertified) in {s['seconds']:.0f} s")
        print("  area: " + ", ".join(f"{k} {float(Fraction(v)):.4f}" for k, v in s["area"].items()))
        print(f"  float64 map: {s['float64_disagreements']} disagreeing and {s['float64_undecided']} undecided "
              f"pixels inside certified boxes")
        r = s["rule"] or {}
        if r:
            print(f"  rule argmax(u_i + k a_i) [D, our observation]: best k = {r['kappa']:.2f}, fails on "
                  f"{100 * r['failure_rate']:.2f}% of the float64 map (k = 0: {100 * r['failure_rate_kappa0']:.2f}%)")
        print(f"  wrote {out}/atlas.json, {out}/atlas.png, {out}/float64.npy")
    sys.stdout.flush()
    f = cert.get("float64", {})
    if f.get("disagreements"):
        # a certified box whose own float64 pixels say otherwise: the certificate (or the journal it was
        # resumed from) is wrong, or float64 is; either way the run does not vouch for it
        boxes = "; ".join(f"box {e['box']} (certified token {e['winner']}, float64 says "
                          f"{[w for w in e['float64'] if w >= 0]})" for e in f.get("examples", []))
        print(f"softpolar atlas: error: the float64 map disagrees with certified boxes on {f['disagreements']} "
              f"pixels: {boxes}; re-verify with softpolar atlas --check {out}", file=sys.stderr, flush=True)
        return 1
    return 0
