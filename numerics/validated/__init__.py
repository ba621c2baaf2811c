r"""numerics.validated: validated numerics (interval enclosures, certificates, the basin atlas).

* :mod:`.enclosure`: Taylor-model enclosures of the tau-system in arb balls;
* :mod:`.certify`: point certificates (enclosure at tau*, then the trapping lemma) and their replay;
* :mod:`.certcheck`: the independent point checker (shares no code with the certifier);
* :mod:`.box`, :mod:`.box_float`: the C1 box engine of the atlas and its float64 map;
* :mod:`.atlas_check`: the independent atlas checker (shares no enclosure code with the engine);
* :mod:`.sink_atlas`: the sink's atlas against the real tokens (softmax1), public as :func:`numerics.sink_atlas`.
* :mod:`.coq_emit`: Coq files that replay a point certificate or atlas boxes (``certify --coq``, ATLAS).

The checkers are kept apart from the code they check on purpose. The public names are
re-exported by :mod:`numerics`; import them from there.
"""
