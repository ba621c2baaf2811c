r"""A byte-level BPE tokenizer built from a GGUF vocabulary (GPT-2 style, as SmolLM2 uses).

The GGUF file stores the token strings (``tokenizer.ggml.tokens``, in GPT-2's
byte-to-unicode alphabet) and the merge list (``tokenizer.ggml.merges``, ``"a b"``
in priority order). Encoding is the standard algorithm: split the text into
pre-tokens, map each pre-token's UTF-8 bytes to the byte alphabet, then repeatedly
merge the adjacent pair with the lowest merge rank.

Pre-tokenization is llama.cpp's ``smollm`` rule, the same as SmolLM2's reference tokenizer
(``tokenizers``: ``Digits(individual_digits=True)`` then GPT-2's ``ByteLevel`` regex): every
Unicode number character (``\p{N}``) is a piece of its own, and the rest is split by
``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+``. The
Unicode classes ``\p{L}`` / ``\p{N}`` come from the ``regex`` module (the standard ``re``
has no ``\p{..}``; its ``[^\W\d_]`` differs on e.g. ``²``, ``½``, ``Ⅻ``). Tested against
the ``tokenizers`` library on the SmolLM2 vocabulary, non-ASCII text included
(``tests/test_experiments_pretrained.py``).
"""
from __future__ import annotations

from functools import lru_cache

#: GPT-2's ByteLevel pre-tokenizer regex (SmolLM2's ``tokenizer.json`` and llama.cpp's ``smollm``)
PRETOKEN_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


@lru_cache(maxsize=1)
def _patterns():
    try:
        import regex
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "the SmolLM2 tokenizer needs the 'regex' module (Unicode \\p{L} / \\p{N}); "
            "`pip install regex` or install softpolar's 'pretrained' extra", name="regex") from None
    return regex.compile(r"\p{N}"), regex.compile(PRETOKEN_PATTERN)


def pretokenize(text: str) -> list[str]:
    """SmolLM2's pre-tokens of ``text``: each ``\\p{N}`` character alone, then the GPT-2 regex."""
    digit, word = _patterns()
    out, pos = [], 0
    for m in digit.finditer(text):
        if m.start() > pos:
            out.extend(word.findall(text[pos:m.start()]))
        out.append(m.group())
        pos = m.end()
    if pos < len(text):
        out.extend(word.findall(text[pos:]))
    return out


@lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values to printable unicode characters."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


class BPETokenizer:
    """Encode / decode with a GGUF vocabulary and merge list."""

    def __init__(self, tokens: list[str], merges: list[str]):
        self.tokens = list(tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {tuple(m.split(" ", 1)): r for r, m in enumerate(merges)}
        self._alpha = byte_alphabet()
        self._inverse = {c: b for b, c in self._alpha.items()}
        self._cache: dict[str, list[int]] = {}

    def _bpe(self, word: str) -> list[int]:
        if word in self._cache:
            return self._cache[word]
        parts = list(word)
        while len(parts) > 1:
            pairs = [(self.ranks.get((a, b), None), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            pairs = [p for p in pairs if p[0] is not None]
            if not pairs:
                break
            _, i = min(pairs)
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        ids = []
        for p in parts:
            if p in self.ids:
                ids.append(self.ids[p])
            else:  # every single byte is in the vocabulary of a byte-level BPE
                ids.extend(self.ids[c] for c in p)
        self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no BOS added: SmolLM2's GGUF sets ``add_bos_token = False``)."""
        out = []
        for piece in pretokenize(text):
            out.extend(self._bpe("".join(self._alpha[b] for b in piece.encode("utf-8"))))
        return out

    def decode(self, ids) -> str:
        """Inverse of :meth:`encode` (for display)."""
        chars = "".join(self.tokens[i] for i in ids)
        data = bytes(self._inverse.get(c, ord("?")) for c in chars)
        return data.decode("utf-8", errors="replace")
