"""psi = burg: the Burg entropy F(w) = -sum_i ln w_i, whose link f(w) = -1/w gives
positive weights w = psi(theta) = -1/theta on theta < 0, and the update
w <- w / (1 + eta (y_hat - y) w x)."""

import numpy as np

from .._codes import PsiCode
from ._entry import Parameterization, Unbounded
from ._scaled_rows import squared_norms


def _parameters(theta):
    """theta, which must lie in psi="burg"'s domain theta < 0."""
    theta = np.asarray(theta, dtype=np.float64)
    if not np.all(theta < 0):
        raise ValueError("psi='burg' has parameters theta < 0 (its weights are "
                         "-1/theta > 0); got a parameter >= 0.")
    return theta


class Burg(Unbounded, Parameterization):
    """Omega = -1/theta; P = -sum ln(-theta); Dpsi = diag(w^2), whose quadratic
    form grows with the weights (``growing_weights``, ``weight_power=2``)."""

    def weights(self, theta, U, p):
        return -1.0 / _parameters(theta)

    def potential(self, theta, U, p):
        return np.sum(-np.log(-_parameters(theta)), axis=-1)

    def divergence(self, theta_tilde, theta, U, p):
        # sum_i (r_i - 1 - ln r_i) with r = theta~ / theta = w / w~: the Burg
        # divergence of the weights, Delta_F(w, w~), in d = r - 1 without
        # cancellation near r = 1.
        d = _parameters(theta_tilde) / _parameters(theta) - 1.0
        return np.sum(d - np.log1p(d), axis=-1)

    def inverse(self, omega, U, p):
        omega = np.asarray(omega, dtype=np.float64)
        if not np.all(omega > 0):
            raise ValueError(
                "The Burg weights (psi='burg') are positive (w = -1/theta for theta "
                f"< 0); got a smallest weight of {np.min(omega)!r}."
            )
        return -1.0 / omega

    def row_bounds(self, X, U, p):
        return squared_norms(X)  # (times the weights' size squared: TheoryRates)


BURG = Burg(
    name="burg", code=PsiCode.PSI_BURG, constrained=True,
    # Dpsi(theta) = diag(w^2): its quadratic form grows with the weights.
    no_input_bound=("x^T Dpsi(theta) x = sum_j w_j^2 x_j^2 grows without bound "
                    "with the weights"),
    growing_weights=True, weight_power=2,
    no_natural_rate=("its natural step moves theta by eta (y_hat - y) w^2 x toward "
                     "a pole 1/w away, which growing weights reach at any rate set "
                     "from the data"),
    description="Burg entropy: positive weights, w <- w / (1 + eta (y_hat - y) w x)",
    weight_range="positive", start=-1.0)
