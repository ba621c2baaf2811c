r"""The two synthetic tasks of the paper's transformer experiments (paper-notes#transformers) [C].

Both generators are numpy-only, draw from an explicit ``seed`` (a fresh
``numpy.random.Generator``), download nothing, and return int64 arrays that the
training loop turns into tensors.

**Induction task** (authors' ``InductionDataset``, settings [C]). The vocabulary
has ``vocab_size`` tokens (token 0 = BOS). A sequence is

.. math::
    [\mathrm{BOS}, t_1,\dots,t_m, q, c],\qquad m = \texttt{seq\_length}-3,

with $t_1..t_m$ drawn **without replacement** from $\{1,\dots,V-1\}$, a uniform
position $k\in\{1..m\}$, the query $q=t_k$ (shifted to $t_k+V$ when
``shift_query``, so the model vocabulary is $2V$) and the answer $c=t_{k+1}$; when
$k=m$ the answer is the (shifted) query itself (the authors' edge case). Input is
``seq[:-1]``, target ``seq[1:]``; only the last target is predictable.

**Classification task** (authors' ``ToyClsDataset``, [C]). Vocabulary
$V\in\{41,81,161\}$ including CLS $=0$, ``n_labels`` = 4 groups of
$(V-1)/4$ tokens each. A sequence of label $y$ is ``seq_length - 1`` distinct tokens
of group $y$ (uniform random order) followed by CLS.
"""
from __future__ import annotations

import numpy as np

from theorems import InvalidArgument, check_int

#: token id of BOS (induction) and CLS (classification), as in the authors' code [C].
BOS = 0
CLS = 0


def _rows_without_replacement(rng: np.random.Generator, n: int, population: int, k: int) -> np.ndarray:
    """``n`` rows of ``k`` distinct integers from ``range(population)``, each row uniform."""
    return np.argsort(rng.random((n, population)), axis=1)[:, :k]


def make_induction_data(n: int, *, vocab_size: int = 50, seq_length: int = 13,
                        shift_query: bool = True, seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Induction sequences ``(inputs, targets)``, both ``(n, seq_length - 1)`` int64.

    See the module docstring for the distribution. ``targets[:, -1]`` is the induction
    answer $c=t_{k+1}$; the other targets are the next tokens of the random prefix
    (unpredictable, used only by the auxiliary loss).

    Raises:
        InvalidArgument: ``n < 1``; ``seq_length < 4``; fewer than ``seq_length - 3``
            non-BOS tokens.

    >>> x, y = make_induction_data(2, seed=0)
    >>> x.shape, y.shape, bool((x[:, 0] == 0).all())
    ((2, 12), (2, 12), True)
    """
    check_int("n", n, minimum=1)
    check_int("seq_length", seq_length, minimum=4)
    check_int("vocab_size", vocab_size, minimum=2)
    m = seq_length - 3
    if vocab_size - 1 < m:
        raise InvalidArgument(
            f"vocab_size={vocab_size!r} is too small for seq_length={seq_length!r}; expected "
            f"vocab_size - 1 >= seq_length - 3 = {m} (tokens are drawn without replacement)")
    rng = np.random.default_rng(seed)
    main = _rows_without_replacement(rng, n, vocab_size - 1, m) + 1
    k = rng.integers(0, m, size=n)
    rows = np.arange(n)
    query = main[rows, k] + (vocab_size if shift_query else 0)
    # the answer is the token after t_k; for the last position it is the query itself.
    extended = np.concatenate([main, query[:, None]], axis=1)
    answer = extended[rows, k + 1]
    seq = np.concatenate([np.full((n, 1), BOS), main, query[:, None], answer[:, None]], axis=1)
    seq = seq.astype(np.int64)
    return seq[:, :-1].copy(), seq[:, 1:].copy()


def induction_model_vocab(vocab_size: int, shift_query: bool) -> int:
    """Model vocabulary of the induction task: $2V$ with a shifted query, else $V$."""
    return 2 * vocab_size if shift_query else vocab_size


def make_classification_data(n: int, *, vocab_size: int = 41, n_labels: int = 4,
                             seq_length: int = 11, seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Group-classification sequences ``(inputs (n, seq_length), labels (n,))``, int64.

    Group $y$ holds tokens $1 + y g, \dots, (y+1) g$ with $g=(V-1)/L$; each sequence
    is ``seq_length - 1`` distinct tokens of its group and then CLS (= 0).

    Raises:
        InvalidArgument: ``(vocab_size - 1)`` not divisible by ``n_labels``, or a group
            smaller than ``seq_length - 1``.

    >>> x, y = make_classification_data(3, seed=0)
    >>> x.shape, y.shape, bool((x[:, -1] == 0).all())
    ((3, 11), (3,), True)
    """
    check_int("n", n, minimum=1)
    check_int("n_labels", n_labels, minimum=2)
    check_int("seq_length", seq_length, minimum=2)
    check_int("vocab_size", vocab_size, minimum=3)
    if (vocab_size - 1) % n_labels:
        raise InvalidArgument(
            f"vocab_size={vocab_size!r} is not allowed with n_labels={n_labels!r}; expected "
            f"vocab_size - 1 divisible by n_labels (e.g. 41, 81, 161 for 4 labels)")
    group = (vocab_size - 1) // n_labels
    if group < seq_length - 1:
        raise InvalidArgument(
            f"seq_length={seq_length!r} is too long for groups of {group} tokens; expected "
            f"seq_length - 1 <= (vocab_size - 1) / n_labels")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_labels, size=n)
    content = _rows_without_replacement(rng, n, group, seq_length - 1) + 1 + labels[:, None] * group
    inputs = np.concatenate([content, np.full((n, 1), CLS)], axis=1).astype(np.int64)
    return inputs, labels.astype(np.int64)


def token_label(tokens: np.ndarray, *, vocab_size: int, n_labels: int = 4) -> np.ndarray:
    """Label (group) of content tokens of the classification task; CLS gets -1."""
    group = (vocab_size - 1) // n_labels
    tokens = np.asarray(tokens)
    return np.where(tokens == CLS, -1, (tokens - 1) // group)
