"""Hypothesis strategies for the hostile-input fuzz suite (``tests/test_fuzz_*.py``): files and argument
vectors a hostile or careless user could pass.

* :func:`hostile_values`: command-line values a careless or hostile user may type (numbers out of
  range, NaN / infinities, integers beyond Python's 4300-digit string limit, long strings, empty
  strings, lists where one value is expected, names of devices, options as values, surrogate
  escapes of undecodable bytes, ...);
* :func:`hostile_paths`: output paths (a folder, a missing folder, devices, read-only places, the
  run's own input, a trailing slash, ...);
* :func:`hostile_json` / :func:`near_valid_init`: random JSON and valid initial conditions with one
  field replaced by hostile JSON text (deep nesting, 5000-digit integers, ``1e999``, ``NaN``,
  wrong shapes and types, invalid UTF-8).
"""
from __future__ import annotations

import json

from hypothesis import settings, strategies as st

GOOD = {"loss": "logistic", "V": [[0.1, -0.2, 0.05], [0.3, 0.1, -0.1]], "a": [0.3, 0.1, 0.0],
        "target": [0.6, 0.8]}


def examples(k: int) -> int:
    """``k`` examples under the ``ci`` / ``dev`` profiles, the profile's count when it asks for more."""
    n = settings.default.max_examples
    return k if n <= 100 else n


_WORDS = ["", " ", "-1", "0", "-0", "1", "2", "1e-400", "1e400", "1e308", "1e-308", "nan", "NaN", "inf",
          "-inf", "4294967296", "4294967295", "2**32", "9" * 400, "9" * 5000, "0x10", "1_000", "\uff11",
          "\u0663", "a\nb", "\u00e9", "\U0001f4a5", "\udcff", "--out", "-", "None", "null", "true", "[1]",
          "{}", "1,2", "1,,2", ",", "0.5,0.1", "1e3,1e2", "0.1,0.5", "C04,C99", "C04,C04", "logistic",
          "softmax", "sigmoid", "square", "kl", "hinge", "cpu", "cuda", "cuda:99", "meta", "t", "tau", "log",
          "auto", "x" * 2000, "../", "/", "1e99999999", "1e-99999999", "1e100", "0.0", "1e-30", "5e-324",
          "quick", "full", "zero", "noise", "ones_noise", "latex", "json", "markdown", "100000000000"]


def hostile_values():
    return st.one_of(
        st.sampled_from(_WORDS),
        st.integers(min_value=-10**30, max_value=10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=12),
    )


def hostile_paths(folder, input_path):
    pool = [str(folder), str(folder) + "/", str(folder / "missing" / "x.json"), "/dev/null", "/dev/full",
            "/sys/x.json", "/proc/x.json", str(folder / "out.json"), str(folder / "plot.png"),
            str(folder / "x.png") + "/", "", str(folder / "new" / "deeper"), str(folder / "rep"),
            str(folder / "res"), str(folder / ("y" * 300))]
    if input_path is not None:
        pool.append(str(input_path))
    return st.sampled_from(pool)


def hostile_json():
    leaves = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**400, max_value=10**400),
                       st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
    values = st.recursive(leaves, lambda c: st.one_of(st.lists(c, max_size=4),
                                                       st.dictionaries(st.text(max_size=6), c, max_size=4)),
                          max_leaves=12)
    return st.one_of(values, st.dictionaries(st.sampled_from(["loss", "link", "V", "a", "target", "X", "zz"]),
                                             values, max_size=6))


_RAW = ["[1]", '"x"', "null", "true", "9" * 5000, "1e999", "-1e999", "NaN", "Infinity", "[[1,2],[3]]", "[]",
        "{}", "[" * 3000 + "]" * 3000, '"1e400"', "[1e308,1e308,1e308]", "[1e-320,0,0]", "[[1e308,1e308,1e308],"
        "[1e308,1e308,1e308]]", '["logistic"]', '"square"', '"kl"', '"sigmoid"', '"relu-norm"', '"hinge"',
        "[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]", "[0.5,0.5]", "[1,0]", "[-1,2]", "[1e5,0,0]",
        "[[1e150,-1e150,3e149],[2e149,1e150,-1e150]]", "[[1,2],[3,4]]", '"0.1"', "[0.1,0.2,0.3,0.4]",
        '["0.1","0.2","0.3"]', '"1/3"', "[true,false,true]", "{\"a\":1}", "-0", "1e-400"]


@st.composite
def near_valid_init(draw, logistic: bool = False):
    """A valid initial condition (as JSON bytes) with up to two fields replaced by hostile JSON text."""
    doc = dict(GOOD)
    if not logistic:
        doc.update(draw(st.sampled_from([{}, {"loss": "square"}, {"loss": "kl", "target": [0.5, 0.5]},
                                         {"link": "sigmoid"}, {"loss": "square", "X": [[1, 0], [0, 1]]}])))
    raw = {k: json.dumps(v) for k, v in doc.items()}
    for key in draw(st.lists(st.sampled_from(["loss", "link", "V", "a", "target", "X", "extra"]),
                             max_size=2, unique=True)):
        if draw(st.booleans()) and key in raw and key != "loss":
            del raw[key]
        else:
            raw[key] = draw(st.sampled_from(_RAW))
    text = "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in raw.items()) + "}"
    data = text.encode()
    if draw(st.integers(0, 20)) == 0:
        data = draw(st.sampled_from([b"\xff\xfe", data[:len(data) // 2], data + b"\x80", b""]))
    return data


# ---- round two: numbers that expand, duplicate keys, edited journals --------------------------------
@st.composite
def huge_number_strings(draw):
    """A string number that is short to write and enormous to expand (``'1e999999999'``, ``'-7.5E+123456'``,
    ``'1/1e9'`` ...), or one in non-ASCII digits that ``Decimal`` / ``Fraction`` would read as ASCII."""
    sign = draw(st.sampled_from(["", "-", "+"]))
    mant = draw(st.sampled_from(["1", "9", "7.5", "0.001", ".5", "123456789", "0"]))
    exp = draw(st.one_of(st.integers(min_value=10**4, max_value=10**12),
                         st.integers(min_value=-10**12, max_value=-10**4), st.integers(-400, 400)))
    e = draw(st.sampled_from(["e", "E"]))
    text = f"{sign}{mant}{e}{exp}"
    return draw(st.sampled_from([
        text, f"{text}/3", f"1/{mant}{e}{abs(exp)}", f" {text} ", "9" * draw(st.integers(150, 400)),
        text.translate(str.maketrans("0123456789", "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19")),
        text.translate(str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")),
    ]))


@st.composite
def duplicate_key_json(draw, doc: dict):
    """JSON text of ``doc`` with one key (at top level) written twice, the copies different."""
    key = draw(st.sampled_from(sorted(doc)))
    other = draw(st.sampled_from(['"x"', "0", "1", "[]", "null", json.dumps(doc[key])]))
    items = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items()]
    at = draw(st.integers(0, len(items)))
    items.insert(at, f"{json.dumps(key)}: {other}")
    return "{" + ", ".join(items) + "}"


@st.composite
def edited_record(draw, rec: dict):
    """A journal record with one field changed (a winner flipped, a bound loosened, a key moved, ...)."""
    rec = dict(rec)
    field = draw(st.sampled_from(sorted(k for k in rec if k != "digest")))
    old = rec[field]
    if isinstance(old, bool) or old is None:
        new = draw(st.sampled_from([0, 1, "certified", True, False]))
    elif isinstance(old, int):
        new = old + draw(st.sampled_from([1, -1, 2]))
    elif isinstance(old, float):
        new = old * 2 + 1e-3
    elif isinstance(old, str):
        new = draw(st.sampled_from(["certified", "uncertified", old + "0", "1", ""]))
    elif isinstance(old, list):
        new = old[::-1] + [0] if old else [0]
    else:
        new = None
    rec[field] = new
    return rec, field, old != new
