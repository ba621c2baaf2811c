"""User links for `softpolar --models examples/sink_links.py ...`: softmax-off-by-one and stablemax.

    softpolar verify --models examples/sink_links.py --link softmax1 --loss logistic
    softpolar verify --models examples/sink_links.py --link stablemax --loss logistic
"""
import sympy as sp

import softpolar

x = sp.symbols("x", real=True)

#: softmax with one extra implicit zero logit: phi_i = e^{a_i} / (1 + sum_j e^{a_j})
softmax1 = softpolar.Link("softmax1", h=sp.exp(x), c=1)
#: stablemax: h(x) = x + 1 for x >= 0, 1 / (1 - x) for x < 0 (C^1, algebraic tails)
stablemax = softpolar.Link("stablemax", h=sp.Piecewise((x + 1, x >= 0), (1 / (1 - x), True)))
