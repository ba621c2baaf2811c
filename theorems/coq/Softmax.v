(** * Finite sums, the softmax, and the sign facts of the trapping lemma, for every n.

    [sumn f n] is f 0 + ... + f (n-1).  [softmax n a k = exp (a k) / sum_m exp (a m)]
    and [zbar n u a = <u, softmax a>].  Proven here for any number n of tokens:
    (D2) u_i - z = sum_k s_k (u_i - u_k),  (D1) the split of the a-gap derivative,
    the sign of both gap derivatives on R_i, strict on the face u_i = u_j of R_i^+,
    the winner weight n s_i >= 1, and s_j <= exp(a_j - a_i). *)
From Coq Require Import Reals Lra Lia.
From Softpolar Require Import Calculus.
Open Scope R_scope.

Fixpoint sumn (f : nat -> R) (n : nat) : R :=
  match n with O => 0 | S m => sumn f m + f m end.

Lemma sumn_ext : forall f g n, (forall k, (k < n)%nat -> f k = g k) -> sumn f n = sumn g n.
Proof.
  intros f g n. induction n as [|n IH]; intros H; simpl; [reflexivity|].
  rewrite IH, H; [reflexivity|lia|]. intros k Hk. apply H. lia.
Qed.

Lemma sumn_le : forall f g n, (forall k, (k < n)%nat -> f k <= g k) -> sumn f n <= sumn g n.
Proof.
  intros f g n. induction n as [|n IH]; intros H; simpl; [lra|].
  assert (sumn f n <= sumn g n) by (apply IH; intros k Hk; apply H; lia).
  assert (f n <= g n) by (apply H; lia). lra.
Qed.

Lemma sumn_nonneg : forall f n, (forall k, (k < n)%nat -> 0 <= f k) -> 0 <= sumn f n.
Proof.
  intros f n H. replace 0 with (sumn (fun _ => 0) n).
  - apply sumn_le. exact H.
  - induction n as [|n IH]; simpl; [reflexivity|]. rewrite IH; [lra|]. intros k Hk; apply H; lia.
Qed.

Lemma sumn_const : forall c n, sumn (fun _ => c) n = INR n * c.
Proof.
  intros c n. induction n as [|n IH]; simpl sumn; [simpl; ring|].
  rewrite IH, S_INR. ring.
Qed.

Lemma sumn_plus : forall f g n, sumn (fun k => f k + g k) n = sumn f n + sumn g n.
Proof. intros f g n. induction n as [|n IH]; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma sumn_scal : forall c f n, sumn (fun k => c * f k) n = c * sumn f n.
Proof. intros c f n. induction n as [|n IH]; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma sumn_minus : forall f g n, sumn (fun k => f k - g k) n = sumn f n - sumn g n.
Proof. intros f g n. induction n as [|n IH]; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma sumn_term_le : forall f n i, (i < n)%nat -> (forall k, (k < n)%nat -> 0 <= f k) ->
  f i <= sumn f n.
Proof.
  intros f n. induction n as [|n IH]; intros i Hi H; [lia|]. simpl.
  assert (0 <= sumn f n) by (apply sumn_nonneg; intros k Hk; apply H; lia).
  destruct (Nat.eq_dec i n) as [->|Hne]; [lra|].
  assert (f i <= sumn f n) by (apply IH; [lia| intros k Hk; apply H; lia]).
  assert (0 <= f n) by (apply H; lia). lra.
Qed.

(** Split off the term [i]. *)
Lemma sumn_split : forall f n i, (i < n)%nat ->
  sumn f n = f i + sumn (fun k => if Nat.eq_dec k i then 0 else f k) n.
Proof.
  intros f n. induction n as [|n IH]; intros i Hi; [lia|]. simpl.
  destruct (Nat.eq_dec n i) as [->|Hne].
  - rewrite (sumn_ext (fun k => if Nat.eq_dec k i then 0 else f k) f i); [ring|].
    intros k Hk. destruct (Nat.eq_dec k i); [lia|reflexivity].
  - rewrite (IH i); [ring|lia].
Qed.

(** ** Softmax *)
Definition Zsum (n : nat) (a : nat -> R) : R := sumn (fun k => exp (a k)) n.
Definition softmax (n : nat) (a : nat -> R) (k : nat) : R := exp (a k) / Zsum n a.
Definition zbar (n : nat) (u a : nat -> R) : R := sumn (fun k => softmax n a k * u k) n.

Section Softmax.
Variable n : nat.
Variables u a : nat -> R.
Variable i : nat.
Hypothesis Hi : (i < n)%nat.

Lemma Zsum_pos : 0 < Zsum n a.
Proof.
  unfold Zsum. apply Rlt_le_trans with (exp (a i)); [apply exp_pos|].
  apply (sumn_term_le (fun k => exp (a k))); [exact Hi|]. intros k _. left. apply exp_pos.
Qed.

Lemma softmax_pos : forall k, 0 < softmax n a k.
Proof. intros k. unfold softmax. apply Rdiv_lt_0_compat; [apply exp_pos|apply Zsum_pos]. Qed.

Lemma softmax_sum : sumn (softmax n a) n = 1.
Proof.
  pose proof Zsum_pos as HZ. unfold softmax.
  rewrite (sumn_ext _ (fun k => / Zsum n a * exp (a k)) n) by (intros; unfold Rdiv; ring).
  rewrite sumn_scal. fold (Zsum n a). field. lra.
Qed.

Lemma softmax_le_1 : forall k, (k < n)%nat -> softmax n a k <= 1.
Proof.
  intros k Hk. rewrite <- softmax_sum. apply (sumn_term_le (softmax n a)); [exact Hk|].
  intros m _. left. apply softmax_pos.
Qed.

Lemma softmax_ratio : forall j, softmax n a j = softmax n a i * exp (a j - a i).
Proof.
  intros j. pose proof Zsum_pos. unfold softmax, Rminus. rewrite exp_plus, exp_Ropp.
  field. split; [apply Rgt_not_eq, exp_pos | lra].
Qed.

Lemma softmax_le_gap : forall j, (j < n)%nat -> softmax n a j <= exp (a j - a i).
Proof.
  intros j Hj. rewrite softmax_ratio. pose proof (softmax_le_1 i Hi). pose proof (exp_pos (a j - a i)).
  pose proof (softmax_pos i). nra.
Qed.

Lemma softmax_mono : forall j, a j <= a i -> softmax n a j <= softmax n a i.
Proof.
  intros j H. unfold softmax, Rdiv. pose proof Zsum_pos.
  apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat; lra| apply exp_le; exact H].
Qed.

Lemma softmax_strict : forall j, a j < a i -> softmax n a j < softmax n a i.
Proof.
  intros j H. unfold softmax, Rdiv. pose proof Zsum_pos.
  apply Rmult_lt_compat_r; [apply Rinv_0_lt_compat; lra| apply exp_increasing; exact H].
Qed.

(** The winner weight: n s_i >= 1 when a_i is maximal. *)
Lemma winner_weight : (forall k, (k < n)%nat -> a k <= a i) -> 1 <= INR n * softmax n a i.
Proof.
  intros H. pose proof Zsum_pos as HZ.
  assert (HZle : Zsum n a <= INR n * exp (a i)).
  { unfold Zsum. rewrite <- sumn_const. apply sumn_le. intros k Hk. apply exp_le, H, Hk. }
  unfold softmax. replace (INR n * (exp (a i) / Zsum n a)) with (INR n * exp (a i) / Zsum n a) by (field; lra).
  apply Rmult_le_reg_r with (Zsum n a); [exact HZ|].
  unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

(** (D2) *)
Lemma D2 : u i - zbar n u a = sumn (fun k => softmax n a k * (u i - u k)) n.
Proof.
  unfold zbar.
  rewrite (sumn_ext (fun k => softmax n a k * (u i - u k))
                    (fun k => u i * softmax n a k - softmax n a k * u k) n) by (intros; ring).
  rewrite sumn_minus, sumn_scal, softmax_sum. ring.
Qed.

Lemma D2_nonneg : (forall k, (k < n)%nat -> u k <= u i) -> 0 <= u i - zbar n u a.
Proof.
  intros H. rewrite D2. apply sumn_nonneg. intros k Hk.
  apply Rmult_le_pos; [left; apply softmax_pos|]. specialize (H k Hk). lra.
Qed.

Lemma zbar_le_abs : zbar n u a <= sumn (fun k => Rabs (u k)) n.
Proof.
  unfold zbar. apply sumn_le. intros k Hk.
  pose proof (softmax_pos k). pose proof (softmax_le_1 k Hk). pose proof (Rle_abs (u k)).
  pose proof (Rabs_pos (u k)). nra.
Qed.
End Softmax.

(** ** The region and the right-hand side of the tau-system *)
Definition in_R (n i : nat) (u a : nat -> R) : Prop :=
  forall j, (j < n)%nat -> j <> i -> u j <= u i /\ a j <= a i.

Definition in_Rplus (n i : nat) (u a : nat -> R) : Prop :=
  forall j, (j < n)%nat -> j <> i -> u j <= u i /\ a j < a i.

(** du_k/dtau = b s_k,  da_k/dtau = (J(s) u)_k = s_k (u_k - z). *)
Definition du_rhs (n : nat) (b : R) (u a : nat -> R) (k : nat) : R := b * softmax n a k.
Definition da_rhs (n : nat) (u a : nat -> R) (k : nat) : R := softmax n a k * (u k - zbar n u a).

Lemma in_Rplus_in_R : forall n i u a, in_Rplus n i u a -> in_R n i u a.
Proof. intros n i u a H j Hj Hne. destruct (H j Hj Hne). split; lra. Qed.

Lemma in_R_all : forall n i u a, in_R n i u a ->
  (forall k, (k < n)%nat -> u k <= u i) /\ (forall k, (k < n)%nat -> a k <= a i).
Proof.
  intros n i u a H. split; intros k Hk; destruct (Nat.eq_dec k i) as [->|Hne];
    try lra; destruct (H k Hk Hne); lra.
Qed.

Section Signs.
Variables (n i j : nat) (b : R) (u a : nat -> R).
Hypotheses (Hi : (i < n)%nat) (Hj : (j < n)%nat).

(** (D1) *)
Lemma D1 : da_rhs n u a i - da_rhs n u a j
  = (softmax n a i - softmax n a j) * (u i - zbar n u a) + softmax n a j * (u i - u j).
Proof. unfold da_rhs. ring. Qed.

(** u-gap: d/dtau (u_i - u_j) = b s_i (1 - exp(a_j - a_i)). *)
Lemma ugap_identity : du_rhs n b u a i - du_rhs n b u a j = b * softmax n a i * (1 - exp (a j - a i)).
Proof. unfold du_rhs. rewrite (softmax_ratio n a i Hi j). ring. Qed.

Lemma ugap_nonneg : 0 < b -> a j <= a i -> 0 <= du_rhs n b u a i - du_rhs n b u a j.
Proof.
  intros Hb H. unfold du_rhs. pose proof (softmax_mono n a i Hi j H).
  rewrite <- Rmult_minus_distr_l. apply Rmult_le_pos; lra.
Qed.

(** The face u_i = u_j of R_i^+: strictly positive (only a_j < a_i is used). *)
Lemma ugap_strict : 0 < b -> a j < a i -> 0 < du_rhs n b u a i - du_rhs n b u a j.
Proof.
  intros Hb H. unfold du_rhs. pose proof (softmax_strict n a i Hi j H).
  rewrite <- Rmult_minus_distr_l. apply Rmult_lt_0_compat; lra.
Qed.

(** a-gap on R_i: d/dtau (a_i - a_j) >= s_j (u_i - u_j) >= 0. *)
Lemma agap_rate : in_R n i u a -> softmax n a j * (u i - u j) <= da_rhs n u a i - da_rhs n u a j.
Proof.
  intros HR. destruct (in_R_all n i u a HR) as [Hu Ha].
  rewrite D1. pose proof (D2_nonneg n u a i Hi Hu).
  pose proof (softmax_mono n a i Hi j (Ha j Hj)).
  assert (0 <= (softmax n a i - softmax n a j) * (u i - zbar n u a)) by (apply Rmult_le_pos; lra).
  lra.
Qed.

Lemma agap_nonneg : in_R n i u a -> 0 <= da_rhs n u a i - da_rhs n u a j.
Proof.
  intros HR. pose proof (agap_rate HR). destruct (in_R_all n i u a HR) as [Hu _].
  pose proof (softmax_pos n a i Hi j). specialize (Hu j Hj).
  assert (0 <= softmax n a j * (u i - u j)) by (apply Rmult_le_pos; lra). lra.
Qed.

(** u-gap rate: d/dtau (u_i - u_j) >= (b/n)(1 - exp(a_j - a_i)) on R_i. *)
Lemma ugap_rate : 0 < b -> in_R n i u a ->
  b / INR n * (1 - exp (a j - a i)) <= du_rhs n b u a i - du_rhs n b u a j.
Proof.
  intros Hb HR. destruct (in_R_all n i u a HR) as [_ Ha].
  rewrite ugap_identity. pose proof (winner_weight n a i Hi Ha) as Hw.
  assert (Hn : 0 < INR n) by (apply lt_0_INR; lia).
  assert (He : 0 <= 1 - exp (a j - a i)).
  { assert (exp (a j - a i) <= exp 0) by (apply exp_le; specialize (Ha j Hj); lra).
    rewrite exp_0 in H. lra. }
  assert (Hs : / INR n <= softmax n a i).
  { apply Rmult_le_reg_l with (INR n); [exact Hn|]. rewrite Rinv_r by lra. lra. }
  unfold Rdiv. rewrite Rmult_assoc, (Rmult_assoc b).
  apply Rmult_le_compat_l; [lra|]. apply Rmult_le_compat_r; [exact He | exact Hs].
Qed.
End Signs.
