(** * From a tau-system certificate to the parameter flow  [D]

    A replay file ([certify --coq]) proves, for one initial condition u0 = V0^T w, a0: every
    solution of the tau-system (star) with b = |w|^2 from (u0, a0) is in R_i^+ from some tau_K on
    ([cert_polarizes]).  [model_of_tau_certificate] turns that into the statement on the
    parameters: every gradient flow of F(V, a) = l(<w, V s(a)>) from (V0, a0), with its clock tau
    (tau' = -l'(margin)) and the inverse time change sigma (sigma(0) = 0, sigma' = 1/tau'(sigma)),
    has s(a(t)) -> e_i.  The clock and its inverse are hypotheses (as in [reduction_tau]); the
    proof is [reduction_tau], the certificate at tau_K, then [model_trapping] from t_K = sigma(tau_K).
    Standard library only; no existence axiom. *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping Polarization Reduction.
Open Scope R_scope.

Theorem model_of_tau_certificate : forall (n d i : nat) (w : nat -> R) (V0 : nat -> nat -> R) (a0 : nat -> R)
    (tK : R) (V : R -> nat -> nat -> R) (a : R -> nat -> R) (tau sigma : R -> R),
  (i < n)%nat -> 0 < sqnorm d w -> 0 <= tK ->
  (forall u a, is_tau_solution n (sqnorm d w) u a 0 ->
     (forall k, (k < n)%nat -> u 0 k = proj d w V0 k /\ a 0 k = a0 k) ->
     forall t, tK <= t -> in_Rplus n i (u t) (a t)) ->
  is_gradient_flow (objective n d w) n d V a 0 ->
  (forall t, 0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  sigma 0 = 0 ->
  (forall r, 0 <= r -> 0 <= sigma r /\
     derivable_pt_lim sigma r (/ logistic_clock (margin n d w (V (sigma r)) (a (sigma r))))) ->
  (forall r c, (r < d)%nat -> (c < n)%nat -> V 0 r c = V0 r c) ->
  (forall k, (k < n)%nat -> a 0 k = a0 k) ->
  forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0).
Proof.
  intros n d i w V0 a0 tK V a tau sigma Hi Hb HK Hcert Hflow Htau Hs0 Hsig HV0 Ha0.
  pose proof (reduction_tau n d w V a tau sigma 0 0 Hflow Htau Hsig) as Hsol.
  assert (Hin : in_Rplus n i (proj d w (V (sigma tK))) (a (sigma tK))).
  { apply (Hcert (fun r => proj d w (V (sigma r))) (fun r => a (sigma r)) Hsol); [|lra].
    intros k Hk. rewrite Hs0. split; [|apply Ha0, Hk].
    unfold proj. apply sumn_ext. intros r Hr. rewrite HV0 by assumption. reflexivity. }
  destruct (Hsig tK HK) as [HtK _].
  destruct (model_trapping n d i w V a tau (sigma tK) Hi Hb) as [_ [_ [_ Hlim]]]; [| | exact Hin | exact Hlim].
  - intros t Ht. apply Hflow. lra.
  - intros t Ht. apply Htau. lra.
Qed.
