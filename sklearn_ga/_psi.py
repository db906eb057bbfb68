"""Registry of parameterization functions psi: the weights are Omega = psi(Theta).

Each entry is defined here once, with its kernel code and a vectorized NumPy
formula used for ``coef_``. Formulas: KW01 §3 and Examples 2, 5; HKW §III (EG±);
DESIGN.md table. psi acts on each row of Theta (k x n) independently.

The geodesic entries (``sphere``, ``simplex``) keep weights on a manifold and move
them along its geodesics (KMWW Examples 2, 3) instead of by the additive step of
KW01 eq. (23); their Theta is a point of the manifold up to a positive factor.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
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


def _sphere(theta, U, p):
    # U theta / ||theta||_2, measured in units of max |theta| (no overflow).
    shift = np.max(np.abs(theta), axis=-1, keepdims=True)
    r = theta / np.where(shift > 0, shift, 1.0)
    return U * r / np.linalg.norm(r, axis=-1, keepdims=True)


def _simplex(theta, U, p):
    # theta = sqrt(omega) up to a factor (KMWW Example 3).
    return _sphere(theta, 1.0, p) ** 2


def _row_norms(X, order):
    """max over rows of ||x||_order (dense or CSR)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if order == np.inf:
            return float(abs(X).max()) if X.nnz else 0.0
        return float(np.max(np.asarray(abs(X).power(order).sum(axis=1))) ** (1 / order))
    return float(np.max(np.linalg.norm(X, ord=order, axis=1)))


def _b_identity(X, U, p):
    return _row_norms(X, 2) ** 2


def _b_softmax(X, U, p):
    # KW01 Example 5: (max_i x_i - min_i x_i)^2 / 4; implicit zeros count in CSR.
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        full = np.diff(X.indptr) == X.shape[1]
        high = np.where(full, X.max(axis=1).toarray()[:, 0],
                        np.maximum(X.max(axis=1).toarray()[:, 0], 0))
        low = np.where(full, X.min(axis=1).toarray()[:, 0],
                       np.minimum(X.min(axis=1).toarray()[:, 0], 0))
    else:
        high, low = X.max(axis=1), X.min(axis=1)
    return float(np.max(high - low) ** 2 / 4)


def _b_eg_pm(X, U, p):
    return U**2 * _row_norms(X, np.inf) ** 2


def _b_exp(X, U, p):
    # The Hessian of the EGU potential grows with the weights: no bound from X alone.
    return np.inf


def _b_pnorm(X, U, p):
    return (p - 1) * _row_norms(X, p) ** 2


def _b_geodesic(X, U, p):
    # KW01 Theorem 3 is about the additive update; a geodesic step has no b.
    return np.inf


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
    input_bound : callable
        ``input_bound(X, U, p)`` is b_{X,psi} of KW01 eq. (28) for the rows of X
        (``inf`` when no bound follows from X alone).
    description : str
        One line for docs and error messages.
    geodesic : bool
        Whether the update moves the weights along geodesics of a manifold (KMWW
        eq. 10) rather than by the additive step of KW01 eq. (23).
    start : float
        Every parameter starts at this value (uniform weights on the manifold).
    """

    name: str
    code: int
    weights: Callable
    hyperparameters: tuple
    constrained: bool
    input_bound: Callable
    description: str
    geodesic: bool = False
    start: float = 0.0


PSI = {
    entry.name: entry
    for entry in [
        Parameterization("identity", PsiCode.PSI_IDENTITY, _identity, (), False,
                         _b_identity, "gradient descent (Widrow-Hoff)"),
        Parameterization("softmax", PsiCode.PSI_SOFTMAX, _softmax, (), True, _b_softmax,
                         "EG: weights on the probability simplex"),
        Parameterization("eg_pm", PsiCode.PSI_EG_PM, _eg_pm, ("U",), True, _b_eg_pm,
                         "EG±: signed weights with l1 norm below U"),
        Parameterization("exp", PsiCode.PSI_EXP, _exp, (), True, _b_exp,
                         "EGU: unnormalized positive weights"),
        Parameterization("pnorm", PsiCode.PSI_PNORM, _pnorm, ("p",), False, _b_pnorm,
                         "p-norm algorithm (p >= 2)"),
        Parameterization("sphere", PsiCode.PSI_SPHERE, _sphere, ("U",), True,
                         _b_geodesic, "weights on the sphere of radius U, geodesic "
                         "steps (KMWW Example 2)", geodesic=True, start=1.0),
        Parameterization("simplex", PsiCode.PSI_SIMPLEX, _simplex, (), True,
                         _b_geodesic, "weights on the probability simplex, geodesic "
                         "steps of the Fisher metric (KMWW Example 3)", geodesic=True,
                         start=1.0),
    ]
}
