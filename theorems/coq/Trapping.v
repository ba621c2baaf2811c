(** * The trapping lemma along the tau-system, and the paper's polarization theorem.

    A clocked solution solves du/dt = g(t) b s, da/dt = g(t) J(s) u, dtau/dt = g(t) with a
    positive factor g.  With g = 1 and tau = t it is the tau-system (star); with
    g = 1/(1 + exp <u, s>) it is the logistic flow in the original time t, tau its clock. *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax.
Open Scope R_scope.

Definition is_tau_solution (n : nat) (b : R) (u a : R -> nat -> R) (t0 : R) : Prop :=
  forall t, t0 <= t -> forall k, (k < n)%nat ->
    derivable_pt_lim (fun s => u s k) t (du_rhs n b (u t) (a t) k) /\
    derivable_pt_lim (fun s => a s k) t (da_rhs n (u t) (a t) k).

Definition is_clocked_solution (n : nat) (b : R) (g tau : R -> R) (u a : R -> nat -> R) (t0 : R) : Prop :=
  forall t, t0 <= t -> 0 < g t /\ derivable_pt_lim tau t (g t) /\
    forall k, (k < n)%nat ->
      derivable_pt_lim (fun s => u s k) t (g t * du_rhs n b (u t) (a t) k) /\
      derivable_pt_lim (fun s => a s k) t (g t * da_rhs n (u t) (a t) k).

(** The logistic clock: dtau/dt = -l'(z) = 1/(1 + e^z), z = <u, s>. *)
Definition logistic_clock (z : R) : R := / (1 + exp z).

Definition is_logistic_solution (n : nat) (b : R) (tau : R -> R) (u a : R -> nat -> R) (t0 : R) : Prop :=
  is_clocked_solution n b (fun t => logistic_clock (zbar n (u t) (a t))) tau u a t0.

Lemma tau_solution_clocked : forall n b u a t0,
  is_tau_solution n b u a t0 -> is_clocked_solution n b (fun _ => 1) (fun t => t) u a t0.
Proof.
  intros n b u a t0 H t Ht. split; [lra|]. split; [apply dlim_id|].
  intros k Hk. destruct (H t Ht k Hk) as [H1 H2].
  split; (eapply dlim_ext_value; [|eassumption]); ring.
Qed.

Lemma clocked_tau_solution : forall n b tau u a t0,
  is_clocked_solution n b (fun _ => 1) tau u a t0 -> is_tau_solution n b u a t0.
Proof.
  intros n b tau u a t0 H t Ht k Hk. destruct (H t Ht) as [_ [_ H']]. destruct (H' k Hk) as [H1 H2].
  split; (eapply dlim_ext_value; [|eassumption]); ring.
Qed.

Section Clocked.
Variables (n i : nat) (b : R) (g tau : R -> R) (u a : R -> nat -> R) (t0 : R).
Hypotheses (Hi : (i < n)%nat) (Hb : 0 < b) (Hsol : is_clocked_solution n b g tau u a t0).

Let ugap j := fun t => u t i - u t j.
Let agap j := fun t => a t i - a t j.

Lemma d_ugap : forall j t, (j < n)%nat -> t0 <= t ->
  derivable_pt_lim (ugap j) t (g t * (du_rhs n b (u t) (a t) i - du_rhs n b (u t) (a t) j)).
Proof.
  intros j t Hj Ht. destruct (Hsol t Ht) as [_ [_ H]].
  eapply dlim_ext_value; [|apply dlim_minus; [apply (H i Hi)|apply (H j Hj)]]. ring.
Qed.

Lemma d_agap : forall j t, (j < n)%nat -> t0 <= t ->
  derivable_pt_lim (agap j) t (g t * (da_rhs n (u t) (a t) i - da_rhs n (u t) (a t) j)).
Proof.
  intros j t Hj Ht. destruct (Hsol t Ht) as [_ [_ H]].
  eapply dlim_ext_value; [|apply dlim_minus; [apply (H i Hi)|apply (H j Hj)]]. ring.
Qed.

Lemma tau_mono : forall s t, t0 <= s -> s <= t -> tau s <= tau t.
Proof.
  intros s t Hs Hst. apply (nondecr_of_deriv tau g); [exact Hst| |].
  - intros c Hc. apply (Hsol c ltac:(lra)).
  - intros c Hc. left. apply (Hsol c ltac:(lra)).
Qed.

(** a_j < a_i for all j <> i: the open condition that real induction carries. *)
Definition Pa (t : R) : Prop := forall j, (j < n)%nat -> j <> i -> a t j < a t i.

Lemma Pa_dec : forall t, Pa t \/ ~ Pa t.
Proof.
  intros t. apply (forall_lt_dec (fun j => j <> i -> a t j < a t i)). intros j.
  destruct (Nat.eq_dec j i) as [->|Hne].
  - left. intros H; congruence.
  - destruct (Rlt_dec (a t j) (a t i)) as [H|H]; [left; auto | right; intros H'; apply H, H'; exact Hne].
Qed.

(** While a_j < a_i on [t0, t]: the u-gaps and the a-gaps do not decrease, so the state is in R_i. *)
Lemma gaps_on_interval : in_Rplus n i (u t0) (a t0) ->
  forall t, t0 <= t -> (forall s, t0 <= s <= t -> Pa s) ->
  forall s, t0 <= s <= t -> in_R n i (u s) (a s) /\
    forall j, (j < n)%nat -> ugap j t0 <= ugap j s /\ agap j t0 <= agap j s.
Proof.
  intros H0 t Ht HP.
  assert (Hu : forall j s, (j < n)%nat -> t0 <= s <= t -> ugap j t0 <= ugap j s).
  { intros j s Hj Hs. apply (nondecr_of_deriv (ugap j)
        (fun c => g c * (du_rhs n b (u c) (a c) i - du_rhs n b (u c) (a c) j))); [lra| |].
    - intros c Hc. apply d_ugap; [exact Hj|lra].
    - intros c Hc. destruct (Hsol c ltac:(lra)) as [Hg _]. apply Rmult_le_pos; [lra|].
      destruct (Nat.eq_dec j i) as [->|Hne]; [lra|].
      apply ugap_nonneg; try assumption. left. apply (HP c ltac:(lra) j Hj Hne). }
  assert (HR : forall s, t0 <= s <= t -> in_R n i (u s) (a s)).
  { intros s Hs j Hj Hne. split.
    - specialize (Hu j s Hj Hs). destruct (H0 j Hj Hne). unfold ugap in Hu. lra.
    - pose proof (HP s Hs j Hj Hne). lra. }
  intros s Hs. split; [apply HR, Hs|]. intros j Hj. split; [apply Hu; assumption|].
  apply (nondecr_of_deriv (agap j)
        (fun c => g c * (da_rhs n (u c) (a c) i - da_rhs n (u c) (a c) j))); [lra| |].
  - intros c Hc. apply d_agap; [exact Hj|lra].
  - intros c Hc. destruct (Hsol c ltac:(lra)) as [Hg _]. apply Rmult_le_pos; [lra|].
    apply agap_nonneg; try assumption. apply HR. lra.
Qed.

(** Forward invariance of R_i^+, with monotone gaps. *)
Theorem invariance : in_Rplus n i (u t0) (a t0) ->
  forall t, t0 <= t -> in_Rplus n i (u t) (a t) /\ in_R n i (u t) (a t) /\
    forall j, (j < n)%nat -> ugap j t0 <= ugap j t /\ agap j t0 <= agap j t.
Proof.
  intros H0.
  assert (HPa : forall t, t0 <= t -> Pa t).
  { apply real_induction; [exact Pa_dec| | |].
    - intros j Hj Hne. apply (H0 j Hj Hne).
    - intros t Ht Hbelow j Hj Hne.
      assert (Hg : agap j t0 <= agap j t).
      { apply (closed_bound (agap j) t0 t
                 (g t * (da_rhs n (u t) (a t) i - da_rhs n (u t) (a t) j))); [apply d_agap; [exact Hj|lra]|lra|].
        intros s Hs. apply (gaps_on_interval H0 s (proj1 Hs)); [|lra|exact Hj].
        intros r Hr. apply Hbelow. lra. }
      destruct (H0 j Hj Hne). unfold agap in Hg. lra.
    - intros t Ht Hupto.
      assert (Hnear : forall j, (j < n)%nat -> exists d, 0 < d /\ forall h, 0 < h < d ->
                 j <> i -> a (t + h) j < a (t + h) i).
      { intros j Hj. destruct (Nat.eq_dec j i) as [->|Hne].
        - exists 1. split; [lra|]. intros h _ Hc. congruence.
        - destruct (cont_pos_near (agap j) t _ (d_agap j t Hj Ht)) as [d [Hd Hy]].
          + unfold agap. pose proof (Hupto t (conj Ht (Rle_refl t)) j Hj Hne). lra.
          + exists d. split; [exact Hd|]. intros h Hh _. specialize (Hy (t + h)).
            unfold agap in Hy. apply Rlt_Rminus in Hy.
            * lra.
            * rewrite Rabs_pos_eq; lra. }
      destruct (finite_delta _ n Hnear) as [d [Hd Hall]]. exists d. split; [exact Hd|].
      intros s Hs j Hj Hne. replace s with (t + (s - t)) by ring. apply Hall; [exact Hj|lra|exact Hne]. }
  intros t Ht. destruct (gaps_on_interval H0 t Ht (fun s Hs => HPa s (proj1 Hs)) t (conj Ht (Rle_refl t)))
    as [HR Hgaps].
  split; [|split; [exact HR|exact Hgaps]].
  intros j Hj Hne. split; [apply (HR j Hj Hne)|apply (HPa t Ht j Hj Hne)].
Qed.

Lemma agap_mono : in_Rplus n i (u t0) (a t0) -> forall j, (j < n)%nat ->
  forall s t, t0 <= s -> s <= t -> agap j s <= agap j t.
Proof.
  intros H0 j Hj s t Hs Hst.
  apply (nondecr_of_deriv (agap j) (fun c => g c * (da_rhs n (u c) (a c) i - da_rhs n (u c) (a c) j)));
    [exact Hst| |].
  - intros c Hc. apply d_agap; [exact Hj|lra].
  - intros c Hc. destruct (Hsol c ltac:(lra)) as [Hg _]. apply Rmult_le_pos; [lra|].
    apply agap_nonneg; try assumption. apply (invariance H0 c ltac:(lra)).
Qed.

(** Divergence of each a-gap, given that the clock tau tends to infinity. *)
Theorem divergence : in_Rplus n i (u t0) (a t0) -> tends_to_infty tau ->
  forall j, (j < n)%nat -> j <> i -> tends_to_infty (agap j).
Proof.
  intros H0 Htau j Hj Hne.
  assert (Hn : 0 < INR n) by (apply lt_0_INR; lia).
  set (kappa := b / INR n * (1 - exp (a t0 j - a t0 i))).
  assert (Hkappa : 0 < kappa).
  { unfold kappa. apply Rmult_lt_0_compat; [apply Rdiv_lt_0_compat; lra|].
    destruct (H0 j Hj Hne) as [_ Ha].
    assert (exp (a t0 j - a t0 i) < exp 0) by (apply exp_increasing; lra). rewrite exp_0 in H. lra. }
  (* u_i - u_j >= u-gap(t0) + kappa (tau - tau(t0)) *)
  assert (Hp : forall t, t0 <= t -> ugap j t0 + kappa * (tau t - tau t0) <= ugap j t).
  { intros t Ht.
    assert (Hm : (fun s => ugap j s - kappa * tau s) t0 <= (fun s => ugap j s - kappa * tau s) t).
    { apply (nondecr_of_deriv (fun s => ugap j s - kappa * tau s) (fun c => g c * (du_rhs n b (u c) (a c) i - du_rhs n b (u c) (a c) j)
                                          - kappa * g c)); [exact Ht| |].
      - intros c Hc. apply dlim_minus; [apply d_ugap; [exact Hj|lra]|].
        apply dlim_scal. apply (Hsol c ltac:(lra)).
      - intros c Hc. destruct (invariance H0 c ltac:(lra)) as [_ [HR Hgaps]].
        destruct (Hsol c ltac:(lra)) as [Hg _].
        assert (Hr : kappa <= du_rhs n b (u c) (a c) i - du_rhs n b (u c) (a c) j).
        { eapply Rle_trans; [|apply (ugap_rate n i j b (u c) (a c) Hi Hj Hb HR)].
          unfold kappa. apply Rmult_le_compat_l; [left; apply Rdiv_lt_0_compat; lra|].
          destruct (Hgaps j Hj) as [_ Hag]. unfold agap in Hag.
          assert (exp (a c j - a c i) <= exp (a t0 j - a t0 i)) by (apply exp_le; lra). lra. }
        assert (0 <= g c * (du_rhs n b (u c) (a c) i - du_rhs n b (u c) (a c) j - kappa))
          by (apply Rmult_le_pos; lra).
        lra. }
    simpl in Hm. lra. }
  assert (Hp0 : 0 <= ugap j t0) by (destruct (H0 j Hj Hne); unfold ugap; lra).
  intros M.
  destruct (Htau (tau t0 + 1)) as [T1' HT1'].
  set (T1 := Rmax T1' t0).
  assert (HT1a : t0 <= T1) by apply Rmax_r.
  assert (HT1b : forall t, T1 <= t -> tau t0 + 1 <= tau t) by (intros t Ht; apply HT1'; unfold T1 in Ht;
    pose proof (Rmax_l T1' t0); lra).
  set (c := kappa * exp (- M) / INR n).
  assert (Hc : 0 < c) by (unfold c; apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat; [lra|apply exp_pos]|lra]).
  destruct (Htau (tau T1 + (M - agap j T1) / c)) as [T2' HT2'].
  exists (Rmax T2' T1). intros t Ht.
  pose proof (Rmax_l T2' T1). pose proof (Rmax_r T2' T1).
  destruct (Rlt_le_dec (agap j t) M) as [Hlt|Hge]; [exfalso|exact Hge].
  (* below M on [T1, t], the a-gap grows at least like c tau *)
  assert (Hm : (fun s => agap j s - c * tau s) T1 <= (fun s => agap j s - c * tau s) t).
  { apply (nondecr_of_deriv (fun s => agap j s - c * tau s) (fun s => g s * (da_rhs n (u s) (a s) i - da_rhs n (u s) (a s) j)
                                        - c * g s)); [lra| |].
    - intros s Hs. apply dlim_minus; [apply d_agap; [exact Hj|lra]|].
      apply dlim_scal. apply (Hsol s ltac:(lra)).
    - intros s Hs. destruct (invariance H0 s ltac:(lra)) as [_ [HR _]].
      destruct (Hsol s ltac:(lra)) as [Hg _].
      assert (Hgs : agap j s < M) by (pose proof (agap_mono H0 j Hj s t ltac:(lra) ltac:(lra)); lra).
      assert (Hsj : exp (- M) / INR n <= softmax n (a s) j).
      { rewrite (softmax_ratio n (a s) i Hi j).
        assert (Hw : / INR n <= softmax n (a s) i).
        { pose proof (winner_weight n (a s) i Hi (proj2 (in_R_all n i (u s) (a s) HR))).
          apply Rmult_le_reg_l with (INR n); [exact Hn|]. rewrite Rinv_r by lra. lra. }
        assert (He : exp (- M) <= exp (a s j - a s i)) by (apply exp_le; unfold agap in Hgs; lra).
        unfold Rdiv. rewrite Rmult_comm.
        apply Rmult_le_compat; [left; apply Rinv_0_lt_compat; lra|left; apply exp_pos|exact Hw|exact He]. }
      assert (Hps : kappa <= ugap j s).
      { pose proof (Hp s ltac:(lra)). pose proof (HT1b s ltac:(lra)).
        assert (kappa * 1 <= kappa * (tau s - tau t0)) by (apply Rmult_le_compat_l; lra). lra. }
      assert (Hrate : c <= da_rhs n (u s) (a s) i - da_rhs n (u s) (a s) j).
      { eapply Rle_trans; [|apply (agap_rate n i j (u s) (a s) Hi Hj HR)].
        unfold c. replace (kappa * exp (- M) / INR n) with (exp (- M) / INR n * kappa) by (field; lra).
        apply Rmult_le_compat; [left; apply Rdiv_lt_0_compat; [apply exp_pos|lra]|lra|exact Hsj|exact Hps]. }
      assert (0 <= g s * (da_rhs n (u s) (a s) i - da_rhs n (u s) (a s) j - c)) by (apply Rmult_le_pos; lra).
      lra. }
  simpl in Hm.
  assert (Htt : tau T1 + (M - agap j T1) / c <= tau t) by (apply HT2'; lra).
  assert (Hcc : c * ((M - agap j T1) / c) <= c * (tau t - tau T1)) by (apply Rmult_le_compat_l; lra).
  replace (c * ((M - agap j T1) / c)) with (M - agap j T1) in Hcc by (field; lra).
  lra.
Qed.

(** s -> e_i once every gap diverges. *)
Theorem softmax_limit : (forall j, (j < n)%nat -> j <> i -> tends_to_infty (agap j)) ->
  forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0).
Proof.
  intros Hdiv.
  assert (Hsmall : forall eps, 0 < eps -> exists T, forall j, (j < n)%nat -> forall t, T <= t ->
             j <> i -> softmax n (a t) j < eps).
  { intros eps He. apply finite_time. intros j Hj.
    destruct (Nat.eq_dec j i) as [->|Hne]; [exists 0; intros t _ Hc; congruence|].
    destruct (Hdiv j Hj Hne (1 - ln eps)) as [T HT]. exists T. intros t Ht _.
    eapply Rle_lt_trans; [apply (softmax_le_gap n (a t) i Hi j Hj)|].
    rewrite <- (exp_ln eps He). apply exp_increasing. specialize (HT t Ht). unfold agap in HT. lra. }
  intros k Hk eps He. destruct (Nat.eq_dec k i) as [->|Hne].
  - assert (Hn : 0 < INR n) by (apply lt_0_INR; lia).
    destruct (Hsmall (eps / (INR n + 1))) as [T HT]; [apply Rdiv_lt_0_compat; lra|].
    exists T. intros t Ht.
    pose proof (softmax_sum n (a t) i Hi) as Hsum. rewrite (sumn_split _ n i Hi) in Hsum.
    assert (Hrest : sumn (fun k => if Nat.eq_dec k i then 0 else softmax n (a t) k) n
                    <= INR n * (eps / (INR n + 1))).
    { rewrite <- sumn_const. apply sumn_le. intros m Hm. destruct (Nat.eq_dec m i) as [_|Hmi].
      - left. apply Rdiv_lt_0_compat; lra.
      - left. apply (HT m Hm t Ht Hmi). }
    assert (Hr0 : 0 <= sumn (fun k => if Nat.eq_dec k i then 0 else softmax n (a t) k) n).
    { apply sumn_nonneg. intros m _. destruct (Nat.eq_dec m i); [lra|left; apply (softmax_pos n (a t) i Hi)]. }
    assert (INR n * (eps / (INR n + 1)) < eps).
    { unfold Rdiv. rewrite <- Rmult_assoc. apply Rmult_lt_reg_r with (INR n + 1); [lra|].
      rewrite Rmult_assoc, Rinv_l by lra. lra. }
    rewrite Rabs_left1; lra.
  - destruct (Hsmall eps He) as [T HT]. exists T. intros t Ht.
    rewrite Rminus_0_r, Rabs_pos_eq by (left; apply (softmax_pos n (a t) i Hi)).
    apply (HT k Hk t Ht Hne).
Qed.

(** The state's clock-rate bound: |u_k(t)| <= |u_k(t0)| + b (tau t - tau t0). *)
Lemma u_growth : forall k, (k < n)%nat -> forall t, t0 <= t ->
  Rabs (u t k) <= Rabs (u t0 k) + b * (tau t - tau t0).
Proof.
  intros k Hk t Ht.
  assert (Hup : (fun s => u s k - b * tau s) t <= (fun s => u s k - b * tau s) t0 -> True) by auto.
  assert (H1 : (fun s => b * tau s - u s k) t0 <= (fun s => b * tau s - u s k) t).
  { apply (nondecr_of_deriv (fun s => b * tau s - u s k) (fun c => b * g c - g c * du_rhs n b (u c) (a c) k)); [exact Ht| |].
    - intros c Hc. apply dlim_minus; [apply dlim_scal; apply (Hsol c ltac:(lra))|apply (Hsol c ltac:(lra))].
      exact Hk.
    - intros c Hc. destruct (Hsol c ltac:(lra)) as [Hg _]. unfold du_rhs.
      pose proof (softmax_le_1 n (a c) i Hi k Hk).
      assert (0 <= g c * b * (1 - softmax n (a c) k)) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra).
      lra. }
  assert (H2 : (fun s => b * tau s + u s k) t0 <= (fun s => b * tau s + u s k) t).
  { apply (nondecr_of_deriv (fun s => b * tau s + u s k) (fun c => b * g c + g c * du_rhs n b (u c) (a c) k)); [exact Ht| |].
    - intros c Hc. apply dlim_plus; [apply dlim_scal; apply (Hsol c ltac:(lra))|apply (Hsol c ltac:(lra))].
      exact Hk.
    - intros c Hc. destruct (Hsol c ltac:(lra)) as [Hg _]. unfold du_rhs.
      pose proof (softmax_pos n (a c) i Hi k).
      assert (0 <= g c * b * (1 + softmax n (a c) k)) by (apply Rmult_le_pos; [apply Rmult_le_pos|]; lra).
      lra. }
  simpl in H1, H2. pose proof (Rle_abs (u t0 k)). pose proof (Rabs_pos (u t0 k)).
  rewrite <- (Rabs_Ropp (u t0 k)) in *. pose proof (Rle_abs (- u t0 k)).
  apply Rabs_le. lra.
Qed.
End Clocked.

(** Along the logistic flow the clock tau tends to infinity (z <= sum_k |u_k| grows at most linearly in tau). *)
Theorem logistic_clock_diverges : forall n i b tau u a t0, (i < n)%nat -> 0 < b ->
  is_logistic_solution n b tau u a t0 -> tends_to_infty tau.
Proof.
  intros n i b tau u a t0 Hi Hb Hsol M0.
  set (g := fun t => logistic_clock (zbar n (u t) (a t))).
  set (M := Rmax M0 (tau t0 + 1)).
  assert (HM : tau t0 < M) by (unfold M; pose proof (Rmax_r M0 (tau t0 + 1)); lra).
  set (A := sumn (fun k => Rabs (u t0 k)) n).
  set (K := A + INR n * b * (M - tau t0)).
  set (c := logistic_clock K).
  assert (Hc : 0 < c) by (unfold c, logistic_clock; apply Rinv_0_lt_compat; pose proof (exp_pos K); lra).
  exists (t0 + (M - tau t0) / c). intros t Ht.
  assert (Ht0 : t0 <= t) by (assert (0 < (M - tau t0) / c) by (apply Rdiv_lt_0_compat; lra); lra).
  cut (M <= tau t); [intros H; assert (M0 <= M) by (unfold M; apply Rmax_l); lra|].
  destruct (Rlt_le_dec (tau t) M) as [Hlt|Hge]; [exfalso|exact Hge].
  assert (Hm : (fun s => tau s - c * s) t0 <= (fun s => tau s - c * s) t).
  { apply (nondecr_of_deriv (fun s => tau s - c * s) (fun s => g s - c * 1)); [exact Ht0| |].
    - intros s Hs. apply dlim_minus; [apply (Hsol s ltac:(lra))|apply dlim_scal, dlim_id].
    - intros s Hs. assert (Hts : tau s <= tau t) by (apply (tau_mono n b g tau u a t0 Hsol); lra).
      assert (Hts0 : tau t0 <= tau s) by (apply (tau_mono n b g tau u a t0 Hsol); lra).
      assert (Hz : zbar n (u s) (a s) <= K).
      { eapply Rle_trans; [apply (zbar_le_abs n (u s) (a s) i Hi)|].
        unfold K, A. replace (INR n * b * (M - tau t0)) with (INR n * (b * (M - tau t0))) by ring.
        rewrite <- sumn_const, <- sumn_plus.
        apply sumn_le. intros k Hk. eapply Rle_trans; [apply (u_growth n i b g tau u a t0 Hi Hb Hsol k Hk s)|]; [lra|].
        apply Rplus_le_compat_l. apply Rmult_le_compat_l; lra. }
      unfold g, c, logistic_clock.
      assert (/ (1 + exp K) <= / (1 + exp (zbar n (u s) (a s)))).
      { apply Rinv_le_contravar; [pose proof (exp_pos (zbar n (u s) (a s))); lra|].
        apply Rplus_le_compat_l, exp_le, Hz. }
      lra. }
  simpl in Hm.
  assert (Hcc : c * ((M - tau t0) / c) <= c * (t - t0)) by (apply Rmult_le_compat_l; lra).
  replace (c * ((M - tau t0) / c)) with (M - tau t0) in Hcc by (field; lra).
  lra.
Qed.

(** ** The trapping lemma *)
Theorem softpolar_trapping : forall (n i : nat) (b : R) (u a : R -> nat -> R) (t0 : R),
  (i < n)%nat -> 0 < b -> is_tau_solution n b u a t0 -> in_Rplus n i (u t0) (a t0) ->
  (forall t, t0 <= t -> in_Rplus n i (u t) (a t)) /\
  (forall j, (j < n)%nat -> j <> i -> tends_to_infty (fun t => a t i - a t j)) /\
  (forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros n i b u a t0 Hi Hb Hsol H0.
  pose proof (tau_solution_clocked n b u a t0 Hsol) as Hc.
  assert (Htau : tends_to_infty (fun t => t)) by (intros M; exists M; auto).
  pose proof (divergence n i b _ _ u a t0 Hi Hb Hc H0 Htau) as Hdiv.
  split; [intros t Ht; apply (invariance n i b _ _ u a t0 Hi Hb Hc H0 t Ht)|].
  split; [exact Hdiv|]. apply (softmax_limit n i a Hi Hdiv).
Qed.

(** The same along the logistic flow in the original time t, where moreover tau(t) -> oo. *)
Theorem softpolar_trapping_logistic : forall (n i : nat) (b : R) (tau : R -> R) (u a : R -> nat -> R) (t0 : R),
  (i < n)%nat -> 0 < b -> is_logistic_solution n b tau u a t0 -> in_Rplus n i (u t0) (a t0) ->
  tends_to_infty tau /\
  (forall t, t0 <= t -> in_Rplus n i (u t) (a t)) /\
  (forall j, (j < n)%nat -> j <> i -> tends_to_infty (fun t => a t i - a t j)) /\
  (forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros n i b tau u a t0 Hi Hb Hsol H0.
  pose proof (logistic_clock_diverges n i b tau u a t0 Hi Hb Hsol) as Htau.
  pose proof (divergence n i b _ _ u a t0 Hi Hb Hsol H0 Htau) as Hdiv.
  split; [exact Htau|].
  split; [intros t Ht; apply (invariance n i b _ _ u a t0 Hi Hb Hsol H0 t Ht)|].
  split; [exact Hdiv|]. apply (softmax_limit n i a Hi Hdiv).
Qed.
