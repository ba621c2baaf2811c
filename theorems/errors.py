"""The one exception type for bad input, shared by every layer of softpolar, and the checks
that raise it.

Every check names the argument, shows the value (shortened by :func:`show`, which never
fails, even on integers beyond Python's 4300-digit string limit or on unhashable objects)
and says what was expected.
"""
import numbers


class InvalidArgument(ValueError):
    """Raised when a caller passes a bad value.

    The message always names the argument, shows the value received and says what
    was expected, e.g. ``loss='hinge' is not a known loss; expected one of
    'kl', 'logistic', 'square'``. The CLI turns it into one line on stderr and exit
    code 2.
    """


class SoftpolarWarning(UserWarning):
    """Base of softpolar's own warnings (e.g. gradient descent raising the loss); the CLI shows
    each as one line ``softpolar: warning: ...``."""


def show(value, limit: int = 80) -> str:
    """``repr(value)`` shortened to about ``limit`` characters; never raises.

    Integers too long for ``repr`` (Python refuses more than 4300 decimal digits) are shown as
    ``<int with about N digits>``.
    """
    try:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
                and int(value).bit_length() > 3 * limit:
            return f"<int with about {int(int(value).bit_length() * 0.30103) + 1} digits>"
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real message
        return f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return text


def check_choice(argument: str, value, choices) -> None:
    """Raise :class:`InvalidArgument` unless ``value`` is one of ``choices``.

    Unhashable or oddly typed values (a list, a dict, ``None``) are refused, never a ``TypeError``.
    """
    try:
        ok = (isinstance(value, str) or not all(isinstance(c, str) for c in choices)) \
            and value in choices
    except TypeError:  # unhashable
        ok = False
    if not ok:
        allowed = ", ".join(repr(c) for c in sorted(choices))
        raise InvalidArgument(
            f"{argument}={show(value)} is not allowed; expected one of {allowed}"
        )


def check_int(argument: str, value, *, minimum: int, maximum: int | None = None) -> int:
    """Raise :class:`InvalidArgument` unless ``value`` is an integer in ``[minimum, maximum]``.

    Python ints and NumPy integers (``np.int64``) are accepted, ``bool`` is not; returns a
    Python ``int``.
    """
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) \
        and type(value).__name__ != "bool_"
    if ok:
        value = int(value)
        ok = value >= minimum and (maximum is None or value <= maximum)
    if not ok:
        bound = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise InvalidArgument(
            f"{argument}={show(value)} (type {type(value).__name__}) is not allowed; "
            f"expected an integer {bound}"
        )
    return value


def check_real(argument: str, value, *, minimum=None, maximum=None, strict_minimum: bool = False,
               allow_none: bool = False):
    """Raise :class:`InvalidArgument` unless ``value`` is a finite real number in range.

    Python ``int`` / ``float`` and NumPy integer / floating scalars are accepted (``bool`` and
    complex numbers are not); returns a Python ``float``. ``strict_minimum``: require
    ``value > minimum``.
    """
    if value is None and allow_none:
        return None
    try:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) \
            and type(value).__name__ != "bool_"
        x = float(value) if ok else None
    except (OverflowError, ValueError, TypeError):
        ok, x = False, None
    if ok:
        ok = x == x and abs(x) != float("inf") \
            and (minimum is None or (x > minimum if strict_minimum else x >= minimum)) \
            and (maximum is None or x <= maximum)
    if not ok:
        parts = ["a finite real number"]
        if minimum is not None:
            parts.append(f"{'>' if strict_minimum else '>='} {minimum:g}")
        if maximum is not None:
            parts.append(f"<= {maximum:g}")
        raise InvalidArgument(f"{argument}={show(value)} (type {type(value).__name__}) is not "
                              f"allowed; expected {' '.join(parts)}")
    return x
