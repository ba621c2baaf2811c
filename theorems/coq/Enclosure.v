(** * A-priori enclosure of one step (issue 37): the generic theorem a certificate's steps use.

    A state with [N] real components [x t k] (k < N) follows [x' = f(x)] on [t0, t0 + h].
    Boxes are componentwise: [B = prod [Bl k, Bu k]] (the state at [t0]), [E = prod [El k, Eu k]]
    (the a-priori box) and [fl k <= f_k(y) <= fu k] for every [y] in [E]. If the hull
    [B + [0, h] * [fl, fu]] lies in the interior of [E], the solution stays in [E] on the whole step
    and [x(t) in B + (t - t0) * [fl, fu]]; at [t0 + h] this is the next step's box.

    Proved once, from the mean value theorem and real induction ([Calculus.v]); no new axiom. *)
From Coq Require Import Reals Lra Lia Classical_Prop.
From Softpolar Require Import Calculus.
Open Scope R_scope.

Definition in_box (N : nat) (lo hi : nat -> R) (y : nat -> R) : Prop :=
  forall k, (k < N)%nat -> lo k <= y k <= hi k.

Definition in_open_box (N : nat) (lo hi : nat -> R) (y : nat -> R) : Prop :=
  forall k, (k < N)%nat -> lo k < y k < hi k.

(** Bounds on a derivative on [a, b] bound the increment (mean value theorem). *)
Lemma increment_bounds : forall (g g' : R -> R) a b lo hi, a <= b ->
  (forall c, a <= c <= b -> derivable_pt_lim g c (g' c)) ->
  (forall c, a <= c <= b -> lo <= g' c <= hi) ->
  lo * (b - a) <= g b - g a <= hi * (b - a).
Proof.
  intros g g' a b lo hi Hab Hd Hb.
  destruct (Rle_lt_or_eq_dec a b Hab) as [Hlt| ->]; [|lra].
  destruct (MVT_cor2 g g' a b Hlt Hd) as [c [Heq Hc]].
  assert (Hc' : a <= c <= b) by lra. destruct (Hb c Hc') as [H1 H2].
  rewrite Heq. split; apply Rmult_le_compat_r; lra.
Qed.

Section Step.
Variables (N : nat) (x x' : R -> nat -> R) (t0 h : R).
Variables (Bl Bu El Eu fl fu : nat -> R).

Hypothesis Hh : 0 <= h.
Hypothesis Hderiv : forall t, t0 <= t <= t0 + h -> forall k, (k < N)%nat ->
  derivable_pt_lim (fun s => x s k) t (x' t k).
Hypothesis Hslope : forall t, t0 <= t <= t0 + h -> in_box N El Eu (x t) ->
  forall k, (k < N)%nat -> fl k <= x' t k <= fu k.
Hypothesis Hstart : in_box N Bl Bu (x t0).
Hypothesis Hinside : forall k, (k < N)%nat ->
  El k < Bl k + h * Rmin 0 (fl k) /\ Bu k + h * Rmax 0 (fu k) < Eu k.

(** While the state has stayed in [E], it is in [B + (t - t0) [fl, fu]], inside [E]'s interior. *)
Lemma hull_while_inside : forall t, t0 <= t <= t0 + h ->
  (forall s, t0 <= s <= t -> in_box N El Eu (x s)) ->
  forall k, (k < N)%nat ->
  Bl k + (t - t0) * fl k <= x t k <= Bu k + (t - t0) * fu k.
Proof.
  intros t Ht Hin k Hk.
  assert (Hinc : fl k * (t - t0) <= x t k - x t0 k <= fu k * (t - t0)).
  { apply (increment_bounds (fun s => x s k) (fun s => x' s k)); [lra| |].
    - intros c Hc. apply Hderiv; [lra|exact Hk].
    - intros c Hc. apply Hslope; [lra| |exact Hk]. apply Hin. lra. }
  destruct (Hstart k Hk). lra.
Qed.

Lemma hull_in_interior : forall t k, t0 <= t <= t0 + h -> (k < N)%nat ->
  El k < Bl k + (t - t0) * fl k /\ Bu k + (t - t0) * fu k < Eu k.
Proof.
  intros t k Ht Hk. destruct (Hinside k Hk) as [H1 H2].
  pose proof (Rmin_l 0 (fl k)). pose proof (Rmin_r 0 (fl k)).
  pose proof (Rmax_l 0 (fu k)). pose proof (Rmax_r 0 (fu k)).
  assert (h * Rmin 0 (fl k) <= (t - t0) * fl k).
  { destruct (Rle_dec 0 (fl k)).
    - assert (0 <= (t - t0) * fl k) by (apply Rmult_le_pos; lra).
      assert (Em : Rmin 0 (fl k) = 0) by (apply Rmin_left; lra). rewrite Em. lra.
    - assert (Em : Rmin 0 (fl k) = fl k) by (apply Rmin_right; lra).
      rewrite Em. assert (0 <= (h - (t - t0)) * - fl k) by (apply Rmult_le_pos; lra). nra. }
  assert ((t - t0) * fu k <= h * Rmax 0 (fu k)).
  { destruct (Rle_dec (fu k) 0).
    - assert (0 <= (t - t0) * - fu k) by (apply Rmult_le_pos; lra).
      assert (Em : Rmax 0 (fu k) = 0) by (apply Rmax_left; lra). rewrite Em. lra.
    - assert (Em : Rmax 0 (fu k) = fu k) by (apply Rmax_right; lra).
      rewrite Em. assert (0 <= (h - (t - t0)) * fu k) by (apply Rmult_le_pos; lra). nra. }
  lra.
Qed.

Let P (t : R) : Prop := t <= t0 + h -> in_open_box N El Eu (x t).

Lemma open_closed : forall y, in_open_box N El Eu y -> in_box N El Eu y.
Proof. intros y H k Hk. destruct (H k Hk). lra. Qed.

Lemma step_stays : forall t, t0 <= t -> P t.
Proof.
  apply real_induction.
  - intros t. apply classic.
  - intros _ k Hk. pose proof (hull_in_interior t0 k ltac:(lra) Hk).
    destruct (Hstart k Hk). replace (t0 - t0) with 0 in H by ring. lra.
  - (* from the left: the hull bounds hold up to [t], close, and lie in the interior *)
    intros t Ht Hbelow Hth k Hk.
    destruct (hull_in_interior t k ltac:(lra) Hk) as [Hi1 Hi2].
    assert (Hb : forall s, t0 <= s < t ->
      Bl k + (s - t0) * fl k <= x s k <= Bu k + (s - t0) * fu k).
    { intros s Hs. apply hull_while_inside; [lra| |exact Hk].
      intros r Hr. apply open_closed, Hbelow; lra. }
    assert (Hd : derivable_pt_lim (fun s => x s k) t (x' t k)) by (apply Hderiv; [lra|exact Hk]).
    assert (Hlo : Bl k + (t - t0) * fl k <= x t k).
    { pose (g := fun s => x s k - (s - t0) * fl k).
      assert (Hg : derivable_pt_lim g t (x' t k - (1 - 0) * fl k)).
      { unfold g. apply dlim_minus; [exact Hd|]. apply (derivable_pt_lim_scal_right (fun s => s - t0)).
        apply derivable_pt_lim_minus; [apply derivable_pt_lim_id|apply derivable_pt_lim_const]. }
      assert (Bl k <= g t); [|unfold g in *; lra].
      apply (closed_bound g t0 t _ _ Hg Ht). intros s Hs. unfold g. specialize (Hb s Hs). lra. }
    assert (Hhi : x t k <= Bu k + (t - t0) * fu k).
    { pose (g := fun s => (s - t0) * fu k - x s k).
      assert (Hg : derivable_pt_lim g t ((1 - 0) * fu k - x' t k)).
      { unfold g. apply dlim_minus; [|exact Hd]. apply (derivable_pt_lim_scal_right (fun s => s - t0)).
        apply derivable_pt_lim_minus; [apply derivable_pt_lim_id|apply derivable_pt_lim_const]. }
      assert (- Bu k <= g t); [|unfold g in *; lra].
      apply (closed_bound g t0 t _ _ Hg Ht). intros s Hs. unfold g. specialize (Hb s Hs). lra. }
    lra.
  - (* to the right: an open condition at [t] persists nearby (continuity, one delta for all k) *)
    intros t Ht Hupto.
    destruct (Rle_lt_dec (t0 + h) t) as [Hend|Hmid].
    + exists 1. split; [lra|]. intros s Hs Hsh. lra.
    + assert (Hopen : in_open_box N El Eu (x t)) by (apply Hupto; lra).
      destruct (finite_delta (fun k d => El k < x (t + d) k < Eu k) N) as [d [Hd Hall]].
      { intros k Hk. destruct (Hopen k Hk) as [Ho1 Ho2].
        assert (Hdk : derivable_pt_lim (fun s => x s k) t (x' t k)) by (apply Hderiv; [lra|exact Hk]).
        destruct (cont_of_deriv _ _ _ Hdk (Rmin (x t k - El k) (Eu k - x t k))) as [e [He Hy]].
        { apply Rmin_pos; lra. }
        exists e. split; [exact He|]. intros d Hdd.
        assert (Habs : Rabs (t + d - t) < e) by (rewrite Rabs_pos_eq; lra).
        specialize (Hy (t + d) Habs). apply Rabs_def2 in Hy.
        pose proof (Rmin_l (x t k - El k) (Eu k - x t k)). pose proof (Rmin_r (x t k - El k) (Eu k - x t k)).
        lra. }
      exists d. split; [exact Hd|]. intros s Hs Hsh k Hk.
      replace s with (t + (s - t)) by ring. apply Hall; [exact Hk|lra].
Qed.

(** The step theorem: the solution stays in [E] on [t0, t0 + h] and ends in [B + h [fl, fu]]. *)
Theorem enclosure_step : forall t, t0 <= t <= t0 + h ->
  in_open_box N El Eu (x t) /\
  forall k, (k < N)%nat -> Bl k + (t - t0) * fl k <= x t k <= Bu k + (t - t0) * fu k.
Proof.
  intros t Ht. split.
  - apply step_stays; lra.
  - apply hull_while_inside; [exact Ht|].
    intros s Hs. apply open_closed, step_stays; lra.
Qed.

End Step.

(** The same for an autonomous field [f]: the slope bounds are read off [f] on the box [E]. *)
Theorem enclosure_step_autonomous :
  forall (N : nat) (f : (nat -> R) -> nat -> R) (x : R -> nat -> R) (t0 h : R)
         (Bl Bu El Eu fl fu : nat -> R),
  0 <= h ->
  (forall t, t0 <= t <= t0 + h -> forall k, (k < N)%nat ->
     derivable_pt_lim (fun s => x s k) t (f (x t) k)) ->
  (forall y, in_box N El Eu y -> forall k, (k < N)%nat -> fl k <= f y k <= fu k) ->
  in_box N Bl Bu (x t0) ->
  (forall k, (k < N)%nat -> El k < Bl k + h * Rmin 0 (fl k) /\ Bu k + h * Rmax 0 (fu k) < Eu k) ->
  in_box N (fun k => Bl k + h * fl k) (fun k => Bu k + h * fu k) (x (t0 + h)).
Proof.
  intros N f x t0 h Bl Bu El Eu fl fu Hh Hd Hf Hs Hi k Hk.
  destruct (enclosure_step N x (fun t => f (x t)) t0 h Bl Bu El Eu fl fu Hh Hd
              (fun t _ Hin => Hf (x t) Hin) Hs Hi (t0 + h) ltac:(lra)) as [_ Hb].
  specialize (Hb k Hk). replace (t0 + h - t0) with h in Hb by ring. exact Hb.
Qed.
