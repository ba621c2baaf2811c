"""``softpolar experiment induction|classification|pretrained-sinks``.

Runs a grid (or the pretrained-model measurement), writes ``OUT/runs/*.json`` (one per
run, atomic, resumable), ``OUT/summary.json``, ``OUT/table.md`` and PNG figures, and
prints the table (or the summary as JSON with ``--json``). Importing this module does
not import torch (the CLI builds every subcommand's parser at start-up).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from theorems import InvalidArgument

EXPERIMENTS = ("induction", "classification", "pretrained-sinks")


def add_parser(subparsers) -> None:
    """Create the ``experiment`` subcommand."""
    p = subparsers.add_parser(
        "experiment", help="transformer-level experiments: sinks, flips, SmolLM2 (claims 31-33)",
        description="Train the paper's induction / classification transformers over a grid of "
                    "attention kernels, or measure attention sinks in SmolLM2-135M offline.")
    p.add_argument("name", choices=EXPERIMENTS, help="which experiment")
    p.add_argument("--grid", default="smoke", choices=("tiny", "smoke", "small", "paper"),
                   help="grid size (default smoke; tiny = a seconds-long wiring check; paper = "
                        "the authors' full sweep, for a cluster)")
    p.add_argument("--device", default="cpu", help="torch device: cpu, cuda, cuda:N or auto")
    p.add_argument("--out", default=None,
                   help="result folder (default softpolar-experiments/NAME-GRID); reruns skip "
                        "finished runs")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--scheduler", default="local",
                   help="'local' (dask LocalCluster, default), 'inline' (serial, no dask) or the "
                        "address of a running dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--workers", type=int, default=None,
                   help="LocalCluster workers (default: usable CPU cores; 1 on CUDA)")
    p.add_argument("--gguf", default=None, help="pretrained-sinks: path to the SmolLM2 GGUF file")
    p.add_argument("--seed", type=int, default=0, help="pretrained-sinks: input seed (default 0)")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def resolve_device(device: str) -> str:
    """``auto`` -> cuda if available else cpu; a CUDA device that is absent is an error."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise InvalidArgument(f"device={device!r} is not a torch device ({exc}); expected cpu, "
                              "cuda, cuda:N or auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidArgument(f"device={device!r} is not available (torch.cuda.is_available() is "
                              "False); expected cpu or auto")
    return str(dev)


def _versions() -> dict:
    import platform

    import numpy
    import torch

    from proofs_check import __version__

    return {"softpolar": __version__, "torch": torch.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}


#: marker file of a result folder written by ``softpolar experiment``.
MARKER = ".softpolar-experiment.json"
#: most LocalCluster workers accepted.
MAX_WORKERS = 256


def _is_ours(out: Path) -> bool:
    """An earlier result folder: the marker, or (written before the marker) only our names."""
    if (out / MARKER).is_file():
        return True
    names = {p.name for p in out.iterdir()}
    ours = {"runs", "summary.json", "table.md"}
    return bool(names) and all(n in ours or n.endswith(".png") for n in names) \
        and ((out / "runs").is_dir() or (out / "summary.json").is_file())


def check_out(out: Path) -> None:
    """Validate the result folder before anything runs (new, empty, or an earlier result folder)."""
    from numerics._io import check_writable_folder

    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"--out={str(out)!r} exists and is not a folder; expected a result folder")
    if out.is_dir() and any(out.iterdir()) and not _is_ours(out):
        raise InvalidArgument(f"--out={str(out)!r} is a non-empty folder that softpolar did not write "
                              f"(no {MARKER}); expected a new or empty folder, or an earlier result "
                              "folder of `softpolar experiment` (reruns skip finished runs)")
    check_writable_folder("--out", out)


def run(args) -> int:
    from theorems._errors import check_int

    if args.workers is not None:
        check_int("--workers", args.workers, minimum=1, maximum=MAX_WORKERS)
    check_int("--seed", args.seed, minimum=0, maximum=2**32 - 1)
    if args.scheduler not in ("local", "inline"):
        from ._scheduler import _probe
        _probe(args.scheduler)  # a bad or refused address fails now, in seconds, before torch loads
    device = resolve_device(args.device)
    out = Path(args.out or f"softpolar-experiments/{args.name}-{args.grid}")
    check_out(out)
    if args.name == "pretrained-sinks":
        from ._pretrained import find_gguf
        find_gguf(args.gguf)  # a missing or non-GGUF file fails now
    from numerics._io import folder_lock

    with folder_lock(out, "--out"):  # a second run on this folder is refused, never overwrites this one
        check_out(out)  # again, under the lock
        return _run_locked(args, device, out)


def _run_locked(args, device, out: Path) -> int:
    from ._grid import write_json_atomic

    out.mkdir(parents=True, exist_ok=True)
    if not (out / MARKER).exists():
        write_json_atomic(out / MARKER, {"softpolar_experiment": 1, "name": args.name, "grid": args.grid})
    t0 = time.perf_counter()
    if args.name == "pretrained-sinks":
        summary, text = _pretrained(args, device, out)
    else:
        summary, text = _grid_experiment(args, device, out)
    summary.update({"experiment": args.name, "grid": args.grid, "device": device,
                    "out": str(out), "wall_seconds": time.perf_counter() - t0,
                    "command": ["softpolar", *sys.argv[1:]], "versions": _versions()})
    write_json_atomic(out / "summary.json", summary)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
    else:
        print(text)
        print(f"\nwrote {out}/summary.json, {out}/table.md"
              + ("" if args.no_figures else " and figures")
              + f" ({summary['wall_seconds']:.0f} s)")
    return 0


def _write_text(path: Path, text: str) -> None:
    """``text`` plus a newline, written atomically (:func:`numerics._io.write_text_atomic`)."""
    from numerics._io import write_text_atomic  # lazy: the CLI parser must not import numerics

    write_text_atomic(path, text + "\n")


def _grid_experiment(args, device, out):
    from . import _figures, _summary
    from ._grid import grid_configs, run_grid

    configs = grid_configs(args.name, args.grid)
    results = run_grid(configs, out, name=f"{args.name}-{args.grid}", scheduler=args.scheduler,
                       device=device, n_workers=args.workers, progress=not args.no_progress)
    figures = []
    if args.name == "induction":
        rows = _summary.induction_table(results)
        if args.grid == "paper":  # the authors' main panel: aux 0.2, shifted query, add
            main = [r for r in results if r["config"]["aux_weight"] == 0.2
                    and r["config"]["shift_query"] and r["config"]["positional"] == "add"]
            rows = _summary.induction_table(main)
        table = _summary.markdown_table(rows, _summary.INDUCTION_COLUMNS)
        if not args.no_figures:
            figures.append(_figures.sink_bars(rows, out / "sink_heads.png"))
            try:
                figures.append(_figures.attention_maps(results, out / "attention_maps.png"))
            except ValueError:
                pass  # neither softmax nor sigmoid-unnorm in this grid
            from ._attention import EXTRA_KINDS

            if any(r["config"]["attention"] in EXTRA_KINDS for r in results):
                figures.append(_figures.attention_maps(results, out / "attention_maps_sinks.png",
                                                       kinds=("softmax", *EXTRA_KINDS)))
    else:
        rows = _summary.classification_table(results)
        table = _summary.markdown_table(rows, _summary.CLASSIFICATION_COLUMNS)
        if not args.no_figures:
            figures.append(_figures.flip_bars(rows, out / "flip_rates.png"))
    train_s = sum(r.get("seconds", 0.0) for r in results)
    title = (f"## {args.name}, grid {args.grid}: {len(results)} runs, "
             f"{train_s:.0f} s of training (sum over runs)")
    _write_text(out / "table.md", f"{title}\n\n{table}")
    return {"table": rows, "n_runs": len(results), "train_seconds": train_s, "figures": figures}, \
        f"{title}\n\n{table}"


def _pretrained(args, device, out):
    from . import _figures
    from ._pretrained import pretrained_sinks

    res = pretrained_sinks(path=args.gguf, device=device, grid=args.grid, seed=args.seed)
    figures = [] if args.no_figures else [_figures.max_share_histogram(res, out / "max_share_hist.png")]
    s = res["sanity"]
    lines = [f"## SmolLM2 ({res['model']['name']}), {res['model']['layers']} layers x "
             f"{res['model']['heads']} heads, grid {args.grid}",
             "",
             "Sanity of the forward pass:",
             f"- induction, random sequence repeated: top-1 accuracy on the second repeat "
             f"{s['induction']['accuracy_second_repeat']:.3f} (first repeat "
             f"{s['induction']['accuracy_first_repeat']:.3f}; chance {s['induction']['chance']:.1e})",
             f"- text next-token cross-entropy {s['text']['cross_entropy']:.2f} nats "
             f"(accuracy {s['text']['accuracy']:.3f}; uniform {s['text']['uniform_cross_entropy']:.2f}"
             + (f"; wrong RoPE control {s['text_wrong_rope']['cross_entropy']:.2f}"
                if "text_wrong_rope" in s else "") + ")",
             "",
             "| input | Gu sink rate (eps 0.3) | median max-share | heads max-share > 0.5 | "
             "massive ratio, first token (layer) | largest other token |",
             "|---|---|---|---|---|---|"]
    for key, label in (("random", "random tokens"), ("text", "text"),
                       ("control", "untrained control (random tokens)")):
        if key in res:
            m = res[key]
            lines.append(f"| {label} | {m['gu_sink_rate']:.3f} | {m['max_share_median']:.3f} | "
                         f"{m['max_share_frac_above_0.5']:.3f} | {m['massive_first_max']:.0f} "
                         f"({m['massive_first_argmax_layer']}) | {m['massive_other_max']:.0f} |")
    text = "\n".join(lines)
    _write_text(out / "table.md", text)
    write_out = dict(res)
    write_out["figures"] = figures
    return write_out, text
