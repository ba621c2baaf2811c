(** Printed by the build: the axioms the main theorems rest on. *)
From Softpolar Require Import Trapping Polarization Reduction CertModel NoCrossing Rates.
Print Assumptions softpolar_trapping.
Print Assumptions softpolar_polarization.
Print Assumptions reduction.
Print Assumptions reduction_tau.
Print Assumptions model_trapping.
Print Assumptions model_polarization.
Print Assumptions model_of_tau_certificate.
Print Assumptions no_crossing.
Print Assumptions model_no_crossing.
Print Assumptions u_top_leading.
Print Assumptions model_u_top_leading.
