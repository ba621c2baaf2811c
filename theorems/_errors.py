"""The one exception type for bad input, shared by every layer of softpolar."""


class InvalidArgument(ValueError):
    """Raised when a caller passes a bad value.

    The message always names the argument, shows the value received and says what
    was expected, e.g. ``loss='hinge' is not a known loss; expected one of
    'kl', 'logistic', 'square'``. The CLI turns it into one line on stderr and exit
    code 2.
    """


def check_choice(argument: str, value, choices) -> None:
    """Raise :class:`InvalidArgument` unless ``value`` is one of ``choices``."""
    if value not in choices:
        allowed = ", ".join(repr(c) for c in sorted(choices))
        raise InvalidArgument(
            f"{argument}={value!r} is not allowed; expected one of {allowed}"
        )


def check_int(argument: str, value, *, minimum: int) -> int:
    """Raise :class:`InvalidArgument` unless ``value`` is an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(
            f"{argument}={value!r} (type {type(value).__name__}) is not allowed; "
            f"expected an integer >= {minimum}"
        )
    return value
