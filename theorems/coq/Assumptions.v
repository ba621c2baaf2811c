(** Printed by the build: the axioms the main theorems rest on. *)
From Softpolar Require Import Trapping Polarization Reduction.
Print Assumptions softpolar_trapping.
Print Assumptions softpolar_polarization.
Print Assumptions reduction.
Print Assumptions reduction_tau.
Print Assumptions model_trapping.
Print Assumptions model_polarization.
