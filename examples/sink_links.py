"""User links for `softpolar --models examples/sink_links.py ...`: two normalizations that are not built-in.

softmax1, stablemax, softpick and ssmax-n<N> are built-in names (no --models needed); this file shows how to add
a new one. Its module-level Link objects become usable by name:

    softpolar verify --models examples/sink_links.py --link softmax2 --loss logistic
    softpolar simulate --models examples/sink_links.py --link softplus-norm --seed 0 --d 2 --n 3 --loss logistic \
        --t-end 1e4
"""
import sympy as sp

import softpolar

x = sp.symbols("x", real=True)

#: softmax with two extra implicit zero logits (two frozen sink slots): phi_i = e^{a_i} / (2 + sum_j e^{a_j})
softmax2 = softpolar.Link("softmax2", h=sp.exp(x), c=2)
#: softplus normalization: h(x) = log(1 + e^x) (smooth and positive; polynomial, not exponential, growth)
softplus_norm = softpolar.Link("softplus-norm", h=sp.log(1 + sp.exp(x)))
