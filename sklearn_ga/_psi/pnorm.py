"""psi = pnorm: the p-norm algorithm (p >= 2; Grove, Littlestone & Schuurmans,
Gentile), psi(theta) = sign(theta) |theta|^(p-1) / ||theta||_p^(p-2), the gradient
of ||theta||_p^2 / 2. At p = 2 it is gradient descent."""

import numpy as np

from .._codes import PsiCode
from ._entry import Parameterization
from ._scaled_rows import pnorm_norms, row_norms, unit_rows
from .gradient_descent import IDENTITY


def _link(theta, p):
    # sign(theta)|theta|^(p-1) / ||theta||_p^(p-2), in units of max |theta|.
    shift, r = unit_rows(theta)
    norm = np.sum(np.abs(r) ** p, axis=-1, keepdims=True)
    scale = np.divide(shift, norm ** ((p - 2) / p), out=np.zeros_like(shift),
                      where=norm > 0)
    return scale * np.sign(r) * np.abs(r) ** (p - 1)


class PNorm(Parameterization):
    """P = ||theta||_p^2 / 2; b_{X,psi} = (p - 1) max ||x||_p^2."""

    def weights(self, theta, U, p):
        return _link(theta, p)

    def potential(self, theta, U, p):
        return 0.5 * pnorm_norms(theta, p) ** 2

    def divergence(self, theta_tilde, theta, U, p):
        # ||theta~||_p^2 / 2 - ||theta||_p^2 / 2 - (theta~ - theta) . psi(theta), in
        # units s (a power of 2: exact) of the larger |entry| of each row pair, so
        # the squares do not overflow. Both parts vanish exactly at theta~ = theta;
        # near it the difference of the squares is (f~ - f)(f~ + f) with f~ - f
        # from the coordinates' own differences |theta~_j|^p - |theta_j|^p, each
        # without cancellation, so the error is about eps |theta| |theta~ - theta|,
        # not eps |theta|^2.
        if p == 2:
            return IDENTITY.divergence(theta_tilde, theta, U, p)
        high = np.max(np.maximum(np.abs(theta_tilde), np.abs(theta)), axis=-1,
                      keepdims=True)
        s = np.where(high > 0, np.ldexp(1.0, np.frexp(high)[1]), 1.0)
        theta_tilde, theta = theta_tilde / s, theta / s
        norm_tilde, norm = pnorm_norms(theta_tilde, p), pnorm_norms(theta, p)
        d = theta_tilde - theta
        linear = np.sum(d * _link(theta, p), axis=-1)
        with np.errstate(all="ignore"):  # (the masked entries)
            ratio = norm_tilde / norm
            # (f~ / f)^p within [1/2, 2]: |theta~_j|^p stays below 2 ||theta||_p^p.
            near = (ratio >= 2.0 ** (-1 / p)) & (ratio <= 2.0 ** (1 / p))
            top = np.where(norm > 0, np.max(np.abs(theta), axis=-1), 1.0)[..., None]
            q, q_tilde = theta / top, theta_tilde / top
            powers = np.abs(q) ** p
            log_ratio = p * np.log1p(d / theta)
            own = ((q != 0) & (np.sign(q_tilde) == np.sign(q))
                   & (np.abs(log_ratio) < 1))
            steps = np.where(own, powers * np.expm1(log_ratio),
                             np.abs(q_tilde) ** p - powers)
            relative = np.maximum(np.sum(steps, axis=-1) / np.sum(powers, axis=-1),
                                  -1.0)
            gap = np.where(near, norm * np.expm1(np.log1p(relative) / p),
                           norm_tilde - norm)
            unit = 0.5 * gap * (norm_tilde + norm) - linear
            return s[..., 0] * (s[..., 0] * unit)  # (s^2 may overflow where unit is 0)

    def inverse(self, omega, U, p):
        # The p-norm link's inverse is the q-norm link, 1/p + 1/q = 1 (Gentile).
        return _link(omega, p / (p - 1.0))

    def row_bounds(self, X, U, p):
        return (p - 1) * row_norms(X, p) ** 2

    def same_as(self, p):
        # sign(theta)|theta|^(p-1) / ||theta||_p^(p-2) is theta at p = 2.
        return "identity" if p == 2 else None


PNORM = PNorm(
    name="pnorm", code=PsiCode.PSI_PNORM, hyperparameters=("p",), constrained=False,
    description="p-norm algorithm (p >= 2)", weight_range="anywhere",
    bound_text="(p - 1) max ||x||_p^2 (smoothness of ||theta||_p^2 / 2)",
    no_natural=("psi='pnorm' lacks at theta = 0, where it starts, for p > 2. "
                "Use p=2 (gradient descent) or update='explicit'."))
