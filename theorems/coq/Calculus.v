(** * Calculus facts used by the trapping lemma (standard library reals only).

    Monotonicity from the sign of a derivative (mean value theorem), continuity from
    differentiability in epsilon-delta form, "real induction" (a continuation argument
    on [t0, oo) for a decidable property, proved from the least-upper-bound property),
    and a common delta / a common time for finitely many indices. *)
From Coq Require Import Reals Lra Lia.
Open Scope R_scope.

(** Limits along [t -> oo], spelled out. *)
Definition tends_to_infty (f : R -> R) : Prop :=
  forall M, exists T, forall t, T <= t -> M <= f t.

Definition tends_to (f : R -> R) (l : R) : Prop :=
  forall eps, 0 < eps -> exists T, forall t, T <= t -> Rabs (f t - l) < eps.

Lemma exp_le : forall x y, x <= y -> exp x <= exp y.
Proof.
  intros x y H. destruct (Rle_lt_or_eq_dec x y H) as [H'| ->].
  - left. apply exp_increasing. exact H'.
  - right. reflexivity.
Qed.

Lemma dlim_minus : forall f1 f2 x l1 l2,
  derivable_pt_lim f1 x l1 -> derivable_pt_lim f2 x l2 ->
  derivable_pt_lim (fun t => f1 t - f2 t) x (l1 - l2).
Proof. intros. apply (derivable_pt_lim_minus f1 f2); assumption. Qed.

Lemma dlim_plus : forall f1 f2 x l1 l2,
  derivable_pt_lim f1 x l1 -> derivable_pt_lim f2 x l2 ->
  derivable_pt_lim (fun t => f1 t + f2 t) x (l1 + l2).
Proof. intros. apply (derivable_pt_lim_plus f1 f2); assumption. Qed.

Lemma dlim_scal : forall f c x l,
  derivable_pt_lim f x l -> derivable_pt_lim (fun t => c * f t) x (c * l).
Proof. intros. apply (derivable_pt_lim_scal f c); assumption. Qed.

Lemma dlim_id : forall x, derivable_pt_lim (fun t => t) x 1.
Proof. intros. apply derivable_pt_lim_id. Qed.

Lemma dlim_ext_value : forall f x l l', l = l' ->
  derivable_pt_lim f x l -> derivable_pt_lim f x l'.
Proof. intros f x l l' -> H. exact H. Qed.

(** A non-negative derivative on [x, y] makes [f] non-decreasing there. *)
Lemma nondecr_of_deriv : forall (f f' : R -> R) x y,
  x <= y ->
  (forall c, x <= c <= y -> derivable_pt_lim f c (f' c)) ->
  (forall c, x <= c <= y -> 0 <= f' c) -> f x <= f y.
Proof.
  intros f f' x y Hxy Hd Hpos.
  destruct (Rle_lt_or_eq_dec x y Hxy) as [Hlt| ->]; [|lra].
  destruct (MVT_cor2 f f' x y Hlt Hd) as [c [Heq Hc]].
  assert (0 <= f' c) by (apply Hpos; lra).
  assert (0 <= f' c * (y - x)) by (apply Rmult_le_pos; lra). lra.
Qed.

(** Continuity of a differentiable function, epsilon-delta. *)
Lemma cont_of_deriv : forall f x l, derivable_pt_lim f x l ->
  forall eps, 0 < eps -> exists d, 0 < d /\ forall y, Rabs (y - x) < d -> Rabs (f y - f x) < eps.
Proof.
  intros f x l H.
  assert (Hc : continuity_pt f x) by (apply derivable_continuous_pt; exists l; exact H).
  unfold continuity_pt, continue_in, limit1_in, limit_in in Hc. simpl in Hc.
  intros eps He. destruct (Hc eps He) as [d [Hd Hy]]. exists d. split; [lra|].
  intros y Hyx. destruct (Req_dec y x) as [->|Hne].
  - unfold Rminus. rewrite Rplus_opp_r, Rabs_R0. exact He.
  - apply (Hy y). split; [split; [exact I | auto] | exact Hyx].
Qed.

Lemma cont_pos_near : forall f x l, derivable_pt_lim f x l -> 0 < f x ->
  exists d, 0 < d /\ forall y, Rabs (y - x) < d -> 0 < f y.
Proof.
  intros f x l H Hp. destruct (cont_of_deriv f x l H (f x) Hp) as [d [Hd Hy]].
  exists d. split; [exact Hd|]. intros y Hyx. specialize (Hy y Hyx).
  apply Rabs_def2 in Hy. lra.
Qed.

(** A lower bound on [t0, t) passes to [t] (closedness). *)
Lemma closed_bound : forall f t0 t l c, derivable_pt_lim f t l -> t0 < t ->
  (forall s, t0 <= s < t -> c <= f s) -> c <= f t.
Proof.
  intros f t0 t l c Hd Ht Hs.
  destruct (Rlt_le_dec (f t) c) as [Hlt|Hle]; [|exact Hle].
  destruct (cont_of_deriv f t l Hd (c - f t) ltac:(lra)) as [d [Hd0 Hy]].
  set (s := Rmax t0 (t - d / 2)).
  assert (Hs1 : t0 <= s) by apply Rmax_l.
  assert (Hs2 : t - d / 2 <= s) by apply Rmax_r.
  assert (Hs3 : s < t) by (unfold s; apply Rmax_lub_lt; lra).
  specialize (Hs s (conj Hs1 Hs3)).
  assert (Habs : Rabs (s - t) < d) by (apply Rabs_def1; lra).
  specialize (Hy s Habs). apply Rabs_def2 in Hy. lra.
Qed.

(** A positive derivative: [f] increases just to the right of [x]. *)
Lemma deriv_pos_right : forall f x l, derivable_pt_lim f x l -> 0 < l ->
  exists d, 0 < d /\ forall h, 0 < h < d -> f x < f (x + h).
Proof.
  intros f x l H Hl. destruct (H l Hl) as [d Hd].
  exists d. split; [apply cond_pos|]. intros h Hh.
  assert (Hq : Rabs ((f (x + h) - f x) / h - l) < l).
  { apply Hd; [lra|]. rewrite Rabs_pos_eq; lra. }
  apply Rabs_def2 in Hq.
  assert (Hq' : 0 < (f (x + h) - f x) / h) by lra.
  assert (E : f (x + h) - f x = (f (x + h) - f x) / h * h) by (field; lra).
  assert (0 < (f (x + h) - f x) / h * h) by (apply Rmult_lt_0_compat; lra). lra.
Qed.

(** Real induction for a decidable property: it holds at [t0], passes to the limit from
    the left, and extends a little to the right; then it holds on all of [t0, oo). *)
Lemma real_induction : forall (P : R -> Prop) t0,
  (forall t, P t \/ ~ P t) ->
  P t0 ->
  (forall t, t0 < t -> (forall s, t0 <= s < t -> P s) -> P t) ->
  (forall t, t0 <= t -> (forall s, t0 <= s <= t -> P s) ->
     exists d, 0 < d /\ forall s, t < s < t + d -> P s) ->
  forall t, t0 <= t -> P t.
Proof.
  intros P t0 Hdec H0 Hlim Hstep t1 Ht1.
  destruct (Hdec t1) as [Hp|Hnp]; [exact Hp|exfalso].
  set (E := fun x => t0 <= x <= t1 /\ forall s, t0 <= s <= x -> P s).
  assert (HE0 : E t0).
  { split; [lra|]. intros s Hs. replace s with t0 by lra. exact H0. }
  assert (Hb : bound E) by (exists t1; intros x Hx; apply Hx).
  destruct (completeness E Hb (ex_intro _ t0 HE0)) as [m [Hub Hleast]].
  assert (Hm0 : t0 <= m) by (apply Hub; exact HE0).
  assert (Hm1 : m <= t1) by (apply Hleast; intros x Hx; apply Hx).
  (* P holds on [t0, m) *)
  assert (Hbelow : forall s, t0 <= s < m -> P s).
  { intros s Hs. destruct (Hdec s) as [Hps|Hnps]; [exact Hps|exfalso].
    assert (Hsub : is_upper_bound E s).
    { intros x [Hx1 Hx2]. destruct (Rle_lt_dec x s) as [Hxs|Hxs]; [exact Hxs|].
      exfalso. apply Hnps. apply Hx2. lra. }
    specialize (Hleast s Hsub). lra. }
  assert (Hm : P m).
  { destruct (Rle_lt_or_eq_dec t0 m Hm0) as [Hlt| <-]; [|exact H0].
    apply Hlim; assumption. }
  assert (Hupto : forall s, t0 <= s <= m -> P s).
  { intros s Hs. destruct (Rle_lt_or_eq_dec s m (proj2 Hs)) as [Hlt| ->].
    - apply Hbelow; lra.
    - exact Hm. }
  destruct (Rle_lt_or_eq_dec m t1 Hm1) as [Hmt|Hmt]; [|apply Hnp; rewrite <- Hmt; exact Hm].
  destruct (Hstep m Hm0 Hupto) as [d [Hd Hright]].
  set (x := Rmin (m + d / 2) t1).
  assert (Hx1 : x <= m + d / 2) by apply Rmin_l.
  assert (Hx2 : x <= t1) by apply Rmin_r.
  assert (Hx3 : m < x) by (unfold x; apply Rmin_glb_lt; lra).
  assert (HEx : E x).
  { split; [lra|]. intros s Hs. destruct (Rle_lt_dec s m) as [Hsm|Hsm].
    - apply Hupto; lra.
    - apply Hright; lra. }
  specialize (Hub x HEx). lra.
Qed.

(** Finitely many indices: one delta, one time. *)
Lemma finite_delta : forall (Q : nat -> R -> Prop) n,
  (forall j, (j < n)%nat -> exists d, 0 < d /\ forall h, 0 < h < d -> Q j h) ->
  exists d, 0 < d /\ forall j, (j < n)%nat -> forall h, 0 < h < d -> Q j h.
Proof.
  intros Q n. induction n as [|n IH]; intros H.
  - exists 1. split; [lra|]. intros j Hj. lia.
  - destruct IH as [d1 [Hd1 H1]]. { intros j Hj. apply H. lia. }
    destruct (H n ltac:(lia)) as [d2 [Hd2 H2]].
    exists (Rmin d1 d2). split; [apply Rmin_pos; assumption|].
    intros j Hj h Hh. pose proof (Rmin_l d1 d2). pose proof (Rmin_r d1 d2).
    destruct (Nat.eq_dec j n) as [->|Hne].
    + apply H2. lra.
    + apply H1; [lia|lra].
Qed.

Lemma finite_time : forall (Q : nat -> R -> Prop) n,
  (forall j, (j < n)%nat -> exists T, forall t, T <= t -> Q j t) ->
  exists T, forall j, (j < n)%nat -> forall t, T <= t -> Q j t.
Proof.
  intros Q n. induction n as [|n IH]; intros H.
  - exists 0. intros j Hj. lia.
  - destruct IH as [T1 H1]. { intros j Hj. apply H. lia. }
    destruct (H n ltac:(lia)) as [T2 H2].
    exists (Rmax T1 T2). intros j Hj t Ht. pose proof (Rmax_l T1 T2). pose proof (Rmax_r T1 T2).
    destruct (Nat.eq_dec j n) as [->|Hne].
    + apply H2. lra.
    + apply H1; [lia|lra].
Qed.

Lemma forall_lt_dec : forall (Q : nat -> Prop) n,
  (forall j, Q j \/ ~ Q j) ->
  (forall j, (j < n)%nat -> Q j) \/ ~ (forall j, (j < n)%nat -> Q j).
Proof.
  intros Q n Hd. induction n as [|n IH].
  - left. intros j Hj. lia.
  - destruct IH as [IH|IH].
    + destruct (Hd n) as [Hn|Hn].
      * left. intros j Hj. destruct (Nat.eq_dec j n) as [->|Hne]; [exact Hn|apply IH; lia].
      * right. intros Hall. apply Hn. apply Hall. lia.
    + right. intros Hall. apply IH. intros j Hj. apply Hall. lia.
Qed.
