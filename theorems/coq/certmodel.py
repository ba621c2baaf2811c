"""The model-level theorem of a ``certify --coq`` replay file (issue 37): ``cert_model_polarizes``.

The replay's ``cert_polarizes`` is stated for the tau-system from u(0) = V(0)^T beta*, a(0). The theorem written
here applies ``model_of_tau_certificate`` (CertModel.v) to it: every gradient flow of F(V, a) = l(<beta*, V s(a)>)
from the certificate's V(0), a(0), with its clock tau and the inverse time change sigma (hypotheses, as in
``reduction_tau``), has s(a(t)) -> e_i. Its statement names only ``cert_V0``, ``cert_a0``, ``cert_beta``, n, d
and the winner, so :func:`model_statement` is what ``python -m theorems.coq check`` compares.
"""
from __future__ import annotations

MODEL_THEOREM = "cert_model_polarizes"


def model_statement(n: int, d: int, winner: int) -> list[str]:
    """The statement of ``cert_model_polarizes`` (up to ``Proof.``)."""
    m = f"margin {n} {d} cert_beta"
    return [f"Theorem {MODEL_THEOREM} : forall (V : R -> nat -> nat -> R) (a : R -> nat -> R) (tau sigma : R -> R),",
            f"  is_gradient_flow (objective {n} {d} cert_beta) {n} {d} V a 0 ->",
            f"  (forall t, 0 <= t -> derivable_pt_lim tau t (logistic_clock ({m} (V t) (a t)))) ->",
            "  sigma 0 = 0 ->",
            "  (forall r, 0 <= r -> 0 <= sigma r /\\",
            f"     derivable_pt_lim sigma r (/ logistic_clock ({m} (V (sigma r)) (a (sigma r))))) ->",
            f"  (forall r c, (r < {d})%nat -> (c < {n})%nat -> V 0 r c = cert_V0 r c) ->",
            f"  (forall k, (k < {n})%nat -> a 0 k = cert_a0 k) ->",
            f"  forall k, (k < {n})%nat -> tends_to (fun t => softmax {n} (a t) k) "
            f"(if Nat.eq_dec k {winner}%nat then 1 else 0).",
            "Proof."]


def model_theorem(n: int, d: int, winner: int, tK: str) -> list[str]:
    """The lines appended to a replay file after ``cert_polarizes`` (whose entry time is the Coq literal ``tK``)."""
    return ["", "From Softpolar Require Import Reduction CertModel.", "",
            "(** The certificate on the parameters: every gradient flow of F(V, a) = l(<beta*, V s(a)>) from this",
            "    V(0), a(0), with its clock tau and the inverse time change sigma (assumed, as in reduction_tau),",
            f"    has s(a(t)) -> e_{winner}: model_of_tau_certificate (CertModel.v) applied to cert_polarizes. *)",
            *model_statement(n, d, winner),
            "  intros V a tau sigma.",
            f"  exact (model_of_tau_certificate {n} {d} {winner}%nat cert_beta cert_V0 cert_a0 {tK} V a tau sigma",
            "           ltac:(lia) ltac:(unfold sqnorm, cert_beta; simpl; lra) ltac:(lra)",
            "           (fun u a Hs H0 => proj1 (cert_polarizes u a Hs H0))).",
            "Qed.", ""]
