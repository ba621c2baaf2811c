"""``softpolar experiment induction|classification|pretrained-sinks``.

Runs a grid (or the pretrained-model measurement), writes ``OUT/runs/*.json`` (one per
run, atomic, resumable), ``OUT/summary.json``, ``OUT/table.md`` and PNG figures, and
prints the table (or the summary as JSON with ``--json``). ``OUT`` is recognised by its marker
(:data:`MARKER`, the content hash of every file written) only, and a file is rewritten only while
it has the hash recorded (:func:`check_own_files`). Importing this module does
not import torch (the CLI builds every subcommand's parser at start-up).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
import platform
import numpy

from softpolar.cluster import add_scheduler_option, probe_scheduler
from theorems import InvalidArgument
from numerics.io import check_writable_folder, folder_lock, parse_json, read_bytes, write_text_atomic
from proofs_check import __version__
from proofs_check.report import file_digest as _file_digest
from theorems.errors import check_int
from . import _figures, _summary
from ._attention import EXTRA_KINDS
from . import grid as grid_module
from .pretrained import find_gguf, pretrained_sinks

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
    add_scheduler_option(p)
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
    import torch

    return {"softpolar": __version__, "torch": torch.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}


#: marker file of a result folder written by ``softpolar experiment``: the content hash of each file written.
MARKER = ".softpolar-experiment.json"
#: marker format: 2 records ``{"files": {name: "sha256:..."}}`` (names relative to the folder, ``runs/...`` for
#: run files); format 1 (no hashes) still marks the folder as ours but vouches for no file in it.
MARKER_VERSION = 2
#: the top-level files ``softpolar experiment`` writes (the figures as PNG and their PDF twins)
OUTPUT_NAMES = ("summary.json", "table.md") + tuple(
    f"{stem}.{ext}" for stem in ("sink_heads", "attention_maps", "attention_maps_sinks", "flip_rates",
                                 "max_share_hist") for ext in ("png", "pdf"))
#: most LocalCluster workers accepted.
MAX_WORKERS = 256


def _read_marker(out: Path) -> dict | None:
    """The folder's marker when it is one softpolar wrote (a JSON object naming its format), else ``None``."""
    path = out / MARKER
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = parse_json(read_bytes(path, "--out", max_bytes=2**24), str(path))
    except InvalidArgument:
        return None
    if not isinstance(data, dict) or data.get("softpolar_experiment") not in (1, MARKER_VERSION):
        return None
    files = data.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None
    return data


def _is_ours(out: Path) -> bool:
    """An earlier result folder: one holding the marker softpolar writes (:data:`MARKER`), nothing else.

    (A folder that merely holds our file names, ``summary.json`` and a PNG, is a user's folder.)
    """
    return _read_marker(out) is not None


def check_out(out: Path) -> None:
    """Validate the result folder before anything runs (new, empty, or an earlier result folder)."""
    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"--out={str(out)!r} exists and is not a folder; expected a result folder")
    if out.is_dir() and any(out.iterdir()) and not _is_ours(out):
        raise InvalidArgument(f"--out={str(out)!r} is a non-empty folder that softpolar did not write "
                              f"(no readable {MARKER}); expected a new or empty folder, or an earlier result "
                              "folder of `softpolar experiment` (reruns skip finished runs)")
    check_writable_folder("--out", out)


def check_own_files(out: Path, configs=()) -> None:
    """Refuse the folder when a file this run may write is there and softpolar cannot vouch for it.

    The rule of ``verify``'s report folder (:func:`proofs_check.report._report._folder_problem`): a file is
    replaced only while its content hash is the one :data:`MARKER` recorded when softpolar wrote it. Checked:
    every output name (:data:`OUTPUT_NAMES`) present, and the run file of each of ``configs`` that the grid
    would rerun (a finished run file is read, never rewritten: resuming reuses it as before).
    """
    files = (_read_marker(out) or {}).get("files", {})
    names = [n for n in OUTPUT_NAMES if (out / n).exists() or (out / n).is_symlink()]
    for cfg in configs:
        path = grid_module.result_path(out, cfg)
        if (path.exists() or path.is_symlink()) and grid_module.load_result(out, cfg) is None:
            names.append(path.relative_to(out).as_posix())
    for name in names:
        digest = _file_digest(out / name)
        if digest is None or files.get(name) != digest:
            why = ("was changed since softpolar wrote it" if name in files else
                   f"is not recorded in {MARKER} as written by softpolar")
            raise InvalidArgument(f"--out={str(out)!r} holds {name!r}, which {why}; expected a result folder "
                                  "whose files are as softpolar wrote them (move that file away, or choose "
                                  "another folder)")


def _record(out: Path, paths, base: dict) -> None:
    """Add the content hashes of ``paths`` (files just written in ``out``) to the marker."""
    marker = _read_marker(out) or {}
    files = dict(marker.get("files", {}))
    for p in paths:
        p = Path(p)
        digest = _file_digest(p)
        if digest is not None:
            files[p.resolve().relative_to(out.resolve()).as_posix()] = digest
    grid_module.write_json_atomic(out / MARKER, {**base, "softpolar_experiment": MARKER_VERSION, "files": files,
                                     "note": "written by softpolar experiment; a file listed here is rewritten "
                                             "only while it has the content hash recorded"})


def run(args) -> int:
    if args.workers is not None:
        check_int("--workers", args.workers, minimum=1, maximum=MAX_WORKERS)
    check_int("--seed", args.seed, minimum=0, maximum=2**32 - 1)
    probe_scheduler(args.scheduler)  # a bad or refused address fails now, in seconds, before torch loads
    device = resolve_device(args.device)
    out = Path(args.out or f"softpolar-experiments/{args.name}-{args.grid}")
    check_out(out)
    if args.name == "pretrained-sinks":
        find_gguf(args.gguf)  # a missing or non-GGUF file fails now

    with folder_lock(out, "--out"):  # a second run on this folder is refused, never overwrites this one
        check_out(out)  # again, under the lock
        return _run_locked(args, device, out)


def _run_locked(args, device, out: Path) -> int:
    configs = [] if args.name == "pretrained-sinks" else grid_module.grid_configs(args.name, args.grid)
    check_own_files(out, configs)  # before anything runs: nothing of the user's is ever rewritten
    out.mkdir(parents=True, exist_ok=True)
    base = _base(args)
    if not (out / MARKER).exists():
        _record(out, [], base)
    t0 = time.perf_counter()
    if args.name == "pretrained-sinks":
        summary, text = _pretrained(args, device, out)
    else:
        summary, text = _grid_experiment(args, device, out)
    summary.update({"experiment": args.name, "grid": args.grid, "device": device,
                    "out": str(out), "wall_seconds": time.perf_counter() - t0,
                    "command": ["softpolar", *sys.argv[1:]], "versions": _versions()})
    check_own_files(out)  # again: a file edited while the runs computed is not replaced
    grid_module.write_json_atomic(out / "summary.json", summary)
    _record(out, [out / "summary.json"], base)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
    else:
        print(text)
        print(f"\nwrote {out}/summary.json, {out}/table.md"
              + ("" if args.no_figures else " and figures")
              + f" ({summary['wall_seconds']:.0f} s)")
    return 0


def _write_text(path: Path, text: str) -> None:
    """``text`` plus a newline, written atomically (:func:`numerics.io.write_text_atomic`)."""
    write_text_atomic(path, text + "\n")


def _figure_files(figures) -> list:
    """The files of the figures just drawn: each PNG and its PDF twin (:func:`._figures._save`)."""
    return [q for f in figures for q in (Path(f), Path(f).with_suffix(".pdf")) if q.is_file()]


def _base(args) -> dict:
    """What the marker says of the folder besides the content hashes."""
    return {"name": args.name, "grid": args.grid}


def _grid_experiment(args, device, out):
    configs, base = grid_module.grid_configs(args.name, args.grid), _base(args)
    paths = [grid_module.result_path(out, c) for c in configs]
    before = {p: _file_digest(p) for p in paths if p.is_file()}
    try:
        results = grid_module.run_grid(configs, out, name=f"{args.name}-{args.grid}", scheduler=args.scheduler,
                                       device=device, n_workers=args.workers, progress=not args.no_progress)
    finally:  # the run files this run wrote (an interrupted grid's too); a reused one is left as recorded
        _record(out, [p for p in paths if p.is_file() and _file_digest(p) != before.get(p)], base)
    check_own_files(out)  # a table or figure edited while the runs computed is not replaced
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
    _record(out, [out / "table.md", *_figure_files(figures)], base)
    return {"table": rows, "n_runs": len(results), "train_seconds": train_s, "figures": figures}, \
        f"{title}\n\n{table}"


def _pretrained(args, device, out):
    base = _base(args)

    res = pretrained_sinks(path=args.gguf, device=device, grid=args.grid, seed=args.seed)
    check_own_files(out)  # a figure or table edited while the model ran is not replaced
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
    _record(out, [out / "table.md", *_figure_files(figures)], base)
    write_out = dict(res)
    write_out["figures"] = figures
    return write_out, text
