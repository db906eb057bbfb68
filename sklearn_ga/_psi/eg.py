"""EG and EG±: exponentiated gradient, weights on the simplex (KW01 Examples 2, 5),
and EG on the mirrored inputs x' = U (x, -x) for signed weights in the l1 ball of
radius U (HKW §III).

EG±'s parameters are (theta, -theta): its potential is ln sum_j (e^theta_j +
e^-theta_j), whose gradient is the weights divided by U; its divergence is the
relative entropy between the 2n EG weights, and U enters Theorem 3 through
b = U^2 max ||x||_inf^2.
"""

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_softmax, logsumexp, softmax

from .._codes import PsiCode
from ._entry import Parameterization
from ._ranges import check_on_simplex, check_positive
from ._scaled_rows import row_norms, spreads


def _mirror(theta):
    return np.concatenate([theta, -theta], axis=-1)


class Softmax(Parameterization):
    """EG: Omega = e^theta / sum e^theta; P = ln sum e^theta."""

    def weights(self, theta, U, p):
        return softmax(theta, axis=-1)

    def potential(self, theta, U, p):
        return logsumexp(theta, axis=-1)

    def divergence(self, theta_tilde, theta, U, p):
        # KW01 Example 2: sum_j sigma_j(theta) ln(sigma_j(theta) / sigma_j(theta~)).
        # A weight of 0 adds nothing: its log ratio may be -inf - (-inf) far out.
        with np.errstate(over="ignore", invalid="ignore"):
            weights = softmax(theta, axis=-1)
            ratios = log_softmax(theta, axis=-1) - log_softmax(theta_tilde, axis=-1)
            return np.sum(np.where(weights > 0, weights * ratios, 0.0), axis=-1)

    def inverse(self, omega, U, p):
        # Any theta + c gives softmax(theta) = omega; ln omega is the one of
        # logsumexp(theta) = 0.
        check_on_simplex(omega)
        check_positive(omega, "EG's weights (psi='softmax')")
        return np.log(omega)

    def row_bounds(self, X, U, p):
        return spreads(X)  # KW01 Example 5


class EGPlusMinus(Softmax):
    """EG±: Omega = U (w+ - w-), EG's weights of the mirrored parameters."""

    def weights(self, theta, U, p):
        # omega = U (w+ - w-) with w± = e^{±theta} / sum_j (e^{theta_j} +
        # e^{-theta_j}), shifted by max |theta| so no exponential overflows.
        shift = np.max(np.abs(theta), axis=-1, keepdims=True)
        plus, minus = np.exp(theta - shift), np.exp(-theta - shift)
        return U * (plus - minus) / np.sum(plus + minus, axis=-1, keepdims=True)

    def potential(self, theta, U, p):
        return super().potential(_mirror(theta), U, p)

    def divergence(self, theta_tilde, theta, U, p):
        return super().divergence(_mirror(theta_tilde), _mirror(theta), U, p)

    def inverse(self, omega, U, p):
        # omega_j / U = 2 sinh(theta_j) / Z with Z = 2 sum_j cosh(theta_j): theta_j =
        # asinh(r_j c) with c = Z / 2 the root of sum_j sqrt(1 + (r_j c)^2) = c,
        # unique for ||r||_1 < 1 (the left side minus c is convex, n at 0, and
        # falls to -inf), and within [n, n / (1 - ||r||_1)].
        r = np.asarray(omega, dtype=np.float64) / U
        norms = np.sum(np.abs(r), axis=-1)
        if not np.all(norms < 1.0):
            raise ValueError(
                f"EG±'s weights (psi='eg_pm') lie strictly inside the l1 ball of "
                f"radius U={U!r} (its boundary needs infinite parameters); got l1 "
                f"norms up to {np.max(norms) * U!r}. Scale the weights down, or "
                "raise U."
            )
        theta = np.empty_like(r)
        n = r.shape[-1]
        for row, (ratios, norm) in enumerate(zip(r.reshape(-1, n), norms.ravel(),
                                                 strict=True)):
            c = brentq(lambda c, ratios=ratios: np.sum(np.hypot(1.0, ratios * c)) - c,
                       n, n / (1.0 - norm), xtol=np.finfo(float).tiny,
                       rtol=4 * np.finfo(float).eps)
            theta.reshape(-1, n)[row] = np.arcsinh(ratios * c)
        return theta

    def row_bounds(self, X, U, p):
        # NumPy floats: an overflow gives inf (reported by the caller), not an error.
        return np.float64(U) ** 2 * row_norms(X, np.inf) ** 2


SOFTMAX = Softmax(
    name="softmax", code=PsiCode.PSI_SOFTMAX, constrained=True,
    description="EG: weights on the probability simplex",
    bound_text="max (max_i x_i - min_i x_i)^2 / 4 (Example 5)",
    weight_range="on the probability simplex, all positive")
EG_PM = EGPlusMinus(
    name="eg_pm", code=PsiCode.PSI_EG_PM, hyperparameters=("U",), constrained=True,
    description="EG±: signed weights with l1 norm below U", grid_U=True,
    bound_text="U^2 max ||x||_inf^2 (softmax on x' = U (x, -x); HKW §III)",
    scale_norm=1.0, doubling=True,
    weight_range="strictly inside the l1 ball of radius ``U``")
