(** * The leading term of the winner's projection: u_i(tau) ~ b tau  [D]

    Along a solution of the tau-system (star) from R_i^+: u_i(tau)/tau -> b ([u_top_leading]); with
    [Reduction], along the parameter flow read in its clock, (V^T w)_i / tau -> |w|^2.  Only this term of
    the rate law is here: the leading terms of the a-gaps (a_i - a_j ~ log(n b tau^2 / 2)) and of
    1 - s_i are not in Coq. *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping Reduction.
Open Scope R_scope.

Theorem u_top_leading : forall (n i : nat) (b : R) (u a : R -> nat -> R) (t0 : R),
  (i < n)%nat -> 0 < b -> is_tau_solution n b u a t0 -> in_Rplus n i (u t0) (a t0) ->
  tends_to (fun t => u t i / t) b.
Proof.
  intros n i b u a t0 Hi Hb Hsol H0 eps Heps.
  destruct (softpolar_trapping n i b u a t0 Hi Hb Hsol H0) as [_ [_ Hlim]].
  specialize (Hlim i Hi). destruct (Nat.eq_dec i i) as [_|]; [|congruence].
  destruct (Hlim (eps / (2 * b)) ltac:(apply Rdiv_lt_0_compat; lra)) as [T0 HT0].
  set (T1 := Rmax T0 t0).
  assert (HT1a : T0 <= T1) by apply Rmax_l. assert (HT1b : t0 <= T1) by apply Rmax_r.
  (* on [T1, oo): b - eps/2 < du_i/dtau = b s_i <= b *)
  assert (Hd : forall c, T1 <= c -> derivable_pt_lim (fun s => u s i) c (b * softmax n (a c) i)).
  { intros c Hc. apply (Hsol c ltac:(lra) i Hi). }
  assert (Hs : forall c, T1 <= c -> b - eps / 2 <= b * softmax n (a c) i <= b).
  { intros c Hc. pose proof (softmax_le_1 n (a c) i Hi i Hi).
    specialize (HT0 c ltac:(lra)). apply Rabs_def2 in HT0.
    assert (E : b * (eps / (2 * b)) = eps / 2) by (field; lra).
    split; [|nra]. assert (b * (1 - eps / (2 * b)) < b * softmax n (a c) i) by (apply Rmult_lt_compat_l; lra).
    nra. }
  set (C := u T1 i - b * T1).
  set (C' := Rabs C + eps / 2 * Rabs T1).
  exists (Rmax 1 (Rmax T1 (2 * C' / eps + 1))). intros t Ht.
  pose proof (Rmax_l 1 (Rmax T1 (2 * C' / eps + 1))). pose proof (Rmax_r 1 (Rmax T1 (2 * C' / eps + 1))).
  pose proof (Rmax_l T1 (2 * C' / eps + 1)). pose proof (Rmax_r T1 (2 * C' / eps + 1)).
  assert (Htpos : 0 < t) by lra. assert (HtT1 : T1 <= t) by lra.
  assert (HC't : 2 * C' < eps * t).
  { assert (E : 2 * C' = eps * (2 * C' / eps)) by (field; lra).
    rewrite E. apply Rmult_lt_compat_l; lra. }
  (* the two monotone comparisons *)
  assert (Hlow : (fun s => u s i - (b - eps / 2) * s) T1 <= (fun s => u s i - (b - eps / 2) * s) t).
  { apply (nondecr_of_deriv (fun s => u s i - (b - eps / 2) * s) (fun c => b * softmax n (a c) i - (b - eps / 2) * 1));
      [exact HtT1| |].
    - intros c Hc. apply dlim_minus; [apply Hd; lra|apply dlim_scal, dlim_id].
    - intros c Hc. pose proof (Hs c ltac:(lra)). lra. }
  assert (Hup : (fun s => b * s - u s i) T1 <= (fun s => b * s - u s i) t).
  { apply (nondecr_of_deriv (fun s => b * s - u s i) (fun c => b * 1 - b * softmax n (a c) i)); [exact HtT1| |].
    - intros c Hc. apply dlim_minus; [apply dlim_scal, dlim_id|apply Hd; lra].
    - intros c Hc. pose proof (Hs c ltac:(lra)). lra. }
  simpl in Hlow, Hup.
  set (X := u t i - b * t).
  assert (HX1 : X <= C) by (unfold X, C; lra).
  assert (HX2 : C - eps / 2 * (t - T1) <= X) by (unfold X, C; lra).
  pose proof (Rle_abs C). pose proof (Rle_abs (- C)). rewrite Rabs_Ropp in *.
  pose proof (Rle_abs T1). pose proof (Rle_abs (- T1)). rewrite Rabs_Ropp in *.
  assert (HXa : X < eps * t) by (unfold C' in HC't; nra).
  assert (HXb : - (eps * t) < X) by (unfold C' in HC't; nra).
  replace (u t i / t - b) with (X * / t) by (unfold X; field; lra).
  pose proof (Rinv_0_lt_compat t Htpos). assert (t * / t = 1) by (field; lra).
  apply Rabs_def1; nra.
Qed.

(** On the parameters: the gradient flow of F read in its clock tau (through sigma, as in [reduction_tau]),
    from u = V^T w, a in R_i^+: (V^T w)_i / tau -> |w|^2. *)
Theorem model_u_top_leading : forall (n d i : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)
    (tau sigma : R -> R) (t0 r0 : R),
  (i < n)%nat -> 0 < sqnorm d w ->
  is_gradient_flow (objective n d w) n d V a t0 ->
  (forall t, t0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  (forall r, r0 <= r -> t0 <= sigma r /\
     derivable_pt_lim sigma r (/ logistic_clock (margin n d w (V (sigma r)) (a (sigma r))))) ->
  in_Rplus n i (proj d w (V (sigma r0))) (a (sigma r0)) ->
  tends_to (fun r => proj d w (V (sigma r)) i / r) (sqnorm d w).
Proof.
  intros n d i w V a tau sigma t0 r0 Hi Hb Hflow Htau Hsig H0.
  apply (u_top_leading n i (sqnorm d w) (fun r => proj d w (V (sigma r))) (fun r => a (sigma r)) r0 Hi Hb);
    [|exact H0].
  apply (reduction_tau n d w V a tau sigma t0 r0 Hflow Htau Hsig).
Qed.
