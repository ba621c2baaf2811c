(** Printed by the build: the axioms the two main theorems rest on. *)
From Softpolar Require Import Trapping Polarization.
Print Assumptions softpolar_trapping.
Print Assumptions softpolar_polarization.
