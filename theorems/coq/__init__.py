r"""The Coq development of the trapping lemma and the polarization theorem, and how to build it.

The ``.v`` files next to this module (listed, in build order, in ``_CoqProject``) state the
tau-system ($\star$) for every number of tokens $n$ and prove, in Coq's standard-library reals:

* ``softpolar_trapping`` (``Trapping.v``): a solution of ($\star$) on $[\tau_0,\infty)$ that starts in
  $R_i^+$ stays in $R_i^+$, every gap $a_i-a_j\to\infty$ and $s\to e_i$;
* ``softpolar_polarization`` (``Polarization.v``): from a uniform $a(0)$ and a strict maximum of
  $u(0)$ at $i$, a solution exists and along every solution $s\to e_i$, both in the tau-system and
  along the logistic flow in the original time $t$, where moreover $\tau(t)\to\infty$;
* the sign facts (D1), (D2), the face and rate inequalities, generically in $n$ (``Softmax.v``);
* ``enclosure_step_autonomous`` (``Enclosure.v``): one step of an a-priori enclosure: if
  $B+[0,h]\,f(E)$ lies in the interior of the box $E$, a solution of $x'=f(x)$ from $B$ stays in $E$ for a time
  $h$ and ends in $B+h\,f(E)$ (the generic step a certificate's Coq replay uses);
* ``ties_refute_convergence`` (``RefuteTies.v``): convergence from the closed region $R_i$ is false;
* ``Generated_n3.v``, ``Generated_n4.v``: the system and the positivity certificates emitted by SymPy (:mod:`.emit`).

:func:`build` compiles the development with ``coqc`` into a fresh folder (the package folder is
never written), prints the axioms of both theorems and checks them against :data:`ALLOWED_AXIOMS`.
``python -m theorems.coq build`` is the one command. :func:`check_file` (``python -m theorems.coq check FILE.v``)
vouches for a file that imports the development: it compiles, has no :data:`FORBIDDEN` command, and each of its
declarations rests on :data:`ALLOWED_AXIOMS` only (``Print Assumptions``, read as the build reads it).
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

from theorems.errors import InvalidArgument

from . import sandbox as _sandbox
from .sandbox import WRITES as WRITES
from .emit import check_generated as _check

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
#: Certificate files only (issue 37, decided: an explicit allow-list, not a re-proof of exp without ``interval``).
#: Interval's ``interval`` tactic evaluates with Coq's primitive 63-bit integers and binary64 floats; the kernel
#: computes them natively and the standard library states their specifications as axioms. These are exactly the
#: ones ``Print Assumptions cert_polarizes`` lists for a replay file (coqc 8.16, Interval 4.x): trusted, named in
#: the report, accepted only by the two-argument ``check F.v CERT.json``, never by the one-argument check or the
#: build of the development.
PRIMITIVE_NUMBER_AXIOMS = (
    "FloatAxioms.Prim2SF_SF2Prim", "FloatAxioms.Prim2SF_valid", "FloatAxioms.SF2Prim_Prim2SF",
    "FloatAxioms.abs_spec", "FloatAxioms.add_spec", "FloatAxioms.classify_spec", "FloatAxioms.compare_spec",
    "FloatAxioms.div_spec", "FloatAxioms.eqb_spec", "FloatAxioms.frshiftexp_spec", "FloatAxioms.ldshiftexp_spec",
    "FloatAxioms.ltb_spec", "FloatAxioms.mul_spec", "FloatAxioms.next_down_spec", "FloatAxioms.next_up_spec",
    "FloatAxioms.normfr_mantissa_spec", "FloatAxioms.of_uint63_spec", "FloatAxioms.opp_spec",
    "FloatAxioms.sqrt_spec", "FloatAxioms.sub_spec", "PrimFloat.abs", "PrimFloat.add", "PrimFloat.classify",
    "PrimFloat.compare", "PrimFloat.div", "PrimFloat.eqb", "PrimFloat.float", "PrimFloat.frshiftexp",
    "PrimFloat.ldshiftexp", "PrimFloat.ltb", "PrimFloat.mul", "PrimFloat.next_down", "PrimFloat.next_up",
    "PrimFloat.normfr_mantissa", "PrimFloat.of_uint63", "PrimFloat.opp", "PrimFloat.sqrt", "PrimFloat.sub",
    "PrimInt63.add", "PrimInt63.eqb", "PrimInt63.int", "PrimInt63.land", "PrimInt63.leb", "PrimInt63.lor",
    "PrimInt63.lsl", "PrimInt63.lsr", "PrimInt63.ltb", "PrimInt63.sub", "Uint63.add_spec", "Uint63.eqb_correct",
    "Uint63.eqb_refl", "Uint63.land_spec", "Uint63.leb_spec", "Uint63.lor_spec", "Uint63.lsl_spec",
    "Uint63.lsr_spec", "Uint63.ltb_spec", "Uint63.of_to_Z", "Uint63.sub_spec",
)
#: What a replay certificate file may rest on: the classical reals and the primitive-number specifications.
CERTIFICATE_AXIOMS = STDLIB_REAL_AXIOMS + PRIMITIVE_NUMBER_AXIOMS
#: The theorems of ``Reduction.v`` (the (V, a) -> (u, a) reduction for every n, d, and the parameter flow's
#: trapping and polarization): they rest on :data:`STDLIB_REAL_AXIOMS` only (no existence axiom).
REDUCTION_THEOREMS = ("reduction", "reduction_tau", "model_trapping", "model_polarization")
#: The theorems of ``NoCrossing.v``: the order of a pair (u_q < u_p, a_q <= a_p) is kept along any clocked solution,
#: so from a uniform a(0) the ranking of u(0) is kept (and on the parameter flow); classical reals only.
NO_CROSSING_THEOREMS = ("no_crossing", "model_no_crossing")
#: The theorems of ``Rates.v``: the leading term u_i(tau) ~ b tau of the winner's projection (the a-gaps' and
#: 1 - s_i's leading terms are not in Coq); classical reals only.
RATE_THEOREMS = ("u_top_leading", "model_u_top_leading")
#: The theorem of ``CertModel.v``: a replay's tau-system certificate gives the parameter flow's s -> e_i.
CERT_MODEL_THEOREMS = ("model_of_tau_certificate",)
#: The theorems whose assumptions ``Assumptions.v`` prints, in that order.
MAIN_THEOREMS = (("softpolar_trapping", "softpolar_polarization") + REDUCTION_THEOREMS + CERT_MODEL_THEOREMS
                 + NO_CROSSING_THEOREMS
                 + RATE_THEOREMS)
#: Build time limit per file (seconds): a build that hangs is an error, not a wait.
COQC_TIMEOUT_S = 300
#: coqc seconds allowed per enclosure step of a replay file (:func:`replay_timeout`): the n = 4 certificate of seed 0
#: replays 136 steps in about 274 CPU s on 2 loaded cores (2 s a step), and timed out at 300 s under load
REPLAY_SECONDS_PER_STEP = 6


def replay_timeout(steps: int) -> float:
    """The time limit of a replay file of ``steps`` enclosure steps: :data:`COQC_TIMEOUT_S`, or
    :data:`REPLAY_SECONDS_PER_STEP` per step when that is longer (a long replay is bounded by its length)."""
    return max(COQC_TIMEOUT_S, REPLAY_SECONDS_PER_STEP * steps)


class CoqUnavailable(RuntimeError):
    """``coqc`` is not installed."""


def check_generated(n: int | None = None) -> bool:
    """Whether the checked-in ``Generated_n{n}.v`` (each size if ``None``) is what SymPy emits now
    (:func:`.emit.check_generated`; SymPy loads only when this is called)."""
    return _check(n)


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
        return disallowed(self.assumptions)


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
    """The assumptions of each ``Print Assumptions`` block in ``text`` (one list per block).

    An axiom (or an ``Admitted`` lemma) is listed by its name; what Coq reports in words is kept whole, e.g.
    ``M.loop is assumed to be guarded.`` (``Unset Guard Checking``), ``M.T is assumed to be positive.``,
    ``M.U relies on an unsafe hierarchy.`` (``Unset Universe Checking``), so that it is never in the allowed list.
    """
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("Axioms:") or line.startswith("Closed under the global context"):
            cur = [] if line.startswith("Axioms:") else None
            blocks.append([] if cur is None else cur)
            continue
        if cur is None or not line.strip() or line[0].isspace():
            continue                                   # a type's continuation lines are indented
        m = re.match(r"^(\S+?)\s*(:(\s.*)?)?$", line)
        cur.append(m.group(1) if m else line.strip())
    return blocks


def disallowed(assumptions: dict, allowed: tuple = ALLOWED_AXIOMS) -> dict[str, list[str]]:
    """The assumptions outside ``allowed`` (:data:`ALLOWED_AXIOMS` unless told), per declaration (empty when all is
    well)."""
    return {t: [a for a in axs if a not in allowed] for t, axs in assumptions.items()
            if any(a not in allowed for a in axs)}


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


#: What a checked file may not contain outside comments and strings (pattern, what it is). A file that
#: ``certify --coq`` or the atlas writes has none of these; each either leaves a statement unproven or turns a
#: kernel check off, so ``check`` refuses the file rather than vouch for it.
FORBIDDEN = (
    (r"\bAdmitted\b", "Admitted (a lemma saved without proof)"),
    (r"\badmit\b", "admit (a goal left unproven)"),
    (r"\bgive_up\b", "give_up (a goal left unproven)"),
    (r"\bAdmit\s+Obligations\b", "Admit Obligations (obligations left unproven)"),
    (r"\b(Axioms?|Parameters?|Conjectures?)\b", "a new axiom declaration"),
    (r"\b(Hypothesis|Hypotheses|Variables?|Context)\b", "a section hypothesis or variable"),
    (r"\bUnset\s+(Guard|Positivity|Universe)\s+Checking\b", "a kernel check turned off"),
    (r"\bbypass_check\b", "a kernel check bypassed (#[bypass_check])"),
)
def code_only(text: str) -> str:
    """``text`` with every comment and string literal blanked (same length, newlines kept), as Coq's lexer reads
    it: comments nest, a string inside a comment is read as a string (a ``*)`` in it closes nothing), and ``""``
    inside a string is a quote."""
    out, k, depth, n = list(text), 0, 0, len(text)

    def blank(a, b):
        for x in range(a, b):
            if out[x] != "\n":
                out[x] = " "

    start = 0
    while k < n:
        if text.startswith("(*", k):
            if depth == 0:
                start = k
            depth, k = depth + 1, k + 2
        elif depth and text.startswith("*)", k):
            depth, k = depth - 1, k + 2
            if depth == 0:
                blank(start, k)
        elif text[k] == '"':
            s0, k = k, k + 1
            while k < n and not (text[k] == '"' and not text.startswith('""', k)):
                k += 2 if text.startswith('""', k) else 1
            k += 1
            if depth == 0:
                blank(s0, min(k, n))
        else:
            k += 1
    if depth:
        blank(start, n)                       # an unclosed comment: Coq refuses the file anyway
    return "".join(out)


def forbidden_commands(text: str) -> list[str]:
    """``line N: WORD: what it is`` for every :data:`FORBIDDEN` or :data:`WRITES` command in the code of ``text``
    (not in comments or strings), in order of position."""
    code = code_only(text)
    found = [(at, f"line {code.count(chr(10), 0, at) + 1}: {what}") for at, what in _sandbox.writing_commands(code)]
    for pattern, what in FORBIDDEN:
        for m in re.finditer(pattern, code):
            found.append((m.start(), f"line {code.count(chr(10), 0, m.start()) + 1}: "
                                     f"{' '.join(m.group(0).split())}: {what}"))
    return [f for _, f in sorted(found)]


@dataclass
class FileCheck(CoqRun):
    """What :func:`check_file` found: ``ok`` iff the file compiled and ``problems`` is empty.

    ``assumptions``: ``Print Assumptions`` of each declaration of the file (its name inside the file, e.g.
    ``cert_polarizes`` or ``Inner.lemma``); ``problems``: one line each (forbidden commands, declarations that
    rest on assumptions outside :data:`ALLOWED_AXIOMS`, anything that could not be inspected).
    """

    compiled: bool = False
    assumptions: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    #: Coq's answers to the ``Search`` and ``Print Assumptions`` queries
    inspection: str = ""
    #: refused before compiling: the file holds a :data:`WRITES` command
    blocked: bool = False


#: Declarations as they begin in a file's code (the name is the next word); :func:`check_file` asks Coq for the
#: declarations and cross-checks that each of these is among them.
_DECLARATION = re.compile(r"(?:^|(?<=[.\s]))(?:Theorem|Lemma|Corollary|Proposition|Fact|Remark|Example|Definition|"
                          r"Fixpoint|CoFixpoint|Inductive|CoInductive|Variant|Record|Structure|Class|Instance|"
                          r"Program\s+Definition|Let)\s+([A-Za-z_][\w']*)")


def _assumptions_of_module(module: str, dev: BuildResult, run_coqc=run_coqc,
                           only: tuple | None = None) -> tuple[dict, list[str], str]:
    """``Print Assumptions`` of every declaration of the compiled file ``module`` (in ``dev.folder``), inner modules
    included, asked from a new file that only ``Require``s it (its options, notations, search blacklist and proof
    state stay in it): ``Search _ inside`` lists the declarations, then each one's assumptions are printed.

    ``only``: print the assumptions of these declarations only (each must be among those listed; a missing one is
    named in the second list). Returns (assumptions per declaration, named as inside the file; what could not be
    inspected; the Coq output).
    """
    built = {r.file[:-2] for r in dev.runs}
    imports = [m for m in ("Trapping", "Polarization") if m in built]   # as Assumptions.v prints the names
    header = ((f"From {LOGICAL} Require Import {' '.join(imports)}.\n" if imports else "")
              + f"Require {LOGICAL}.{module}.\nUnset Printing Notations.\n")

    def ask(tag: str, body: str) -> CoqRun:
        target = dev.folder / f"Vouch_{module}_{tag}.v"
        target.write_text(header + body)
        return run_coqc(target, dev.folder)

    listing = ask("list", f'Remove Search Blacklist "Private_" "_subproof".\nSearch _ inside {LOGICAL}.{module}.\n')
    if not listing.ok:
        return {}, [f"Search failed: {listing.output.strip()[-300:]}"], listing.output
    names, unread = [], []
    for line in listing.output.splitlines():
        m = re.match(r"^(\S+?):(\s|$)", line)
        if m is None or line[0].isspace():
            continue                                   # a type's continuation lines are indented
        name = m.group(1)
        for prefix in (f"{LOGICAL}.{module}.", f"{module}."):
            if name.startswith(prefix):
                names.append(name[len(prefix):])
                break
        else:
            unread.append(f"Search listed {name!r}, not a declaration of the file")
    if only is not None:
        unread += [f"{x}: not a declaration of the file" for x in only if x not in names]
        names = [x for x in names if x in only]
    if not names:
        return {}, unread, listing.output
    run = ask("assumptions", "".join(f"Print Assumptions {LOGICAL}.{module}.{x}.\n" for x in names))
    blocks = parse_assumptions(run.output) if run.ok else []
    output = listing.output + "\n" + run.output
    if len(blocks) != len(names):
        unread.append(f"Print Assumptions gave {len(blocks)} answers for {len(names)} declarations: "
                      f"{run.output.strip()[-300:]}")
        return {}, unread, output
    return dict(zip(names, blocks)), unread, output


def _built(dev: BuildResult | None) -> BuildResult:
    """``dev``, or the development built now; RuntimeError naming the first file that does not compile."""
    dev = dev if dev is not None else build()
    if not dev.ok:
        bad = next((r for r in dev.runs if not r.ok), None)
        where = f"{bad.file}: {bad.output.strip()[:400]}" if bad else f"{len(dev.runs)} of {dev.planned} files built"
        raise RuntimeError(f"the development does not build ({where})")
    return dev


def check_file(path: str | Path, dev: BuildResult | None = None, *, scan: bool = True,
               allowed: tuple = ALLOWED_AXIOMS, declarations: tuple | None = None,
               timeout_s: float = COQC_TIMEOUT_S) -> FileCheck:
    """Compile a Coq file that imports the development (built first when ``dev`` is ``None``) and vouch for it.

    A file containing any :data:`WRITES` command (one that writes a file, changes the working folder, or loads
    code from elsewhere: ``Extraction``, ``Redirect``, ``Cd``, ``Load``, ...) outside comments and strings is
    refused before anything is compiled, whatever ``scan`` says. Otherwise the file is compiled in a private
    temporary folder holding a copy of the development (its working folder, ``HOME`` and ``TMPDIR``, removed
    afterwards; read-only everywhere else where the system allows a mount namespace, see :mod:`.sandbox`), so
    neither ``dev.folder`` nor any other folder is written.

    ``ok`` only when the file compiles, contains none of the :data:`FORBIDDEN` commands outside comments and
    strings (``scan=False`` skips this, for tests of the second layer), and every declaration in it, inner
    modules included, rests on ``allowed`` only (:data:`ALLOWED_AXIOMS`; :data:`CERTIFICATE_AXIOMS` for a replay
    certificate file) (``Print Assumptions``, read as :func:`build` reads it:
    an ``Admitted`` lemma, a new axiom, a fixpoint whose guard was not checked are all listed there). What a
    theorem *states* is not checked here: that is the job of whoever wrote the file (``certify --coq`` writes
    it from a re-verified certificate).

    ``declarations``: inspect only these (e.g. ``("cert_polarizes",)`` for a replay file: its ``Print Assumptions``
    covers every lemma its proof uses, and printing each of a K-step file's 11 K declarations costs about 5 s of
    CPU apiece); each must exist in the file.
    """
    path = Path(path)
    if path.suffix != ".v" or not path.is_file():
        raise InvalidArgument(f"FILE={str(path)!r} is not allowed; expected an existing Coq source file (.v)")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"FILE={str(path)!r} is not allowed; expected a readable UTF-8 Coq file ({exc})") \
            from None
    code = code_only(text)
    writes = sorted(_sandbox.writing_commands(code))
    if writes:
        res = FileCheck(path.name, False, 0.0, "", compiled=False, blocked=True)
        res.problems = [f"line {code.count(chr(10), 0, at) + 1}: {what}" for at, what in writes]
        res.problems.append("not compiled: the file contains a command that writes files, changes folder or "
                            "loads code")
        res.output = "\n".join(res.problems)
        return res
    dev = _built(dev)
    private = _sandbox.private_copy(dev.folder)
    try:
        return _check_in(private, path.name, path.stem, text, code, dev, scan, allowed, declarations, timeout_s)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _run_private(file: Path, folder: Path, timeout_s: float = COQC_TIMEOUT_S) -> CoqRun:
    exe = coqc_path()
    if exe is None:
        raise CoqUnavailable(f"coqc not found; install it with: {APT_COMMAND}")
    rc, text, seconds = _sandbox.run_private(exe, ["-Q", ".", LOGICAL, Path(file).name], folder, timeout_s)
    return CoqRun(Path(file).name, rc == 0, seconds, text)


def _check_in(private: Path, name: str, stem: str, text: str, code: str, dev: BuildResult, scan: bool,
              allowed: tuple = ALLOWED_AXIOMS, declarations: tuple | None = None,
              timeout_s: float = COQC_TIMEOUT_S) -> FileCheck:
    """:func:`check_file` once the file passed the :data:`WRITES` scan: compile and inspect it in ``private``."""
    module = "Check_" + re.sub(r"\W", "_", stem)
    target = private / (module + ".v")
    target.write_text(text)
    run = _run_private(target, private, timeout_s)
    res = FileCheck(name, False, run.seconds, run.output, compiled=run.ok)
    res.problems = forbidden_commands(text) if scan else []
    if not run.ok:
        res.problems.append("Coq refuses the file (it does not compile)")
        res.output = "\n".join([run.output.strip()] + res.problems).strip()
        return res
    t0 = time.perf_counter()
    here = BuildResult(private, runs=dev.runs, planned=dev.planned)
    res.assumptions, unread, out = _assumptions_of_module(module, here, run_coqc=_run_private, only=declarations)
    res.seconds += time.perf_counter() - t0
    res.inspection = out
    res.problems += unread
    if not res.assumptions and not unread:
        res.problems.append("no declaration found in the file")
    last = {x.rsplit(".", 1)[-1] for x in res.assumptions}
    for m in _DECLARATION.finditer(code) if declarations is None else ():
        if res.assumptions and m.group(1) not in last:
            res.problems.append(f"{m.group(1)}: declared in the file but not listed by Coq's Search, not inspected")
    own = module + "."
    for decl, axs in disallowed(res.assumptions, allowed).items():
        shown = [a[len(own):] if a.startswith(own) else a for a in axs]
        if shown == [decl]:
            res.problems.append(f"{decl}: is itself an assumption (Admitted, or an axiom), not proven")
        else:
            res.problems.append(f"{decl}: rests on {', '.join(shown)}, outside the allowed list")
    res.ok = not res.problems
    res.output = "\n".join([run.output.strip()] + res.problems).strip()
    return res


def check_text(text: str, name: str, dev: BuildResult | None = None) -> CoqRun:
    """As :func:`check_file`, for Coq source given as a string (``name``: a module name)."""
    dev = _built(dev)
    target = dev.folder / (re.sub(r"\W", "_", name) + ".v")
    if target.exists():
        raise FileExistsError(f"{target} exists in the build folder")
    target.write_text(text)
    run = run_coqc(target, dev.folder)
    return CoqRun(target.name, run.ok, run.seconds, run.output)


def _coq_file(imports: str, body: str) -> str:
    """A Coq file on the development: the reals, ``Calculus Softmax Trapping`` and ``imports`` loaded, then ``body``."""
    return ("From Coq Require Import Reals Lra Lia.\nFrom Softpolar Require Import Calculus Softmax Trapping"
            + (" " + imports if imports else "") + ".\nOpen Scope R_scope.\n" + body)


def _theorem_file(imports: str, name: str, statement: str, proof: str) -> str:
    """:func:`_coq_file` holding one theorem: ``statement`` (a template, its ``{...}`` filled later) and ``proof``."""
    return _coq_file(imports, "Theorem " + name + " : " + statement + ".\nProof.\n" + proof + "Qed.\n")


#: The FORMAL claim's control and witness: the same statement and proof script, convergence from a
#: region.  With ``in_Rplus`` it is the trapping lemma (compiles); with ``in_R`` (ties a_i = a_j
#: allowed) it is false (``RefuteTies.v`` proves its negation) and Coq must refuse it.
REGION_STATEMENT = ("forall n i b u a t0, (i < n)%nat -> 0 < b ->\n"
                    "  is_tau_solution n b u a t0 -> {region} n i (u t0) (a t0) ->\n"
                    "  forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) "
                    "(if Nat.eq_dec k i then 1 else 0)")
REGION_TEMPLATE = _theorem_file("", "convergence_from_region", REGION_STATEMENT,
    "  intros n i b u a t0 Hi Hb Hsol H0.\n"
    "  apply (softpolar_trapping n i b u a t0 Hi Hb Hsol H0).\n")
#: A planted bug for the FORMAL control's witness: R_i defined with strict a-gaps (so it is R_i^+). Under it the
#: control's file (convergence from R_i) must compile: the control can pass, its refusal is evidence.
TIES_BUG = {"Softmax.v": ("forall j, (j < n)%nat -> j <> i -> u j <= u i /\\ a j <= a i.",
                          "forall j, (j < n)%nat -> j <> i -> u j <= u i /\\ a j < a i.")}

#: Coq accepts this only if ``ties_refute_convergence`` proves the negation of exactly the control's statement.
REFUTATION_TEMPLATE = _coq_file("RefuteTies", "Definition control_statement_is_false : ~ (" + REGION_STATEMENT
                                 + ") := ties_refute_convergence.\n")

#: The reduction's control (``tests/test_coq_reduction.py``, FORMAL): ``Reduction.reduction``'s statement with the
#: factor b and the clock rate as parameters, and its proof script. With ``b="sqnorm d w"``,
#: ``clock="logistic_clock"`` it is the theorem (compiles); a wrong factor (``2 * sqnorm d w``) or the clock's sign
#: flipped (``fun z => - logistic_clock z``) must be refused by Coq.
REDUCTION_STATEMENT = ("forall (n d : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)\n"
                       "    (tau : R -> R) (t0 : R),\n"
                       "  is_gradient_flow (objective n d w) n d V a t0 ->\n"
                       "  (forall t, t0 <= t -> derivable_pt_lim tau t (({clock}) (margin n d w (V t) (a t)))) ->\n"
                       "  is_logistic_solution n ({b}) tau (fun t => proj d w (V t)) a t0")
REDUCTION_TEMPLATE = _theorem_file("Reduction", "reduction_control", REDUCTION_STATEMENT,
    "  intros n d w V a tau t0 Hflow Htau t Ht. cbv beta. rewrite <- margin_zbar.\n"
    "  split; [|split].\n"
    "  - unfold logistic_clock. apply Rinv_0_lt_compat. pose proof (exp_pos (margin n d w (V t) (a t))). lra.\n"
    "  - apply Htau, Ht.\n"
    "  - intros k Hk. split.\n"
    "    + apply (flow_u n d w V a t0 Hflow t k Ht Hk).\n"
    "    + apply (flow_a n d w V a t0 Hflow t k Ht Hk).\n")
#: (b, clock) of the true statement and of the planted wrong ones.
REDUCTION_TRUE = {"b": "sqnorm d w", "clock": "logistic_clock"}
REDUCTION_WRONG = {"factor": {"b": "2 * sqnorm d w", "clock": "logistic_clock"},
                   "clock sign": {"b": "sqnorm d w", "clock": "fun z => - logistic_clock z"}}

#: No crossing's control: ``NoCrossing.no_crossing``'s statement with the a-order's time range as a parameter, and its
#: proof script. With ``after="t0 < t"`` it is the theorem; with ``after="t0 <= t"`` (the a-order strict already at
#: t0, false from a uniform a(t0)) Coq must refuse it.
NO_CROSSING_STATEMENT = ("forall n b g tau (u a : R -> nat -> R) t0,\n"
                         "  0 < b -> is_clocked_solution n b g tau u a t0 ->\n"
                         "  (forall j k, (j < n)%nat -> (k < n)%nat -> a t0 j = a t0 k) ->\n"
                         "  forall p q, (p < n)%nat -> (q < n)%nat -> u t0 q < u t0 p ->\n"
                         "  (forall t, t0 <= t -> u t q < u t p) /\\ (forall t, {after} -> a t q < a t p)")
NO_CROSSING_TEMPLATE = _theorem_file("NoCrossing", "no_crossing_control", NO_CROSSING_STATEMENT,
    "  intros n b g tau u a t0 Hb Hsol Hun p q Hp Hq Hu0.\n"
    "  apply (no_crossing_pair n p q b g tau u a t0 Hp Hq Hb Hsol Hu0). right. apply Hun; assumption.\n")
NO_CROSSING_TRUE = {"after": "t0 < t"}
NO_CROSSING_WRONG = {"a strict at t0": {"after": "t0 <= t"}}

#: The leading term's control: ``Rates.u_top_leading``'s statement with the limit of u_i / tau as a parameter. With
#: ``limit="b"`` it is the theorem; with ``2 * b`` (a wrong constant) Coq must refuse it.
RATE_STATEMENT = ("forall (n i : nat) (b : R) (u a : R -> nat -> R) (t0 : R),\n"
                  "  (i < n)%nat -> 0 < b -> is_tau_solution n b u a t0 -> in_Rplus n i (u t0) (a t0) ->\n"
                  "  tends_to (fun t => u t i / t) ({limit})")
RATE_TEMPLATE = _theorem_file("Rates", "rate_control", RATE_STATEMENT,
    "  intros n i b u a t0 Hi Hb Hsol H0.\n"
    "  apply (u_top_leading n i b u a t0 Hi Hb Hsol H0).\n")
RATE_TRUE = {"limit": "b"}
RATE_WRONG = {"constant": {"limit": "2 * b"}}
