"""Registry of transfer functions phi and their matching losses (KW01 eq. 2, 16).

Each entry is defined here once, with its kernel code, the vectorized transfer
``phi(a)``, the matching loss computed from the activation ``a`` (exact at the edges
of the range, where ``phi(a)`` saturates), and the range of targets it can match.
Coordinate-wise functions act on each output; softmax acts on rows.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_softmax, logit, softmax, xlogy

from ._kernel import PhiCode


def _softplus(a):
    return np.logaddexp(0.0, a)


def _bernoulli_loss(z, a):
    # Matching loss of the logistic function: z ln(z / y_hat) + (1-z) ln(...) written
    # with softplus of the activation so it stays finite when y_hat saturates.
    return (z * _softplus(-a) + (1 - z) * _softplus(a)
            + xlogy(z, z) + xlogy(1 - z, 1 - z))


def _half_log1p_square(a):
    # 0.5 * log(1 + a^2) without overflow for huge |a|.
    big = np.abs(a) > 1
    safe = np.where(big, a, 1.0)
    return np.where(big, np.log(np.abs(safe)) + 0.5 * np.log1p(1 / safe**2),
                    0.5 * np.log1p(np.where(big, 0.0, a) ** 2))


def _loss_identity(y, a):
    return 0.5 * (y - a) ** 2


def _loss_logistic(y, a):
    return _bernoulli_loss(y, a)


def _loss_tanh(y, a):
    # L_tanh(y, a) = L_logistic((1 + y) / 2, 2a).
    return _bernoulli_loss(0.5 * (1 + y), 2 * a)


def _loss_arctan(y, a):
    # (y_hat - y) tan(y_hat) + ln(cos y_hat / cos y) with tan(y_hat) = a.
    return a * (np.arctan(a) - y) - _half_log1p_square(a) - np.log(np.cos(y))


def _loss_exp(y, a):
    return xlogy(y, y) - y * a - y + np.exp(a)


def _loss_softmax(y, a):
    return np.sum(xlogy(y, y) - y * log_softmax(a, axis=-1), axis=-1, keepdims=True)


def _loss_sign(y, a):
    return np.maximum(0.0, -y * a)


def _sign(a):
    return np.where(a > 0, 1.0, -1.0)


@dataclass(frozen=True)
class TransferFunction:
    """A transfer function phi with its matching loss.

    Attributes
    ----------
    name : str
        Constructor string (``phi=name``).
    code : int
        Kernel dispatch code.
    transfer : callable
        ``transfer(A)`` maps activations of shape (m, k) to predictions.
    loss : callable
        ``loss(Y, A)`` is the matching loss L_phi(y, phi(a)) of each entry (for
        softmax, of each row), computed from the activations.
    low, high : float
        Range of the targets.
    closed : bool
        Whether the end points belong to the range (arctan's do not).
    regression, classification : bool
        Which estimators accept it.
    c : float or None
        c_phi of KW01 eq. (29), the largest slope of phi (``inf`` when unbounded,
        ``None`` for sign, which has no derivative to bound).
    inverse : callable or None
        ``inverse(v)`` is phi^-1(v) for v inside the range, for coordinate-wise
        increasing phi (``None`` for softmax and sign); clipping predictions to
        [-Y, Y] (GA^Y) clips activations to its image.
    """

    name: str
    code: int
    transfer: Callable
    loss: Callable
    low: float
    high: float
    closed: bool
    regression: bool
    classification: bool
    c: float | None
    inverse: Callable | None = None

    def sample_loss(self, Y, A):
        """Matching loss summed over outputs: one value per sample."""
        return np.sum(self.loss(Y, A), axis=1)

    def activation_bounds(self, Y):
        """[low, high] for activations whose predictions phi(a) lie in [-Y, Y]."""
        low = self.inverse(-Y) if -Y > self.low else -np.inf
        high = self.inverse(Y) if Y < self.high else np.inf
        return float(low), float(high)

    def range_text(self):
        if self.name == "softmax":
            return "rows of the probability simplex (non-negative, summing to 1)"
        left, right = ("[", "]") if self.closed else ("(", ")")
        return f"{left}{self.low:.6g}, {self.high:.6g}{right}"

    def check_targets(self, Y):
        """Raise ValueError if targets Y (m, k) lie outside the range of phi."""
        if self.name == "softmax":
            ok = (Y.shape[1] >= 2 and np.all(Y >= 0)
                  and np.allclose(Y.sum(axis=1), 1.0, rtol=0, atol=1e-9))
        elif self.closed:
            ok = np.all((Y >= self.low) & (Y <= self.high))
        else:
            ok = np.all((Y > self.low) & (Y < self.high))
        if not ok:
            raise ValueError(
                f"phi={self.name!r} predicts values in {self.range_text()}, but y has "
                f"values in [{Y.min():.6g}, {Y.max():.6g}]"
                + (f" and {Y.shape[1]} column(s)" if self.name == "softmax" else "")
                + ". Rescale y into that range or choose another phi (phi='identity' "
                "accepts any real target)."
            )


PHI = {
    entry.name: entry
    for entry in [
        TransferFunction("identity", PhiCode.PHI_IDENTITY, lambda a: a.copy(),
                         _loss_identity, -np.inf, np.inf, True, True, False, 1.0,
                         lambda v: v),
        TransferFunction("logistic", PhiCode.PHI_LOGISTIC, expit, _loss_logistic,
                         0.0, 1.0, True, True, True, 0.25, logit),
        TransferFunction("tanh", PhiCode.PHI_TANH, np.tanh, _loss_tanh,
                         -1.0, 1.0, True, True, True, 1.0, np.arctanh),
        TransferFunction("arctan", PhiCode.PHI_ARCTAN, np.arctan, _loss_arctan,
                         -np.pi / 2, np.pi / 2, False, True, False, 1.0, np.tan),
        TransferFunction("exp", PhiCode.PHI_EXP, np.exp, _loss_exp,
                         0.0, np.inf, True, True, False, np.inf, np.log),
        TransferFunction("softmax", PhiCode.PHI_SOFTMAX,
                         lambda a: softmax(a, axis=-1), _loss_softmax,
                         0.0, 1.0, True, True, True, 0.5),
        TransferFunction("sign", PhiCode.PHI_SIGN, _sign, _loss_sign,
                         -1.0, 1.0, True, False, True, None),
    ]
}

REGRESSION_PHI = sorted(name for name, phi in PHI.items() if phi.regression)
CLASSIFICATION_PHI = sorted(name for name, phi in PHI.items() if phi.classification)

