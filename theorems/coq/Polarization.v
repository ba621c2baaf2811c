(** * The paper's theorem: from a uniform a(0) and a strict maximum of u(0) at i, s -> e_i.

    The only assumption beyond Coq's classical reals is [reduced_flow_global_existence]:
    the reduced flow has a global solution (see its comment). *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping.
Open Scope R_scope.

(** From R_i with a strict u-maximum (ties in a allowed), the flow is in R_i^+ a moment later. *)
Lemma enters_Rplus : forall n i b g tau u a t0, (i < n)%nat -> 0 < b ->
  is_clocked_solution n b g tau u a t0 ->
  (forall j, (j < n)%nat -> j <> i -> u t0 j < u t0 i /\ a t0 j <= a t0 i) ->
  exists t1, t0 < t1 /\ in_Rplus n i (u t1) (a t1).
Proof.
  intros n i b g tau u a t0 Hi Hb Hsol H0.
  assert (HR0 : in_R n i (u t0) (a t0)) by (intros j Hj Hne; destruct (H0 j Hj Hne); split; lra).
  assert (Hnear : forall j, (j < n)%nat -> exists d, 0 < d /\ forall h, 0 < h < d ->
             j <> i -> u (t0 + h) j <= u (t0 + h) i /\ a (t0 + h) j < a (t0 + h) i).
  { intros j Hj. destruct (Nat.eq_dec j i) as [->|Hne]; [exists 1; split; [lra|]; intros h _ Hc; congruence|].
    destruct (H0 j Hj Hne) as [Hu Ha].
    destruct (cont_pos_near (fun t => u t i - u t j) t0 _
                (d_ugap n i b g tau u a t0 Hi Hsol j t0 Hj (Rle_refl t0))) as [d1 [Hd1 Hy1]]; [lra|].
    assert (Hag : exists d2, 0 < d2 /\ forall h, 0 < h < d2 -> 0 < a (t0 + h) i - a (t0 + h) j).
    { destruct (Rle_lt_or_eq_dec _ _ Ha) as [Hlt|Heq].
      - destruct (cont_pos_near (fun t => a t i - a t j) t0 _
                    (d_agap n i b g tau u a t0 Hi Hsol j t0 Hj (Rle_refl t0))) as [d2 [Hd2 Hy2]]; [lra|].
        exists d2. split; [exact Hd2|]. intros h Hh. apply Hy2. rewrite Rabs_pos_eq; lra.
      - destruct (Hsol t0 (Rle_refl t0)) as [Hg _].
        assert (Hrate := agap_rate n i j (u t0) (a t0) Hi Hj HR0).
        pose proof (softmax_pos n (a t0) i Hi j).
        assert (0 < softmax n (a t0) j * (u t0 i - u t0 j)) by (apply Rmult_lt_0_compat; lra).
        destruct (deriv_pos_right (fun t => a t i - a t j) t0 _
                    (d_agap n i b g tau u a t0 Hi Hsol j t0 Hj (Rle_refl t0))) as [d2 [Hd2 Hy2]].
        { apply Rmult_lt_0_compat; lra. }
        exists d2. split; [exact Hd2|]. intros h Hh. specialize (Hy2 h Hh). simpl in Hy2. lra. }
    destruct Hag as [d2 [Hd2 Hy2]].
    exists (Rmin d1 d2). split; [apply Rmin_pos; assumption|]. intros h Hh _.
    pose proof (Rmin_l d1 d2). pose proof (Rmin_r d1 d2).
    split.
    - assert (0 < u (t0 + h) i - u (t0 + h) j) by (apply Hy1; rewrite Rabs_pos_eq; [|]; lra). lra.
    - assert (0 < a (t0 + h) i - a (t0 + h) j) by (apply Hy2; lra). lra. }
  destruct (finite_delta _ n Hnear) as [d [Hd Hall]].
  exists (t0 + d / 2). split; [lra|]. intros j Hj Hne. apply Hall; [exact Hj|lra|exact Hne].
Qed.

Lemma clocked_shift : forall n b g tau u a t0 t1, t0 <= t1 ->
  is_clocked_solution n b g tau u a t0 -> is_clocked_solution n b g tau u a t1.
Proof. intros n b g tau u a t0 t1 H Hs t Ht. apply Hs. lra. Qed.

(** ** Global existence: the one axiom.
    For a continuous clock rate G with 0 < G <= 1, the field (u, a, tau) |-> G(<u, s>) (b s, J(s) u, 1)
    is continuous on R^(2n+1) with linear growth (|b s| <= b, |J(s) u| <= 2 max_k |u_k|, |G| <= 1),
    so a solution exists for all times (Peano's theorem and the continuation of bounded solutions,
    e.g. Hartman, Ordinary Differential Equations, Thm II.1.1 and Cor. II.3.1; the field is smooth when G
    is, so the solution is also unique).  G = 1 is the tau-system, G(z) = 1/(1 + e^z) the logistic flow. *)
Axiom reduced_flow_global_existence :
  forall (n : nat) (b : R) (G : R -> R) (u0 a0 : nat -> R) (tau0 : R),
    (0 < n)%nat -> 0 < b -> continuity G -> (forall z, 0 < G z <= 1) ->
    exists (tau : R -> R) (u a : R -> nat -> R),
      tau 0 = tau0 /\ (forall k, (k < n)%nat -> u 0 k = u0 k /\ a 0 k = a0 k) /\
      is_clocked_solution n b (fun t => G (zbar n (u t) (a t))) tau u a 0.

Definition uniform (n : nat) (a : nat -> R) : Prop :=
  forall j k, (j < n)%nat -> (k < n)%nat -> a j = a k.

Definition strict_max (n i : nat) (u : nat -> R) : Prop :=
  forall j, (j < n)%nat -> j <> i -> u j < u i.

Definition starts_at (n : nat) (u0 a0 : nat -> R) (u a : R -> nat -> R) : Prop :=
  forall k, (k < n)%nat -> u 0 k = u0 k /\ a 0 k = a0 k.

Lemma logistic_clock_continuous : continuity logistic_clock.
Proof.
  unfold logistic_clock. apply (continuity_inv (fun z => 1 + exp z)).
  - apply continuity_plus; [apply continuity_const; intros x y; reflexivity|apply derivable_continuous, derivable_exp].
  - intros z. pose proof (exp_pos z). lra.
Qed.

Lemma logistic_clock_bounds : forall z, 0 < logistic_clock z <= 1.
Proof.
  intros z. unfold logistic_clock. pose proof (exp_pos z). split.
  - apply Rinv_0_lt_compat. lra.
  - rewrite <- Rinv_1. apply Rinv_le_contravar; lra.
Qed.

(** Polarization from R_i with a strict u-maximum, along any clocked solution whose clock diverges. *)
Lemma polarization_clocked : forall n i b g tau u a, (i < n)%nat -> 0 < b ->
  is_clocked_solution n b g tau u a 0 -> tends_to_infty tau ->
  (forall j, (j < n)%nat -> j <> i -> u 0 j < u 0 i /\ a 0 j <= a 0 i) ->
  (forall j, (j < n)%nat -> j <> i -> tends_to_infty (fun t => a t i - a t j)) /\
  (forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros n i b g tau u a Hi Hb Hsol Htau H0.
  destruct (enters_Rplus n i b g tau u a 0 Hi Hb Hsol H0) as [t1 [Ht1 HR1]].
  pose proof (clocked_shift n b g tau u a 0 t1 ltac:(lra) Hsol) as Hsol1.
  pose proof (divergence n i b g tau u a t1 Hi Hb Hsol1 HR1 Htau) as Hdiv.
  split; [exact Hdiv|]. apply (softmax_limit n i a Hi Hdiv).
Qed.

Lemma uniform_strict_start : forall n i (u0 a0 : nat -> R) (u a : R -> nat -> R), (i < n)%nat ->
  uniform n a0 -> strict_max n i u0 -> starts_at n u0 a0 u a ->
  forall j, (j < n)%nat -> j <> i -> u 0 j < u 0 i /\ a 0 j <= a 0 i.
Proof.
  intros n i u0 a0 u a Hi Hun Hmax Hst j Hj Hne.
  destruct (Hst i Hi) as [Hui Hai]. destruct (Hst j Hj) as [Huj Haj].
  rewrite Hui, Huj, Hai, Haj. split; [apply Hmax; assumption|]. right. apply Hun; assumption.
Qed.

(** ** The paper's theorem (logistic loss, uniform a(0), strict maximum of u(0) at i). *)
Theorem softpolar_polarization : forall (n i : nat) (b : R) (u0 a0 : nat -> R),
  (i < n)%nat -> 0 < b -> uniform n a0 -> strict_max n i u0 ->
  (* the reduced tau-system (star): a solution exists, and along every solution s -> e_i *)
  (exists u a, starts_at n u0 a0 u a /\ is_tau_solution n b u a 0) /\
  (forall u a, starts_at n u0 a0 u a -> is_tau_solution n b u a 0 ->
     forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)) /\
  (* the original time t with the logistic clock dtau/dt = 1/(1 + e^<u,s>): a solution exists, and along
     every solution tau(t) -> oo and s(t) -> e_i *)
  (exists tau u a, tau 0 = 0 /\ starts_at n u0 a0 u a /\ is_logistic_solution n b tau u a 0) /\
  (forall tau u a, starts_at n u0 a0 u a -> is_logistic_solution n b tau u a 0 ->
     tends_to_infty tau /\
     forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros n i b u0 a0 Hi Hb Hun Hmax.
  assert (Hn : (0 < n)%nat) by lia.
  split; [|split; [|split]].
  - destruct (reduced_flow_global_existence n b (fun _ => 1) u0 a0 0 Hn Hb) as [tau [u [a [_ [Hst Hsol]]]]].
    + intros x. apply continuity_const. intros y z. reflexivity.
    + intros _. lra.
    + exists u, a. split; [exact Hst|]. apply (clocked_tau_solution n b tau u a 0 Hsol).
  - intros u a Hst Hsol.
    pose proof (tau_solution_clocked n b u a 0 Hsol) as Hc.
    assert (Htau : tends_to_infty (fun t => t)) by (intros M; exists M; auto).
    apply (polarization_clocked n i b _ _ u a Hi Hb Hc Htau).
    apply (uniform_strict_start n i u0 a0 u a Hi Hun Hmax Hst).
  - destruct (reduced_flow_global_existence n b logistic_clock u0 a0 0 Hn Hb
                logistic_clock_continuous logistic_clock_bounds) as [tau [u [a [Ht0 [Hst Hsol]]]]].
    exists tau, u, a. split; [exact Ht0|]. split; [exact Hst|exact Hsol].
  - intros tau u a Hst Hsol.
    pose proof (logistic_clock_diverges n i b tau u a 0 Hi Hb Hsol) as Htau.
    split; [exact Htau|].
    apply (polarization_clocked n i b _ tau u a Hi Hb Hsol Htau).
    apply (uniform_strict_start n i u0 a0 u a Hi Hun Hmax Hst).
Qed.
