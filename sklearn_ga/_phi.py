"""Registry of transfer functions phi and their matching losses (KW01 eq. 2, 16).

Each entry is defined here once, with its kernel code, the vectorized transfer
``phi(a)``, its potential P_phi (phi = grad P_phi), the matching loss computed from the
activation ``a`` (exact at the edges of the range, where ``phi(a)`` saturates) and from
the prediction ``phi(a)``, an inverse, the range of targets it can match, the
constant c_phi of KW01 eq. (29) and the facts the estimators ask about it (see
doc/developers/architecture.rst). Coordinate-wise functions act on each output;
softmax acts on rows.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_softmax, logit, logsumexp, rel_entr, softmax, xlogy

from ._codes import PhiCode

# Softmax targets are rows of the simplex up to this error in their sums: float32
# probabilities sum to 1 only to about 1e-7.
SIMPLEX_TOLERANCE = 1e-6


def _softplus(a, slope=1.0):
    # ln(1 + e^{slope a}) / slope, without forming slope a (which may overflow).
    with np.errstate(over="ignore"):
        return np.maximum(a, 0.0) + np.log1p(np.exp(-slope * np.abs(a))) / slope


def _bernoulli_loss(z, a, slope=1.0):
    # Matching loss of y_hat = 1 / (1 + e^{-slope a}): z ln(z / y_hat) + (1-z) ln(...)
    # written with softplus of the activation so it stays finite when y_hat
    # saturates (and 0, not 0 inf, for a target at the end that y_hat approaches).
    return (slope * (z * _softplus(-a, slope) + (1 - z) * _softplus(a, slope))
            + xlogy(z, z) + xlogy(1 - z, 1 - z))


def _half_log1p_square(a):
    # 0.5 * log(1 + a^2) without overflow for huge |a|.
    big = np.abs(a) > 1
    safe = np.where(big, a, 1.0)
    return np.where(big, np.log(np.abs(safe)) + 0.5 * np.log1p((1 / safe) ** 2),
                    0.5 * np.log1p(np.where(big, 0.0, a) ** 2))


def _loss_identity(y, a):
    return 0.5 * (y - a) ** 2


def _loss_logistic(y, a):
    return _bernoulli_loss(y, a)


def _loss_tanh(y, a):
    # L_tanh(y, a) = L_logistic((1 + y) / 2, 2a).
    return _bernoulli_loss(0.5 * (1 + y), a, slope=2.0)


# pi / 2 as the double nearest it and the rest.
HALF_PI_HIGH, HALF_PI_LOW = np.pi / 2, 6.123233995736766e-17


def _loss_arctan(y, a):
    # (y_hat - y) tan(y_hat) + ln(cos y_hat / cos y) with tan(y_hat) = a. Near the
    # ends of the range y_hat - y and cos y are differences from +-pi/2, taken from
    # pi/2 in two parts: arctan a = sign(a) pi/2 - arctan(1/a) for |a| > 1, and
    # cos y = sin(pi/2 - |y|).
    far, side = np.abs(a) > 1.0, np.sign(a)
    gap = np.where(far, (side * HALF_PI_HIGH - y) + side * HALF_PI_LOW
                   - np.arctan(1.0 / np.where(far, a, 1.0)), np.arctan(a) - y)
    log_cos_y = np.where(np.abs(y) > 1.0,
                         np.log(np.sin((HALF_PI_HIGH - np.abs(y)) + HALF_PI_LOW)),
                         np.log(np.cos(y)))
    return a * gap - _half_log1p_square(a) - log_cos_y


def _loss_exp(y, a):
    # y ln y - y a - y + e^a = y (e^d - 1 - d) with d = a - ln y: no cancellation near
    # the exact fit, and no overflow where the loss is finite (e^a at y = 0).
    positive = y > 0
    with np.errstate(over="ignore"):
        d = a - _log(np.where(positive, y, 1.0))
        return np.where(positive, y * (np.expm1(d) - d), np.exp(a))


def _loss_softmax(y, a):
    # (A class of target 0 adds nothing, however far below the others its
    # activation: log_softmax may be -inf there.)
    with np.errstate(over="ignore"):
        log_y_hat = np.where(y > 0, log_softmax(a, axis=-1), 0.0)
    return np.sum(xlogy(y, y) - y * log_y_hat, axis=-1, keepdims=True)


def _loss_sign(y, a):
    return np.maximum(0.0, -y * a)


def _sign(a):
    return np.where(a > 0, 1.0, -1.0)


# Potentials P_phi with phi = grad P_phi (KW01 eq. 2).


def _potential_identity(a):
    return 0.5 * a**2


def _potential_tanh(a):
    # ln cosh a = |a| + ln(1 + e^{-2|a|}) - ln 2, finite for huge |a|.
    return np.abs(a) + np.log1p(np.exp(-2 * np.abs(a))) - np.log(2.0)


def _potential_arctan(a):
    # About pi |a| / 2 - ln |a| for large |a|: +inf at +-inf (not inf - inf).
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(a), np.inf,
                        a * np.arctan(a) - _half_log1p_square(a))


def _potential_softmax(a):
    return logsumexp(a, axis=-1, keepdims=True)


# Matching losses from the predictions y_hat = phi(a); rel_entr gives 0 ln 0 = 0 and
# y ln(y / 0) = inf, the conventions of KW01 Example 2.


def _prediction_loss_logistic(y, y_hat):
    return rel_entr(y, y_hat) + rel_entr(1 - y, 1 - y_hat)


def _prediction_loss_tanh(y, y_hat):
    return 0.5 * (rel_entr(1 + y, 1 + y_hat) + rel_entr(1 - y, 1 - y_hat))


def _prediction_loss_arctan(y, y_hat):
    return (y_hat - y) * np.tan(y_hat) + np.log(np.cos(y_hat) / np.cos(y))


def _prediction_loss_exp(y, y_hat):
    return rel_entr(y, y_hat) - y + y_hat


def _prediction_loss_softmax(y, y_hat):
    return np.sum(rel_entr(y, y_hat), axis=-1, keepdims=True)


def _log(y):
    with np.errstate(divide="ignore"):
        return np.log(y)


def _softmax(a):
    return softmax(a, axis=-1)


def _log_softmax(a):
    return log_softmax(a, axis=-1)


def _probability_tanh(a):
    # (1 + tanh a) / 2 = logistic(2a), without the cancellation of 1 + tanh a.
    return expit(2.0 * a)


@dataclass(frozen=True, kw_only=True)
class TransferFunction:
    """A transfer function phi with its potential and matching loss.

    Attributes
    ----------
    name : str
        Constructor string (``phi=name``).
    code : PhiCode
        Kernel dispatch code.
    transfer : callable
        ``transfer(A)`` maps activations of shape (m, k) to predictions.
    potential : callable
        ``potential(A)``: P_phi of each entry (for softmax, of each row), with
        phi = grad P_phi.
    loss : callable
        ``loss(Y, A)`` is the matching loss L_phi(y, phi(a)) of each entry (for
        softmax, of each row), computed from the activations (KW01 eq. 16).
    prediction_loss : callable or None
        ``prediction_loss(Y, Y_hat)``, the same loss from the predictions (``None``
        for sign, whose predictions do not determine the loss).
    inverse : callable or None
        ``inverse(Y)``, an activation a with phi(a) = y (for softmax, the one with
        ``a = ln y``; ``None`` for sign).
    low, high : float
        Range of the targets.
    closed : bool
        Whether the end points belong to the range (arctan's do not).
    regression, classification : bool
        Which estimators accept it.
    c : float or None
        c_phi of KW01 eq. (29): ``sup ||y - y_hat||^2 / (2 L_phi(y, y_hat))``
        (``inf`` when unbounded, ``None`` for sign, which has no matching loss in
        the sense of eq. 2).
    rowwise : bool
        Whether phi acts on whole rows (softmax): its targets are rows of the
        probability simplex, one output per class, and its loss one value per row.
    threshold : bool
        Whether phi is a threshold (sign): its derivative is 0, so there is no
        implicit update (KW01 eq. 22), no square loss to descend, no clipping.
    probability : callable or None
        ``probability(A)``: the classifier's probabilities from activations, of
        each output (one-vs-rest, normalized by the classifier), or of each row
        for a rowwise phi; ``None`` when phi gives none (sign).
    log_probability : callable or None
        ``log_probability(A)``, the log of ``probability`` where it has a more
        accurate form (softmax), else ``None``.
    """

    name: str
    code: PhiCode
    transfer: Callable
    potential: Callable
    loss: Callable
    prediction_loss: Callable | None = None
    inverse: Callable | None = None
    low: float
    high: float
    closed: bool = True
    regression: bool
    classification: bool
    c: float | None
    rowwise: bool = False
    threshold: bool = False
    probability: Callable | None = None
    log_probability: Callable | None = None

    def sample_loss(self, Y, A):
        """Matching loss summed over outputs: one value per sample."""
        return np.sum(self.loss(Y, A), axis=1)

    def activation_bounds(self, Y):
        """[low, high] for activations whose predictions phi(a) lie in [-Y, Y].

        Clipping predictions to [-Y, Y] (GA^Y, KW01 §4) clips the activations of a
        coordinate-wise increasing phi to this interval.
        """
        low = self.inverse(np.array(-Y)) if -Y > self.low else -np.inf
        high = self.inverse(np.array(Y)) if Y < self.high else np.inf
        return float(low), float(high)

    def range_text(self):
        if self.rowwise:
            return "rows of the probability simplex (non-negative, summing to 1)"
        left, right = ("[", "]") if self.closed else ("(", ")")
        return f"{left}{self.low:.6g}, {self.high:.6g}{right}"

    def range_violation(self, values):
        """None if all values lie in the range of phi (softmax: along the last
        axis), else what is wrong with them, for an error message."""
        if self.rowwise:
            columns = values.shape[-1] if values.ndim >= 1 else 0
            if columns < 2:
                return f"has {columns} column(s), not one per class (at least 2)"
            if np.any(values < 0):
                return f"has negative values (down to {values.min():.6g})"
            sums = values.sum(axis=-1).ravel()
            worst = sums[np.argmax(np.abs(sums - 1.0))]
            if abs(worst - 1.0) > SIMPLEX_TOLERANCE:
                return (f"rows must sum to 1 within {SIMPLEX_TOLERANCE:g}, but a row "
                        f"sums to {worst:.6g}")
            return None
        return None if np.all(self.inside(values)) else (
            f"has values in [{values.min():.6g}, {values.max():.6g}]")

    def inside(self, values):
        """Elementwise, whether values (an array, or one number) lie in the range of a
        coordinate-wise phi (NaN does not)."""
        if self.closed:
            return (values >= self.low) & (values <= self.high)
        return (values > self.low) & (values < self.high)

    def in_range(self, values):
        """Whether all values lie in the range of phi (softmax: along the last axis)."""
        return self.range_violation(values) is None

    def check_targets(self, Y):
        """Raise ValueError if targets Y (m, k) lie outside the range of phi."""
        violation = self.range_violation(Y)
        if violation is not None:
            raise ValueError(
                f"phi={self.name!r} predicts values in {self.range_text()}, but y "
                f"{violation}. Rescale y into that range or choose another phi "
                "(phi='identity' accepts any real target)."
            )


PHI = {
    entry.name: entry
    for entry in [
        TransferFunction(
            name="identity", code=PhiCode.PHI_IDENTITY, transfer=lambda a: a.copy(),
            potential=_potential_identity, loss=_loss_identity,
            prediction_loss=_loss_identity, inverse=lambda y: y.copy(),
            low=-np.inf, high=np.inf, regression=True, classification=False, c=1.0),
        # c = sup phi' = 1/4 (KW01 Example 6, one-dimensional case).
        TransferFunction(
            name="logistic", code=PhiCode.PHI_LOGISTIC, transfer=expit,
            potential=_softplus, loss=_loss_logistic,
            prediction_loss=_prediction_loss_logistic, inverse=logit, low=0.0,
            high=1.0, regression=True, classification=True, c=0.25,
            probability=expit),
        # c = sup tanh' = tanh'(0) = 1. HKW Table I prints 1/2 for tanh; the ratio of
        # eq. (29) tends to 1 near y = y_hat = 0, so 1/2 is too small.
        TransferFunction(
            name="tanh", code=PhiCode.PHI_TANH, transfer=np.tanh,
            potential=_potential_tanh, loss=_loss_tanh,
            prediction_loss=_prediction_loss_tanh, inverse=np.arctanh, low=-1.0,
            high=1.0, regression=True, classification=True, c=1.0,
            probability=_probability_tanh),
        TransferFunction(
            name="arctan", code=PhiCode.PHI_ARCTAN, transfer=np.arctan,
            potential=_potential_arctan, loss=_loss_arctan,
            prediction_loss=_prediction_loss_arctan, inverse=np.tan,
            low=-np.pi / 2, high=np.pi / 2, closed=False, regression=True,
            classification=False, c=1.0),
        # The ratio of eq. (29) is about y_hat for large y, y_hat: no finite c.
        TransferFunction(
            name="exp", code=PhiCode.PHI_EXP, transfer=np.exp, potential=np.exp,
            loss=_loss_exp, prediction_loss=_prediction_loss_exp, inverse=_log,
            low=0.0, high=np.inf, regression=True, classification=False, c=np.inf),
        # c = 1/2, not the 1/4 of KW01 Example 6: near y = y_hat = (1/2, 1/2) the
        # ratio of eq. (29) tends to 1/2. Pinsker's inequality gives
        # L >= ||y - y_hat||_1^2 / 2 >= ||y - y_hat||_2^2 (the entries of y - y_hat
        # sum to 0), hence c <= 1/2; Example 6's L >= 2 ||y - y_hat||_2^2 is false.
        TransferFunction(
            name="softmax", code=PhiCode.PHI_SOFTMAX, transfer=_softmax,
            potential=_potential_softmax, loss=_loss_softmax,
            prediction_loss=_prediction_loss_softmax, inverse=_log, low=0.0,
            high=1.0, regression=True, classification=True, c=0.5, rowwise=True,
            probability=_softmax, log_probability=_log_softmax),
        # Perceptron / normalized Winnow: the linear hinge loss (slides), half the
        # divergence of the potential |a|; no eq. (29) constant.
        TransferFunction(
            name="sign", code=PhiCode.PHI_SIGN, transfer=_sign, potential=np.abs,
            loss=_loss_sign, low=-1.0, high=1.0, regression=False,
            classification=True, c=None, threshold=True),
    ]
}

REGRESSION_PHI = sorted(name for name, phi in PHI.items() if phi.regression)
CLASSIFICATION_PHI = sorted(name for name, phi in PHI.items() if phi.classification)
