"""The (rate, bound) pairs of :mod:`sklearn_ga.theory` and their shared checks.

Every rate and bound the theory module returns is a finite double; one that is not
raises the same ValueError whichever theorem it comes from.
"""

from collections import namedtuple
from numbers import Real

import numpy as np

_Guarantee = namedtuple("Guarantee", ["eta", "bound"])


class Guarantee(_Guarantee):
    """A learning rate and the loss bound it guarantees (floats)."""

    __slots__ = ()

    def __new__(cls, eta, bound):
        return super().__new__(cls, float(eta), float(bound))


def _check_positive(**values):
    for name, value in values.items():
        if not (_finite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0; got {value!r}.")


def _check_nonnegative(**values):
    """Those given (not None) are finite and >= 0."""
    for name, value in values.items():
        if value is not None and not (_finite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")


def _finite(value):
    return isinstance(value, Real) and bool(np.isfinite(value))


def _representable(source, name, value, positive):
    """``value`` as a float, or the ValueError that every function of this module
    raises for a rate or a bound that overflows or underflows.

    A value overflows when it is infinite or NaN (inf - inf), and underflows when
    its exact value is positive (``positive``) but it rounds to 0: a rate of 0
    learns nothing, a bound of 0 claims too much.
    """
    if not np.isfinite(value):
        problem = "overflows"
    elif positive and value == 0:
        problem = "underflows"
    else:
        return float(value)
    raise ValueError(
        f"{source}: the {name} {problem} in floating point (it is {value:.6g}); the "
        "constants it is made of are too large or too small. Scale the inputs (e.g. "
        "with StandardScaler or MaxAbsScaler), or use a numeric eta."
    )


def _guarantee(source, eta, bound, *, eta_positive, bound_positive):
    return Guarantee(_representable(source, "learning rate", eta, eta_positive),
                     _representable(source, "loss bound", bound, bound_positive))
