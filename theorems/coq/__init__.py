r"""The Coq development of the trapping lemma and the polarization theorem, and how to build it.

The ``.v`` files next to this module (listed, in build order, in ``_CoqProject``) state the
tau-system ($\star$) for every number of tokens $n$ and prove, in Coq's standard-library reals:

* ``softpolar_trapping`` (``Trapping.v``): a solution of ($\star$) on $[\tau_0,\infty)$ that starts in
  $R_i^+$ stays in $R_i^+$, every gap $a_i-a_j\to\infty$ and $s\to e_i$;
* ``softpolar_polarization`` (``Polarization.v``): from a uniform $a(0)$ and a strict maximum of
  $u(0)$ at $i$, a solution exists and along every solution $s\to e_i$, both in the tau-system and
  along the logistic flow in the original time $t$, where moreover $\tau(t)\to\infty$;
* the sign facts (D1), (D2), the face and rate inequalities, generically in $n$ (``Softmax.v``);
* ``ties_refute_convergence`` (``RefuteTies.v``): convergence from the closed region $R_i$ is false;
* ``Generated_n3.v``, ``Generated_n4.v``: the system and the positivity certificates emitted by SymPy (:mod:`._emit`).

:func:`build` compiles the development with ``coqc`` into a fresh folder (the package folder is
never written), prints the axioms of both theorems and checks them against :data:`ALLOWED_AXIOMS`.
``python -m theorems.coq build`` is the one command.
"""
from __future__ import annotations

import atexit
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: This folder: the ``.v`` sources and ``_CoqProject``.
COQ_DIR = Path(__file__).resolve().parent
#: The logical name of the development (``-Q . Softpolar``).
LOGICAL = "Softpolar"
#: How to install what the build needs (Debian/Ubuntu; Coq 8.16 was used).
APT_COMMAND = ("apt-get update -qq && DEBIAN_FRONTEND=noninteractive "
               "apt-get install -y -qq coq libcoq-coquelicot libcoq-interval")
#: The only axioms the two main theorems may rest on: the standard library's classical reals (its
#: real analysis, e.g. the mean value theorem, uses excluded middle) and the one existence axiom.
STDLIB_REAL_AXIOMS = (
    "ClassicalDedekindReals.sig_not_dec",
    "ClassicalDedekindReals.sig_forall_dec",
    "FunctionalExtensionality.functional_extensionality_dep",
    "Classical_Prop.classic",
)
EXISTENCE_AXIOM = "reduced_flow_global_existence"
ALLOWED_AXIOMS = STDLIB_REAL_AXIOMS + (EXISTENCE_AXIOM,)
#: The theorems whose assumptions ``Assumptions.v`` prints, in that order.
MAIN_THEOREMS = ("softpolar_trapping", "softpolar_polarization")
#: Build time limit per file (seconds): a build that hangs is an error, not a wait.
COQC_TIMEOUT_S = 300


class CoqUnavailable(RuntimeError):
    """``coqc`` is not installed."""


def coqc_path() -> str | None:
    return shutil.which("coqc")


def coq_version() -> str:
    exe = coqc_path()
    if exe is None:
        raise CoqUnavailable(f"coqc not found; install it with: {APT_COMMAND}")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"version (\S+)", out.stdout)
    return m.group(1) if m else out.stdout.strip()


def sources() -> list[str]:
    """The ``.v`` files of ``_CoqProject``, in build order."""
    lines = (COQ_DIR / "_CoqProject").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip().endswith(".v")]


def line_count() -> dict[str, int]:
    """Lines of each ``.v`` source."""
    return {f: len((COQ_DIR / f).read_text().splitlines()) for f in sources()}


@dataclass
class CoqRun:
    """One ``coqc`` call: ``ok`` iff the file compiled; ``output`` is stdout + stderr."""

    file: str
    ok: bool
    seconds: float
    output: str


@dataclass
class BuildResult:
    """A build of the development: each file's run, the printed axioms per main theorem."""

    folder: Path
    runs: list = field(default_factory=list)
    assumptions: dict = field(default_factory=dict)
    assumptions_text: str = ""

    #: how many files this build compiles (all of ``_CoqProject`` unless ``upto`` was given)
    planned: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.runs) and all(r.ok for r in self.runs) and len(self.runs) == (self.planned or len(sources()))

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    def disallowed_axioms(self) -> dict[str, list[str]]:
        """Axioms outside :data:`ALLOWED_AXIOMS`, per main theorem (empty when all is well)."""
        return {t: [a for a in axs if a not in ALLOWED_AXIOMS] for t, axs in self.assumptions.items()
                if any(a not in ALLOWED_AXIOMS for a in axs)}


def run_coqc(file: Path, folder: Path) -> CoqRun:
    """Compile ``file`` with the development in ``folder`` on the load path (``-Q folder Softpolar``)."""
    exe = coqc_path()
    if exe is None:
        raise CoqUnavailable(f"coqc not found; install it with: {APT_COMMAND}")
    t0 = time.perf_counter()
    try:
        out = subprocess.run([exe, "-Q", str(folder), LOGICAL, str(file)], capture_output=True, text=True,
                             cwd=str(folder), timeout=COQC_TIMEOUT_S)
        ok, text = out.returncode == 0, out.stdout + out.stderr
    except subprocess.TimeoutExpired:
        ok, text = False, f"coqc timed out after {COQC_TIMEOUT_S} s"
    return CoqRun(Path(file).name, ok, time.perf_counter() - t0, text)


def parse_assumptions(text: str) -> list[list[str]]:
    """The axiom names of each ``Print Assumptions`` block in ``text`` (one list per block)."""
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("Axioms:") or line.startswith("Closed under the global context"):
            cur = []
            blocks.append(cur)
            continue
        m = re.match(r"^([A-Za-z_][\w.']*)(\s*:.*)?$", line)
        if cur is not None and m and not line.startswith(" "):
            cur.append(m.group(1))
    return blocks


def build(folder: str | Path | None = None, *, patch: dict | None = None, upto: str | None = None) -> BuildResult:
    """Copy the sources into ``folder`` (a new temporary folder if ``None``, removed at exit) and compile them in order.

    ``folder`` must be empty or not exist (the build never overwrites files it did not create).
    ``patch``: ``{file: (old, new)}`` text replacements in the copies (each ``old`` must occur exactly once), for
    planted bugs; ``upto``: the last file to compile.
    """
    names = sources()
    if upto is not None:
        if upto not in names:
            raise ValueError(f"upto={upto!r} is not one of {names}")
        names = names[:names.index(upto) + 1]
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="softpolar-coq-"))
        atexit.register(shutil.rmtree, folder, True)   # a temporary build is removed when Python exits
    else:
        folder = Path(folder)
        if folder.exists() and any(folder.iterdir()):
            raise FileExistsError(f"build folder {folder} is not empty; give a new or empty folder")
        folder.mkdir(parents=True, exist_ok=True)
    for f in sources() + ["_CoqProject"]:
        shutil.copyfile(COQ_DIR / f, folder / f)
    for f, (old, new) in (patch or {}).items():
        text = (folder / f).read_text()
        if text.count(old) != 1:
            raise ValueError(f"patch for {f}: {old!r} occurs {text.count(old)} times, expected once")
        (folder / f).write_text(text.replace(old, new))
    res = BuildResult(folder, planned=len(names))
    for f in names:
        run = run_coqc(folder / f, folder)
        res.runs.append(run)
        if not run.ok:
            return res
        if f == "Assumptions.v":
            res.assumptions_text = run.output
            blocks = parse_assumptions(run.output)
            res.assumptions = dict(zip(MAIN_THEOREMS, blocks))
    return res


def check_file(path: str | Path, dev: BuildResult | None = None) -> CoqRun:
    """Compile a Coq file that imports the development (built first when ``dev`` is ``None``)."""
    dev = dev if dev is not None else build()
    if not dev.ok:
        bad = next(r for r in dev.runs if not r.ok)
        raise RuntimeError(f"the development does not build ({bad.file}): {bad.output.strip()[:400]}")
    path = Path(path)
    target = dev.folder / ("Check_" + re.sub(r"\W", "_", path.stem) + ".v")
    shutil.copyfile(path, target)
    run = run_coqc(target, dev.folder)
    return CoqRun(path.name, run.ok, run.seconds, run.output)


def check_text(text: str, name: str, dev: BuildResult | None = None) -> CoqRun:
    """As :func:`check_file`, for Coq source given as a string (``name``: a module name)."""
    dev = dev if dev is not None else build()
    if not dev.ok:
        raise RuntimeError("the development does not build")
    target = dev.folder / (re.sub(r"\W", "_", name) + ".v")
    if target.exists():
        raise FileExistsError(f"{target} exists in the build folder")
    target.write_text(text)
    run = run_coqc(target, dev.folder)
    return CoqRun(target.name, run.ok, run.seconds, run.output)


#: The FORMAL claim's control and witness: the same statement and proof script, convergence from a
#: region.  With ``in_Rplus`` it is the trapping lemma (compiles); with ``in_R`` (ties a_i = a_j
#: allowed) it is false (``RefuteTies.v`` proves its negation) and Coq must refuse it.
REGION_STATEMENT = ("forall n i b u a t0, (i < n)%nat -> 0 < b ->\n"
                    "  is_tau_solution n b u a t0 -> {region} n i (u t0) (a t0) ->\n"
                    "  forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) "
                    "(if Nat.eq_dec k i then 1 else 0)")
REGION_TEMPLATE = """From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping.
Open Scope R_scope.
Theorem convergence_from_region : """ + REGION_STATEMENT + """.
Proof.
  intros n i b u a t0 Hi Hb Hsol H0.
  apply (softpolar_trapping n i b u a t0 Hi Hb Hsol H0).
Qed.
"""
#: A planted bug for the FORMAL control's witness: R_i defined with strict a-gaps (so it is R_i^+). Under it the
#: control's file (convergence from R_i) must compile: the control can pass, its refusal is evidence.
TIES_BUG = {"Softmax.v": ("forall j, (j < n)%nat -> j <> i -> u j <= u i /\\ a j <= a i.",
                          "forall j, (j < n)%nat -> j <> i -> u j <= u i /\\ a j < a i.")}

#: Coq accepts this only if ``ties_refute_convergence`` proves the negation of exactly the control's statement.
REFUTATION_TEMPLATE = """From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping RefuteTies.
Open Scope R_scope.
Definition control_statement_is_false : ~ (""" + REGION_STATEMENT + """) := ties_refute_convergence.
"""
