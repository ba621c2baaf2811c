"""``python -m theorems.coq build [FOLDER] | check FILE.v [CERT.json] | emit [--check] | lines``."""
from __future__ import annotations

import sys

from theorems.errors import InvalidArgument

from .certstatement import compare, load
from .emit import check_generated, write_generated

from . import (
    ALLOWED_AXIOMS,
    APT_COMMAND,
    CERTIFICATE_AXIOMS,
    PRIMITIVE_NUMBER_AXIOMS,
    CoqUnavailable,
    build,
    check_file,
    coq_version,
    line_count,
)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv[0] if argv else "build"
    try:
        if cmd == "build":
            res = build(argv[1] if len(argv) > 1 else None)
            for r in res.runs:
                print(f"{r.file:<18} {'ok' if r.ok else 'FAILED'}  {r.seconds:.1f} s")
                if not r.ok:
                    print(r.output.strip())
            print(res.assumptions_text.strip())
            bad = res.disallowed_axioms()
            where = res.folder if len(argv) > 1 else "a temporary folder (removed; give FOLDER to keep the build)"
            print(f"coqc {coq_version()}; {sum(line_count().values())} lines; built in {res.seconds:.1f} s in {where}")
            if bad:
                print(f"axioms outside the allowed list: {bad}")
            return 0 if res.ok and not bad else 1
        if cmd == "check" and len(argv) == 3:
            text, cert = load(argv[1], argv[2])
            problems = compare(text, cert)
            if problems:
                print("\n".join(problems))
                print(f"{argv[1]}: REFUSED: its statement is not the certificate's ({argv[2]})")
                return 1
            print(f"{argv[1]}: states the certificate's theorem (V(0), a(0), beta*, winner token {cert['winner']})")
            code = _check(argv[1], CERTIFICATE_AXIOMS, ("cert_polarizes", "cert_model_polarizes"))
            if code == 0:
                print(f"trusted, not checked by Coq: Coq's kernel; the classical-reals axioms; the "
                      f"{len(PRIMITIVE_NUMBER_AXIOMS)} primitive-integer/float specification axioms Interval computes "
                      f"with (theorems.coq.PRIMITIVE_NUMBER_AXIOMS); the parse of the certificate's decimal init "
                      f"into exact rationals (compared above); in cert_model_polarizes, the clock tau and its inverse "
                      f"time change sigma (hypotheses)")
            return code
        if cmd == "check" and len(argv) == 2:
            code = _check(argv[1], ALLOWED_AXIOMS)
            if code == 0:
                print("what the declarations state is not compared with a certificate (give CERT.json for that)")
            return code
        if cmd == "emit":
            if argv[1:] == ["--check"]:
                ok = check_generated()
                print("Generated_n3.v, Generated_n4.v match the SymPy derivation" if ok
                      else "a generated file is stale")
                return 0 if ok else 1
            print("\n".join(write_generated()))
            return 0
        if cmd == "lines":
            for f, k in line_count().items():
                print(f"{f:<18} {k}")
            print(f"{'total':<18} {sum(line_count().values())}")
            return 0
    except CoqUnavailable:
        print(f"coqc not found; install it with: {APT_COMMAND}", file=sys.stderr)
        return 2
    except InvalidArgument as exc:
        print(f"theorems.coq {cmd}: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:        # the development itself does not build: nothing is vouched for
        print(f"theorems.coq {cmd}: {' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return 1
    print("usage: python -m theorems.coq build [FOLDER] | check FILE.v [CERT.json] | emit [--check] | lines",
          file=sys.stderr)
    return 2


def _check(file: str, allowed: tuple, declarations: tuple | None = None) -> int:
    run = check_file(file, allowed=allowed, declarations=declarations)
    if run.ok:
        for name, axs in run.assumptions.items():
            print(f"  {name}: {', '.join(axs) if axs else 'closed (no axioms)'}")
        what = (f"its {len(run.assumptions)} declarations rest" if declarations is None else
                f"{', '.join(declarations)} (with every lemma its proof uses) rests")
        print(f"{run.file}: compiles; {what} only on allowed axioms "
              f"(no Admitted, no new axiom, no kernel check off) ({run.seconds:.1f} s)")
        return 0
    print(run.output)     # Coq's messages, then one line per problem
    why = ("not compiled: it writes files or loads code" if run.blocked else "Coq refuses it"
           if not run.compiled else f"it compiles, but {len(run.problems)} problem(s) above")
    print(f"{run.file}: REFUSED: {why} ({run.seconds:.1f} s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
