(** * Ties are not enough: convergence from the closed region R_i is false.

    With n = 2, b = 2, u_k(t) = t and a_k(t) = 0 solve the tau-system; the start lies in R_1
    (u_1 = u_2, a_1 = a_2) but s_1 = 1/2 for all t.  So the strict a-gaps of R_i^+ in
    [softpolar_trapping] cannot be weakened to a_j <= a_i. *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping.
Open Scope R_scope.

Definition tie_u (t : R) (k : nat) : R := t.
Definition tie_a (t : R) (k : nat) : R := 0.

Lemma tie_softmax : forall t k, softmax 2 (tie_a t) k = / 2.
Proof. intros t k. unfold softmax, Zsum, tie_a. simpl. rewrite exp_0. field. Qed.

Lemma tie_solution : is_tau_solution 2 2 tie_u tie_a 0.
Proof.
  intros t _ k Hk. unfold du_rhs, da_rhs. rewrite tie_softmax. split.
  - eapply dlim_ext_value; [|apply dlim_id]. field.
  - unfold zbar. rewrite (sumn_ext _ (fun _ => / 2 * t) 2) by (intros; rewrite tie_softmax; reflexivity).
    simpl. unfold tie_u. eapply dlim_ext_value; [|apply (derivable_pt_lim_const 0 t)]. field.
Qed.

Theorem ties_refute_convergence :
  ~ (forall n i b u a t0, (i < n)%nat -> 0 < b -> is_tau_solution n b u a t0 -> in_R n i (u t0) (a t0) ->
       forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros H.
  assert (HR : in_R 2 0 (tie_u 0) (tie_a 0)) by (intros j _ _; unfold tie_u, tie_a; split; lra).
  specialize (H 2%nat 0%nat 2 tie_u tie_a 0 ltac:(lia) ltac:(lra) tie_solution HR 0%nat ltac:(lia)).
  simpl in H. destruct (H (/ 4) ltac:(lra)) as [T HT]. specialize (HT T (Rle_refl T)).
  rewrite tie_softmax in HT. rewrite Rabs_left1 in HT; lra.
Qed.
