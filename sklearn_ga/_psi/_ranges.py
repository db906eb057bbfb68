"""The checks that weights given as a start lie in a psi's range."""

import numpy as np

# How far a row given on the sphere or the simplex may be from it (relative):
# ``coef_`` of a fitted model is on it to rounding.
RANGE_TOLERANCE = 1e-9


def check_positive(omega, where):
    if not np.all(omega > 0):
        raise ValueError(
            f"{where} are positive (every parameter gives e^theta > 0, and no finite "
            f"parameter gives 0); got a smallest weight of {np.min(omega)!r}."
        )


def check_on_simplex(omega):
    totals = np.sum(omega, axis=-1)
    if np.any(omega < 0) or np.any(np.abs(totals - 1.0) > RANGE_TOLERANCE):
        raise ValueError(
            "the weights must lie on the probability simplex (non-negative, each row "
            f"summing to 1); got row sums {np.round(totals, 12).tolist()!r} and a "
            f"smallest weight of {np.min(omega)!r}."
        )
