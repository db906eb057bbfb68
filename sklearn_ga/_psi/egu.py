"""psi = exp: EGU, unnormalized positive weights e^theta (KW01 §3; KMWW Example 7
for its natural update)."""

import numpy as np

from .._codes import PsiCode
from ._entry import Parameterization, Unbounded
from ._ranges import check_positive
from ._scaled_rows import squared_norms


class Exponential(Unbounded, Parameterization):
    """Omega = e^theta; P = sum e^theta; Dpsi = diag(w), whose quadratic form grows
    with the weights: the default rate takes ||x||^2 times the size of weights
    that fit the targets (``growing_weights``)."""

    def weights(self, theta, U, p):
        return np.exp(theta)

    def potential(self, theta, U, p):
        return np.sum(np.exp(theta), axis=-1)

    def divergence(self, theta_tilde, theta, U, p):
        # sum_j e^theta_j (e^d - 1 - d) with d = theta_tilde - theta, i.e. the
        # unnormalized relative entropy sum_j (w_j ln(w_j / w~_j) + w~_j - w_j).
        # For d > 1 the term is e^theta~ - e^theta (1 + d) (no cancellation: e^d >
        # 1 + d by a factor of at least e / 2), finite where e^theta underflows and
        # e^d overflows. Where e^theta overflows, e^(theta + ln(e^d - 1 - d)) may
        # not.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d = theta_tilde - theta
            weights = np.exp(theta)
            near = np.where(np.isfinite(weights), weights * (np.expm1(d) - d),
                            np.exp(theta + np.log(np.expm1(d) - d)))
            terms = np.where(d > 1.0, np.exp(theta_tilde)
                             - np.where(weights > 0, weights * (1.0 + d), 0.0), near)
        return np.sum(terms, axis=-1)

    def inverse(self, omega, U, p):
        check_positive(omega, "EGU's weights (psi='exp')")
        return np.log(omega)

    def row_bounds(self, X, U, p):
        return squared_norms(X)  # (times the weights' size: TheoryRates)


EXP = Exponential(
    name="exp", code=PsiCode.PSI_EXP, constrained=True,
    no_input_bound=("x^T Dpsi(theta) x = sum_j exp(theta_j) x_j^2 grows without "
                    "bound with the weights"),
    growing_weights=True, description="EGU: unnormalized positive weights",
    weight_range="positive")
