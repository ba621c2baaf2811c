(** * The (V, a) -> (u, a) reduction, for every n and d  [D]

    The value-softmax model with the logistic loss: [V] is d x n ([V k l], k < d, l < n),
    [a] has n entries, the target direction [w] (beta* ) has d entries, and
    F(V, a) = l(<w, V s(a)>) with l(z) = ln (1 + e^-z) ([objective]).  A gradient flow
    ([is_gradient_flow]) is stated with the partial derivatives of F itself: each entry moves
    with minus the derivative of F in that entry (the others held fixed).  Nothing here assumes
    the form of the gradient; it is computed ([partial_V], [partial_a]).

    Proven: u = V^T w and a along such a flow, with b = |w|^2 and the clock tau' = -l'(margin),
    are a solution of the logistic flow of [Trapping] (the tau-system with the clock 1/(1 + e^z))
    ([reduction]); the margin <w, V s> is z = <u, s> ([margin_zbar]).  Composed with
    [softpolar_trapping_logistic] and [polarization_clocked]: the parameter flow itself polarizes
    ([model_trapping], [model_polarization]).  Standard library only; no existence axiom. *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus Softmax Trapping Polarization.
Open Scope R_scope.

(** ** The model *)
Definition upd (a : nat -> R) (i : nat) (x : R) : nat -> R :=
  fun m => if Nat.eq_dec m i then x else a m.

Definition updV (V : nat -> nat -> R) (k l : nat) (x : R) : nat -> nat -> R :=
  fun k' l' => if Nat.eq_dec k' k then (if Nat.eq_dec l' l then x else V k' l') else V k' l'.

Definition logistic_loss (z : R) : R := ln (1 + exp (- z)).

(** beta = V s(a) (d entries), the margin <w, beta>, F = l(margin). *)
Definition beta (n : nat) (V : nat -> nat -> R) (a : nat -> R) (k : nat) : R :=
  sumn (fun l => V k l * softmax n a l) n.
Definition margin (n d : nat) (w : nat -> R) (V : nat -> nat -> R) (a : nat -> R) : R :=
  sumn (fun k => w k * beta n V a k) d.
Definition objective (n d : nat) (w : nat -> R) (V : nat -> nat -> R) (a : nat -> R) : R :=
  logistic_loss (margin n d w V a).

(** u = V^T w and b = |w|^2. *)
Definition proj (d : nat) (w : nat -> R) (V : nat -> nat -> R) (j : nat) : R := sumn (fun k => V k j * w k) d.
Definition sqnorm (d : nat) (w : nat -> R) : R := sumn (fun k => w k * w k) d.

(** The gradient flow of [F] on [t0, oo): every entry's derivative is minus the partial
    derivative of [F] in that entry. *)
Definition is_gradient_flow (F : (nat -> nat -> R) -> (nat -> R) -> R) (n d : nat)
    (V : R -> nat -> nat -> R) (a : R -> nat -> R) (t0 : R) : Prop :=
  forall t, t0 <= t ->
    (forall k l, (k < d)%nat -> (l < n)%nat -> exists g,
       derivable_pt_lim (fun x => F (updV (V t) k l x) (a t)) (V t k l) g /\
       derivable_pt_lim (fun s => V s k l) t (- g)) /\
    (forall i, (i < n)%nat -> exists g,
       derivable_pt_lim (fun x => F (V t) (upd (a t) i x)) (a t i) g /\
       derivable_pt_lim (fun s => a s i) t (- g)).

(** ** Finite sums *)
Lemma dlim_sumn : forall (f : nat -> R -> R) (f' : nat -> R) N x,
  (forall m, (m < N)%nat -> derivable_pt_lim (f m) x (f' m)) ->
  derivable_pt_lim (fun y => sumn (fun m => f m y) N) x (sumn f' N).
Proof.
  intros f f' N x. induction N as [|N IH]; intros H; simpl.
  - apply derivable_pt_lim_const.
  - apply (dlim_plus (fun y => sumn (fun m => f m y) N) (f N)).
    + apply IH. intros m Hm. apply H. lia.
    + apply H. lia.
Qed.

Lemma dlim_mult_const : forall f c x l,
  derivable_pt_lim f x l -> derivable_pt_lim (fun y => f y * c) x (l * c).
Proof.
  intros f c x l H. pose proof (derivable_pt_lim_mult f (fct_cte c) x l 0 H (derivable_pt_lim_const c x)) as Hm.
  unfold mult_fct, fct_cte in Hm. eapply dlim_ext_value; [|exact Hm]. ring.
Qed.

Lemma sumn_zero : forall N, sumn (fun _ => 0) N = 0.
Proof. intros N. rewrite sumn_const. ring. Qed.

Lemma sumn_delta : forall c N i, (i < N)%nat -> sumn (fun m => if Nat.eq_dec m i then c else 0) N = c.
Proof.
  intros c N i Hi. rewrite (sumn_split _ N i Hi).
  destruct (Nat.eq_dec i i) as [_|]; [|congruence].
  rewrite (sumn_ext _ (fun _ => 0)); [rewrite sumn_zero; ring|].
  intros k _. destruct (Nat.eq_dec k i); reflexivity.
Qed.

Lemma sumn_swap : forall (f : nat -> nat -> R) N M,
  sumn (fun k => sumn (fun l => f k l) M) N = sumn (fun l => sumn (fun k => f k l) N) M.
Proof.
  intros f N M. induction N as [|N IH]; simpl.
  - symmetry. apply sumn_zero.
  - rewrite IH, <- sumn_plus. reflexivity.
Qed.

(** <w, V c> = <c, V^T w> for any weights c. *)
Lemma sum_wV : forall n d w V (c : nat -> R),
  sumn (fun k => w k * sumn (fun l => V k l * c l) n) d = sumn (fun l => c l * proj d w V l) n.
Proof.
  intros n d w V c.
  rewrite (sumn_ext (fun k => w k * sumn (fun l => V k l * c l) n)
                    (fun k => sumn (fun l => w k * (V k l * c l)) n) d)
    by (intros k _; rewrite <- sumn_scal; reflexivity).
  rewrite sumn_swap. apply sumn_ext. intros l _. unfold proj. rewrite <- sumn_scal.
  apply sumn_ext. intros k _. ring.
Qed.

(** The model's margin is z = <u, s> with u = V^T w. *)
Lemma margin_zbar : forall n d w V a, margin n d w V a = zbar n (proj d w V) a.
Proof. intros. unfold margin, beta, zbar. apply sum_wV. Qed.

(** ** The loss: l'(z) = -1/(1 + e^z), minus the logistic clock. *)
Lemma logistic_loss_deriv : forall z, derivable_pt_lim logistic_loss z (- logistic_clock z).
Proof.
  intros z.
  assert (Hin : derivable_pt_lim (fun x => 1 + exp (- x)) z (exp (- z) * -1)).
  { replace (exp (- z) * -1) with (0 + exp (- z) * -1) by ring.
    apply (dlim_plus (fun _ => 1) (fun x => exp (- x))); [apply derivable_pt_lim_const|].
    pose proof (derivable_pt_lim_comp Ropp exp z (-1) (exp (- z))) as Hc.
    unfold comp in Hc. apply Hc.
    - pose proof (derivable_pt_lim_opp (fun x => x) z 1 (derivable_pt_lim_id z)) as Ho.
      unfold opp_fct in Ho. exact Ho.
    - apply derivable_pt_lim_exp. }
  assert (Hpos : 0 < 1 + exp (- z)) by (pose proof (exp_pos (- z)); lra).
  pose proof (derivable_pt_lim_comp (fun x => 1 + exp (- x)) ln z _ _ Hin (derivable_pt_lim_ln _ Hpos)) as H.
  unfold comp in H. unfold logistic_loss. eapply dlim_ext_value; [|exact H].
  unfold logistic_clock. rewrite exp_Ropp. pose proof (exp_pos z). field. split; lra.
Qed.

(** ** The partial derivatives of F *)
Lemma updV_same : forall V k l k' l', updV V k l (V k l) k' l' = V k' l'.
Proof.
  intros. unfold updV. destruct (Nat.eq_dec k' k) as [->|]; [|reflexivity].
  destruct (Nat.eq_dec l' l) as [->|]; reflexivity.
Qed.

Lemma upd_same : forall (a : nat -> R) i m, upd a i (a i) m = a m.
Proof. intros. unfold upd. destruct (Nat.eq_dec m i) as [->|]; reflexivity. Qed.

Lemma margin_updV_same : forall n d w V a k l, margin n d w (updV V k l (V k l)) a = margin n d w V a.
Proof.
  intros. unfold margin, beta. apply sumn_ext. intros k' _. f_equal. apply sumn_ext.
  intros l' _. rewrite updV_same. reflexivity.
Qed.

Lemma Zsum_upd_same : forall n a i, Zsum n (upd a i (a i)) = Zsum n a.
Proof. intros. unfold Zsum. apply sumn_ext. intros m _. rewrite upd_same. reflexivity. Qed.

Lemma softmax_upd_same : forall n a i l, softmax n (upd a i (a i)) l = softmax n a l.
Proof. intros. unfold softmax. rewrite Zsum_upd_same, upd_same. reflexivity. Qed.

Lemma margin_upd_same : forall n d w V a i, margin n d w V (upd a i (a i)) = margin n d w V a.
Proof.
  intros. unfold margin, beta. apply sumn_ext. intros k' _. f_equal. apply sumn_ext.
  intros l' _. rewrite softmax_upd_same. reflexivity.
Qed.

(** dF/dV_kl = l'(z) w_k s_l. *)
Lemma partial_V : forall n d w V a k l, (k < d)%nat -> (l < n)%nat ->
  derivable_pt_lim (fun x => objective n d w (updV V k l x) a) (V k l)
    (- logistic_clock (margin n d w V a) * (w k * softmax n a l)).
Proof.
  intros n d w V a k l Hk Hl.
  assert (Hin : derivable_pt_lim (fun x => margin n d w (updV V k l x) a) (V k l) (w k * softmax n a l)).
  { unfold margin, beta.
    replace (w k * softmax n a l) with
      (sumn (fun k' => w k' * sumn (fun l' => if Nat.eq_dec k' k then
                                              (if Nat.eq_dec l' l then softmax n a l else 0) else 0) n) d).
    2:{ rewrite (sumn_ext _ (fun k' => if Nat.eq_dec k' k then w k * softmax n a l else 0) d).
        - apply sumn_delta. exact Hk.
        - intros k' _. destruct (Nat.eq_dec k' k) as [->|].
          + rewrite sumn_delta by exact Hl. reflexivity.
          + rewrite sumn_zero. ring. }
    apply (dlim_sumn (fun k' x => w k' * sumn (fun l' => updV V k l x k' l' * softmax n a l') n)).
    intros k' _. apply dlim_scal.
    apply (dlim_sumn (fun l' x => updV V k l x k' l' * softmax n a l')).
    intros l' _. unfold updV.
    destruct (Nat.eq_dec k' k) as [->|Hk'].
    - destruct (Nat.eq_dec l' l) as [->|Hl'].
      + eapply dlim_ext_value; [|apply (dlim_mult_const (fun x => x)), derivable_pt_lim_id]. ring.
      + eapply dlim_ext_value; [|apply (dlim_mult_const (fun _ => V k l')), derivable_pt_lim_const]. ring.
    - eapply dlim_ext_value; [|apply (dlim_mult_const (fun _ => V k' l')), derivable_pt_lim_const]. ring. }
  pose proof (derivable_pt_lim_comp _ logistic_loss _ _ _ Hin (logistic_loss_deriv _)) as H.
  unfold comp in H. rewrite margin_updV_same in H. exact H.
Qed.

(** ds_l/da_i = s_l (delta_li - s_i). *)
Lemma partial_softmax : forall n a i l, (i < n)%nat ->
  derivable_pt_lim (fun x => softmax n (upd a i x) l) (a i)
    (softmax n a l * ((if Nat.eq_dec l i then 1 else 0) - softmax n a i)).
Proof.
  intros n a i l Hi.
  assert (Hnum : derivable_pt_lim (fun x => exp (upd a i x l)) (a i) (if Nat.eq_dec l i then exp (a i) else 0)).
  { unfold upd. destruct (Nat.eq_dec l i) as [->|]; [apply derivable_pt_lim_exp|apply derivable_pt_lim_const]. }
  assert (Hden : derivable_pt_lim (fun x => Zsum n (upd a i x)) (a i) (exp (a i))).
  { eapply dlim_ext_value; [apply (sumn_delta (exp (a i)) n i Hi)|].
    apply (dlim_sumn (fun m x => exp (upd a i x m))). intros m _. unfold upd.
    destruct (Nat.eq_dec m i) as [->|]; [apply derivable_pt_lim_exp|apply derivable_pt_lim_const]. }
  pose proof (Zsum_pos n a i Hi) as HZ.
  assert (HZ' : Zsum n (upd a i (a i)) <> 0) by (rewrite Zsum_upd_same; lra).
  pose proof (derivable_pt_lim_div _ _ _ _ _ Hnum Hden HZ') as H.
  unfold div_fct in H. eapply dlim_ext_value; [|exact H].
  rewrite Zsum_upd_same, upd_same. unfold softmax, Rsqr.
  destruct (Nat.eq_dec l i) as [->|]; field; lra.
Qed.

(** dF/da_i = l'(z) s_i (u_i - z) = -gamma (J(s) u)_i with u = V^T w. *)
Lemma partial_a : forall n d w V a i, (i < n)%nat ->
  derivable_pt_lim (fun x => objective n d w V (upd a i x)) (a i)
    (- logistic_clock (margin n d w V a) * da_rhs n (proj d w V) a i).
Proof.
  intros n d w V a i Hi.
  set (c := fun l => softmax n a l * ((if Nat.eq_dec l i then 1 else 0) - softmax n a i)).
  assert (Hin : derivable_pt_lim (fun x => margin n d w V (upd a i x)) (a i) (da_rhs n (proj d w V) a i)).
  { replace (da_rhs n (proj d w V) a i) with (sumn (fun k => w k * sumn (fun l => V k l * c l) n) d).
    - unfold margin, beta.
      apply (dlim_sumn (fun k x => w k * sumn (fun l => V k l * softmax n (upd a i x) l) n)).
      intros k _. apply dlim_scal.
      apply (dlim_sumn (fun l x => V k l * softmax n (upd a i x) l)).
      intros l _. apply dlim_scal. apply partial_softmax. exact Hi.
    - rewrite sum_wV. unfold da_rhs, zbar, c.
      rewrite (sumn_ext _ (fun l => (if Nat.eq_dec l i then softmax n a i * proj d w V i else 0)
                                     - softmax n a i * (softmax n a l * proj d w V l)) n).
      + rewrite sumn_minus, sumn_scal, sumn_delta by exact Hi. ring.
      + intros l _. destruct (Nat.eq_dec l i) as [->|]; ring. }
  pose proof (derivable_pt_lim_comp _ logistic_loss _ _ _ Hin (logistic_loss_deriv _)) as H.
  unfold comp in H. rewrite margin_upd_same in H. eapply dlim_ext_value; [|exact H]. ring.
Qed.

(** ** The reduction *)
Section Reduction.
Variables (n d : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R) (t0 : R).
Hypothesis Hflow : is_gradient_flow (objective n d w) n d V a t0.

Let gam t := logistic_clock (margin n d w (V t) (a t)).

Lemma flow_V : forall t k l, t0 <= t -> (k < d)%nat -> (l < n)%nat ->
  derivable_pt_lim (fun s => V s k l) t (gam t * (w k * softmax n (a t) l)).
Proof.
  intros t k l Ht Hk Hl. destruct (Hflow t Ht) as [HV _]. destruct (HV k l Hk Hl) as [g [Hg Hd]].
  pose proof (uniqueness_limite _ _ _ _ Hg (partial_V n d w (V t) (a t) k l Hk Hl)) as ->.
  eapply dlim_ext_value; [|exact Hd]. unfold gam. ring.
Qed.

Lemma flow_a : forall t i, t0 <= t -> (i < n)%nat ->
  derivable_pt_lim (fun s => a s i) t (gam t * da_rhs n (proj d w (V t)) (a t) i).
Proof.
  intros t i Ht Hi. destruct (Hflow t Ht) as [_ HA]. destruct (HA i Hi) as [g [Hg Hd]].
  pose proof (uniqueness_limite _ _ _ _ Hg (partial_a n d w (V t) (a t) i Hi)) as ->.
  eapply dlim_ext_value; [|exact Hd]. unfold gam. ring.
Qed.

Lemma flow_u : forall t j, t0 <= t -> (j < n)%nat ->
  derivable_pt_lim (fun s => proj d w (V s) j) t (gam t * du_rhs n (sqnorm d w) (proj d w (V t)) (a t) j).
Proof.
  intros t j Ht Hj. unfold proj.
  eapply dlim_ext_value;
    [|apply (dlim_sumn (fun k s => V s k j * w k) (fun k => gam t * (w k * softmax n (a t) j) * w k))].
  - unfold du_rhs, sqnorm.
    rewrite (sumn_ext _ (fun k => gam t * softmax n (a t) j * (w k * w k)) d) by (intros; ring).
    rewrite sumn_scal. ring.
  - intros k Hk. apply (dlim_mult_const (fun s => V s k j)). apply flow_V; assumption.
Qed.

End Reduction.

(** The reduction [D]: along the gradient flow of F(V, a) = l(<w, V s(a)>), u = V^T w and a solve
    the logistic flow of [Trapping] with b = |w|^2, with the clock tau' = -l'(<w, V s>) = 1/(1 + e^z)
    ([logistic_loss_deriv]); the margin <w, V s> is z = <u, s> ([margin_zbar]). *)
Theorem reduction : forall (n d : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)
    (tau : R -> R) (t0 : R),
  is_gradient_flow (objective n d w) n d V a t0 ->
  (forall t, t0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  is_logistic_solution n (sqnorm d w) tau (fun t => proj d w (V t)) a t0.
Proof.
  intros n d w V a tau t0 Hflow Htau t Ht. cbv beta. rewrite <- margin_zbar.
  split; [|split].
  - unfold logistic_clock. apply Rinv_0_lt_compat. pose proof (exp_pos (margin n d w (V t) (a t))). lra.
  - apply Htau, Ht.
  - intros k Hk. split.
    + apply (flow_u n d w V a t0 Hflow t k Ht Hk).
    + apply (flow_a n d w V a t0 Hflow t k Ht Hk).
Qed.

(** The change of clock [D]: a clocked solution read in the clock tau, through a time change sigma with
    sigma' = 1/g(sigma) (the inverse of tau), is a solution of the tau-system (star) (chain rule). *)
Theorem clocked_to_tau : forall (n : nat) (b : R) (g tau : R -> R) (u a : R -> nat -> R) (t0 : R)
    (sigma : R -> R) (r0 : R),
  is_clocked_solution n b g tau u a t0 ->
  (forall r, r0 <= r -> t0 <= sigma r /\ derivable_pt_lim sigma r (/ g (sigma r))) ->
  is_tau_solution n b (fun r => u (sigma r)) (fun r => a (sigma r)) r0.
Proof.
  intros n b g tau u a t0 sigma r0 Hsol Hsig r Hr k Hk.
  destruct (Hsig r Hr) as [Hs Hd]. destruct (Hsol (sigma r) Hs) as [Hg [_ H]]. destruct (H k Hk) as [Hu Ha].
  split.
  - pose proof (derivable_pt_lim_comp sigma (fun s => u s k) r _ _ Hd Hu) as Hc. unfold comp in Hc.
    eapply dlim_ext_value; [|exact Hc]. field. lra.
  - pose proof (derivable_pt_lim_comp sigma (fun s => a s k) r _ _ Hd Ha) as Hc. unfold comp in Hc.
    eapply dlim_ext_value; [|exact Hc]. field. lra.
Qed.

(** Both together: the parameter flow, read in its clock tau, is the tau-system (star). *)
Corollary reduction_tau : forall (n d : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)
    (tau sigma : R -> R) (t0 r0 : R),
  is_gradient_flow (objective n d w) n d V a t0 ->
  (forall t, t0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  (forall r, r0 <= r -> t0 <= sigma r /\
     derivable_pt_lim sigma r (/ logistic_clock (margin n d w (V (sigma r)) (a (sigma r))))) ->
  is_tau_solution n (sqnorm d w) (fun r => proj d w (V (sigma r))) (fun r => a (sigma r)) r0.
Proof.
  intros n d w V a tau sigma t0 r0 Hflow Htau Hsig.
  apply (clocked_to_tau n (sqnorm d w) (fun t => logistic_clock (zbar n (proj d w (V t)) (a t))) tau
           (fun t => proj d w (V t)) a t0 sigma r0).
  - apply reduction; assumption.
  - intros r Hr. rewrite <- margin_zbar. apply Hsig, Hr.
Qed.

(** ** The parameter flow polarizes [D] *)
Theorem model_trapping : forall (n d i : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)
    (tau : R -> R) (t0 : R),
  (i < n)%nat -> 0 < sqnorm d w ->
  is_gradient_flow (objective n d w) n d V a t0 ->
  (forall t, t0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  in_Rplus n i (proj d w (V t0)) (a t0) ->
  tends_to_infty tau /\
  (forall t, t0 <= t -> in_Rplus n i (proj d w (V t)) (a t)) /\
  (forall j, (j < n)%nat -> j <> i -> tends_to_infty (fun t => a t i - a t j)) /\
  (forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros n d i w V a tau t0 Hi Hb Hflow Htau H0.
  apply (softpolar_trapping_logistic n i (sqnorm d w) tau (fun t => proj d w (V t)) a t0 Hi Hb); [|exact H0].
  apply reduction; assumption.
Qed.

(** The paper's setting on the parameters themselves: a(0) uniform, u(0) = V(0)^T w with a strict
    maximum at i; along every gradient flow of F (with its clock), s(a(t)) -> e_i. *)
Theorem model_polarization : forall (n d i : nat) (w : nat -> R) (V : R -> nat -> nat -> R) (a : R -> nat -> R)
    (tau : R -> R),
  (i < n)%nat -> 0 < sqnorm d w ->
  is_gradient_flow (objective n d w) n d V a 0 ->
  (forall t, 0 <= t -> derivable_pt_lim tau t (logistic_clock (margin n d w (V t) (a t)))) ->
  uniform n (a 0) -> strict_max n i (proj d w (V 0)) ->
  tends_to_infty tau /\
  (forall k, (k < n)%nat -> tends_to (fun t => softmax n (a t) k) (if Nat.eq_dec k i then 1 else 0)).
Proof.
  intros n d i w V a tau Hi Hb Hflow Htau Hun Hmax.
  pose proof (reduction n d w V a tau 0 Hflow Htau) as Hsol.
  pose proof (logistic_clock_diverges n i (sqnorm d w) tau _ a 0 Hi Hb Hsol) as Hdiv.
  split; [exact Hdiv|].
  apply (polarization_clocked n i (sqnorm d w) _ tau _ a Hi Hb Hsol Hdiv).
  apply (uniform_strict_start n i (proj d w (V 0)) (a 0) (fun t => proj d w (V t)) a Hi Hun Hmax).
  intros k _. split; reflexivity.
Qed.
