"""Registry of parameterization functions psi: the weights are Omega = psi(Theta).

Each entry is defined here once, with its kernel code and a vectorized NumPy
formula used for ``coef_``. Formulas: KW01 §3 and Examples 2, 5; HKW §III (EG±);
DESIGN.md table. psi acts on each row of Theta (k x n) independently.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import softmax

from ._kernel import PsiCode


def _identity(theta, U, p):
    return np.array(theta, dtype=np.float64, copy=True)


def _softmax(theta, U, p):
    return softmax(theta, axis=-1)


def _eg_pm(theta, U, p):
    # omega = U (w+ - w-) with w± = e^{±theta} / sum_j (e^{theta_j} + e^{-theta_j}),
    # shifted by max |theta| so no exponential overflows (HKW §III).
    shift = np.max(np.abs(theta), axis=-1, keepdims=True)
    plus, minus = np.exp(theta - shift), np.exp(-theta - shift)
    return U * (plus - minus) / np.sum(plus + minus, axis=-1, keepdims=True)


def _exp(theta, U, p):
    return np.exp(theta)


def _pnorm(theta, U, p):
    # sign(theta)|theta|^(p-1) / ||theta||_p^(p-2), measured in units of max |theta|.
    shift = np.max(np.abs(theta), axis=-1, keepdims=True)
    shift = np.where(shift > 0, shift, 1.0)
    r = np.abs(theta) / shift
    norm = np.sum(r**p, axis=-1, keepdims=True)
    scale = np.divide(shift, norm ** ((p - 2) / p), out=np.zeros_like(shift),
                      where=norm > 0)
    return scale * np.sign(theta) * r ** (p - 1)


@dataclass(frozen=True)
class Parameterization:
    """A parameterization function psi of the GA algorithm.

    Attributes
    ----------
    name : str
        Constructor string (``psi=name``).
    code : int
        Kernel dispatch code.
    weights : callable
        ``weights(theta, U, p)`` returns psi applied to each row of ``theta``.
    hyperparameters : tuple of str
        Estimator parameters the function reads (``"U"``, ``"p"``).
    constrained : bool
        Whether the weights live in a restricted set (simplex, l1 ball, positive
        orthant), so some targets cannot be fitted well.
    description : str
        One line for docs and error messages.
    """

    name: str
    code: int
    weights: Callable
    hyperparameters: tuple
    constrained: bool
    description: str


PSI = {
    entry.name: entry
    for entry in [
        Parameterization("identity", PsiCode.PSI_IDENTITY, _identity, (), False,
                         "gradient descent (Widrow-Hoff)"),
        Parameterization("softmax", PsiCode.PSI_SOFTMAX, _softmax, (), True,
                         "EG: weights on the probability simplex"),
        Parameterization("eg_pm", PsiCode.PSI_EG_PM, _eg_pm, ("U",), True,
                         "EG±: signed weights with l1 norm below U"),
        Parameterization("exp", PsiCode.PSI_EXP, _exp, (), True,
                         "EGU: unnormalized positive weights"),
        Parameterization("pnorm", PsiCode.PSI_PNORM, _pnorm, ("p",), False,
                         "p-norm algorithm (p >= 2)"),
    ]
}
