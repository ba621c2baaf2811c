(** * No crossing, for every n  [A/D]

    Along any clocked solution (the tau-system, the logistic flow, and through [Reduction] the parameter
    flow itself): a pair with u_q < u_p and a_q <= a_p at t0 keeps u_q < u_p for all t >= t0 and has
    a_q < a_p for all t > t0 ([no_crossing_pair]).  The region {u_q <= u_p, a_q <= a_p} is invariant for
    every pair, not only for the winner: on its face a_p = a_q the a-gap grows at rate g s_q (u_p - u_q)
    ([agap_face]), on its face u_p = u_q the u-gap at rate g b (s_p - s_q).  From a uniform a(0) the ranking
    of u(0) is then the ranking of u(t) for all t and of a(t) for t > 0 ([no_crossing]).  The
    monotonicity of a non-top pair's a-gap is not claimed (it is false in general, digest claim 14). *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping Reduction.
Open Scope R_scope.

(** A positive derivative: [f] is smaller just to the left of [x]. *)
Lemma deriv_pos_left : forall f x l, derivable_pt_lim f x l -> 0 < l ->
  exists d, 0 < d /\ forall h, 0 < h < d -> f (x - h) < f x.
Proof.
  intros f x l H Hl. destruct (H l Hl) as [d Hd].
  exists d. split; [apply cond_pos|]. intros h Hh.
  assert (Hq : Rabs ((f (x + - h) - f x) / - h - l) < l).
  { apply Hd; [lra|]. rewrite Rabs_Ropp, Rabs_pos_eq; lra. }
  apply Rabs_def2 in Hq.
  assert (Hq' : 0 < (f (x + - h) - f x) / - h) by lra.
  assert (E : f (x + - h) - f x = - ((f (x + - h) - f x) / - h * h)) by (field; lra).
  assert (0 < (f (x + - h) - f x) / - h * h) by (apply Rmult_lt_0_compat; lra).
  replace (x - h) with (x + - h) by ring. lra.
Qed.

(** On the face a_p = a_q the a-gap's rate is s_q (u_p - u_q). *)
Lemma agap_face : forall n p q (u a : nat -> R), a q = a p ->
  da_rhs n u a p - da_rhs n u a q = softmax n a q * (u p - u q).
Proof.
  intros n p q u a H. unfold da_rhs.
  assert (E : softmax n a p = softmax n a q) by (unfold softmax; rewrite H; reflexivity).
  rewrite E. ring.
Qed.

Section Pair.
Variables (n p q : nat) (b : R) (g tau : R -> R) (u a : R -> nat -> R) (t0 : R).
Hypotheses (Hp : (p < n)%nat) (Hq : (q < n)%nat) (Hb : 0 < b) (Hsol : is_clocked_solution n b g tau u a t0).
Hypotheses (Hu0 : u t0 q < u t0 p) (Ha0 : a t0 q <= a t0 p).

Let Du t := u t p - u t q.
Let Da t := a t p - a t q.

Lemma dDu : forall t, t0 <= t ->
  derivable_pt_lim Du t (g t * (du_rhs n b (u t) (a t) p - du_rhs n b (u t) (a t) q)).
Proof. intros t Ht. exact (d_ugap n p b g tau u a t0 Hp Hsol q t Hq Ht). Qed.

Lemma dDa : forall t, t0 <= t ->
  derivable_pt_lim Da t (g t * (da_rhs n (u t) (a t) p - da_rhs n (u t) (a t) q)).
Proof. intros t Ht. exact (d_agap n p b g tau u a t0 Hp Hsol q t Hq Ht). Qed.

Lemma Du_mono : forall s t, t0 <= s -> s <= t -> (forall c, s <= c <= t -> 0 <= Da c) -> Du s <= Du t.
Proof.
  intros s t Hs Hst HDa. apply (nondecr_of_deriv Du (fun c => g c * (du_rhs n b (u c) (a c) p - du_rhs n b (u c) (a c) q)));
    [exact Hst| |].
  - intros c Hc. apply dDu. lra.
  - intros c Hc. destruct (Hsol c ltac:(lra)) as [Hg _]. apply Rmult_le_pos; [lra|].
    apply ugap_nonneg; try assumption. specialize (HDa c Hc). unfold Da in HDa. lra.
Qed.

(** Where the a-gap is 0 and the u-gap positive, the a-gap's derivative is positive. *)
Lemma dDa_face_pos : forall t, t0 <= t -> Da t = 0 -> 0 < Du t ->
  0 < g t * (da_rhs n (u t) (a t) p - da_rhs n (u t) (a t) q).
Proof.
  intros t Ht HDa HDu. destruct (Hsol t Ht) as [Hg _].
  rewrite agap_face by (unfold Da in HDa; lra).
  apply Rmult_lt_0_compat; [lra|]. apply Rmult_lt_0_compat; [apply (softmax_pos n (a t) p Hp)|].
  unfold Du in HDu. lra.
Qed.

Lemma Da_start : exists d, 0 < d /\ forall h, 0 < h < d -> 0 < Da (t0 + h).
Proof.
  destruct (Rle_lt_or_eq_dec _ _ Ha0) as [Hlt|Heq].
  - destruct (cont_pos_near Da t0 _ (dDa t0 (Rle_refl t0))) as [d [Hd Hy]]; [unfold Da; lra|].
    exists d. split; [exact Hd|]. intros h Hh. apply Hy. rewrite Rabs_pos_eq; lra.
  - destruct (deriv_pos_right Da t0 _ (dDa t0 (Rle_refl t0))) as [d [Hd Hy]].
    + apply dDa_face_pos; [lra| unfold Da; lra| unfold Du; lra].
    + exists d. split; [exact Hd|]. intros h Hh. specialize (Hy h Hh). unfold Da in *. lra.
Qed.

Lemma Da_pos : forall t, t0 < t -> 0 < Da t.
Proof.
  destruct Da_start as [d [Hd Hnear]].
  set (t1 := t0 + d / 2).
  assert (Hpre : forall c, t0 <= c <= t1 -> 0 <= Da c).
  { intros c Hc. destruct (Rle_lt_or_eq_dec t0 c (proj1 Hc)) as [Hlt| <-].
    - left. replace c with (t0 + (c - t0)) by ring. apply Hnear. unfold t1 in Hc. lra.
    - unfold Da. lra. }
  assert (Hafter : forall t, t1 <= t -> 0 < Da t).
  { apply real_induction.
    - intros t. destruct (Rlt_dec 0 (Da t)); [left|right]; assumption.
    - unfold t1. apply Hnear. lra.
    - intros t Ht Hbelow.
      assert (HDa : 0 <= Da t).
      { apply (closed_bound Da t1 t _ 0 (dDa t ltac:(unfold t1 in *; lra)) Ht).
        intros s Hs. left. apply Hbelow, Hs. }
      assert (Hall : forall c, t0 <= c <= t -> 0 <= Da c).
      { intros c Hc. destruct (Rle_lt_dec c t1) as [H1|H1]; [apply Hpre; lra|].
        destruct (Rle_lt_or_eq_dec c t (proj2 Hc)) as [H2| ->]; [left; apply Hbelow; lra|exact HDa]. }
      assert (HDu : 0 < Du t).
      { assert (Du t0 <= Du t) by (apply Du_mono; [lra|unfold t1 in *; lra|intros c Hc; apply Hall; lra]).
        unfold Du in *. lra. }
      destruct (Rle_lt_or_eq_dec 0 (Da t) HDa) as [Hpos|Hz]; [exact Hpos|exfalso].
      assert (Ht0 : t0 <= t) by (unfold t1 in *; lra).
      destruct (deriv_pos_left Da t _ (dDa t Ht0) (dDa_face_pos t Ht0 (eq_sym Hz) HDu)) as [d' [Hd' Hy]].
      set (h := Rmin (d' / 2) ((t - t1) / 2)).
      assert (Hh1 : h <= d' / 2) by apply Rmin_l.
      assert (Hh2 : h <= (t - t1) / 2) by apply Rmin_r.
      assert (Hh0 : 0 < h) by (unfold h; apply Rmin_pos; lra).
      specialize (Hy h ltac:(lra)). specialize (Hbelow (t - h) ltac:(lra)). lra.
    - intros t Ht Hupto.
      destruct (cont_pos_near Da t _ (dDa t ltac:(unfold t1 in *; lra)) (Hupto t (conj Ht (Rle_refl t))))
        as [d' [Hd' Hy]].
      exists d'. split; [exact Hd'|]. intros s Hs. apply Hy. rewrite Rabs_pos_eq; lra. }
  intros t Ht. destruct (Rle_lt_dec t t1) as [H1|H1].
  - replace t with (t0 + (t - t0)) by ring. apply Hnear. unfold t1 in H1. lra.
  - apply Hafter. lra.
Qed.

Lemma Du_pos : forall t, t0 <= t -> 0 < Du t.
Proof.
  intros t Ht. assert (Du t0 <= Du t).
  { apply Du_mono; [lra|exact Ht|]. intros c Hc. destruct (Rle_lt_or_eq_dec t0 c (proj1 Hc)) as [Hlt| <-].
    - left. apply Da_pos, Hlt.
    - unfold Da. lra. }
  unfold Du in *. lra.
Qed.
End Pair.

(** The pair statement. *)
Theorem no_crossing_pair : forall n p q b g tau (u a : R -> nat -> R) t0,
  (p < n)%nat -> (q < n)%nat -> 0 < b -> is_clocked_solution n b g tau u a t0 ->
  u t0 q < u t0 p -> a t0 q <= a t0 p ->
  (forall t, t0 <= t -> u t q < u t p) /\ (forall t, t0 < t -> a t q < a t p).
Proof.
  intros n p q b g tau u a t0 Hp Hq Hb Hsol Hu0 Ha0. split.
  - intros t Ht. pose proof (Du_pos n p q b g tau u a t0 Hp Hq Hb Hsol Hu0 Ha0 t Ht). lra.
  - intros t Ht. pose proof (Da_pos n p q b g tau u a t0 Hp Hq Hb Hsol Hu0 Ha0 t Ht). lra.
Qed.

(** No crossing [A/D]: from a uniform a(t0), every strict order u_q(t0) < u_p(t0) is kept by u for t >= t0
    and by a for t > t0 (so the ranking of distinct u(t0) is that of u(t) and of a(t), t > t0). *)
Theorem no_crossing : forall n b g tau (u a : R -> nat -> R) t0,
  0 < b -> is_clocked_solution n b g tau u a t0 ->
  (forall j k, (j < n)%nat -> (k < n)%nat -> a t0 j = a t0 k) ->
  forall p q, (p < n)%nat -> (q < n)%nat -> u t0 q < u t0 p ->
  (forall t, t0 <= t -> u t q < u t p) /\ (forall t, t0 < t -> a t q < a t p).
Proof.
  intros n b g tau u a t0 Hb Hsol Hun p q Hp Hq Hu0.
  apply (no_crossing_pair n p q b g tau u a t0 Hp Hq Hb Hsol Hu0). right. apply Hun; assumption.
Qed.

(** On the parameters [D]: along the gradient flow of F(V, a) (with its clock), from a uniform a(0), the
    order of the projections u = V^T w at 0 is kept by V(t)^T w for t >= 0 and by a(t) for t > 0. *)
Theorem model_no_crossing : forall (n d : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)
    (tau : R -> R),
  0 < sqnorm d w ->
  is_gradient_flow (objective n d w) n d V a 0 ->
  (forall t, 0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  (forall j k, (j < n)%nat -> (k < n)%nat -> a 0 j = a 0 k) ->
  forall p q, (p < n)%nat -> (q < n)%nat -> proj d w (V 0) q < proj d w (V 0) p ->
  (forall t, 0 <= t -> proj d w (V t) q < proj d w (V t) p) /\ (forall t, 0 < t -> a t q < a t p).
Proof.
  intros n d w V a tau Hb Hflow Htau Hun p q Hp Hq Hu0.
  apply (no_crossing n (sqnorm d w) (fun t => logistic_clock (zbar n (proj d w (V t)) (a t))) tau
           (fun t => proj d w (V t)) a 0 Hb); try assumption.
  apply reduction; assumption.
Qed.
