"""The sigmoids: phi = logistic on [0, 1] and tanh on [-1, 1], whose matching
losses are relative entropies (the log loss; on +-1 targets for tanh, the logistic
function of slope 2)."""

import numpy as np
from scipy.special import expit, logit, rel_entr, xlogy

from .._codes import PhiCode
from ._entry import TransferFunction


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


class Logistic(TransferFunction):
    """phi(a) = 1 / (1 + e^-a); P = ln(1 + e^a); c = sup phi' = 1/4 (KW01
    Example 6, one-dimensional case)."""

    def transfer(self, A):
        return expit(A)

    def potential(self, A):
        return _softplus(A)

    def loss(self, Y, A):
        return _bernoulli_loss(Y, A)

    def prediction_loss(self, Y, Y_hat):
        return rel_entr(Y, Y_hat) + rel_entr(1 - Y, 1 - Y_hat)

    def inverse(self, Y):
        return logit(Y)

    def probability(self, A):
        return expit(A)


class Tanh(TransferFunction):
    """phi(a) = tanh a; P = ln cosh a; c = sup tanh' = tanh'(0) = 1 (HKW Table I
    prints 1/2; the ratio of eq. (29) tends to 1 near y = y_hat = 0)."""

    def transfer(self, A):
        return np.tanh(A)

    def potential(self, A):
        # ln cosh a = |a| + ln(1 + e^{-2|a|}) - ln 2, finite for huge |a|.
        return np.abs(A) + np.log1p(np.exp(-2 * np.abs(A))) - np.log(2.0)

    def loss(self, Y, A):
        # L_tanh(y, a) = L_logistic((1 + y) / 2, 2a).
        return _bernoulli_loss(0.5 * (1 + Y), A, slope=2.0)

    def prediction_loss(self, Y, Y_hat):
        return 0.5 * (rel_entr(1 + Y, 1 + Y_hat) + rel_entr(1 - Y, 1 - Y_hat))

    def inverse(self, Y):
        return np.arctanh(Y)

    def probability(self, A):
        # (1 + tanh a) / 2 = logistic(2a), without the cancellation of 1 + tanh a.
        return expit(2.0 * A)


LOGISTIC = Logistic(
    name="logistic", code=PhiCode.PHI_LOGISTIC, low=0.0, high=1.0, regression=True,
    classification=True, c=0.25)
TANH = Tanh(
    name="tanh", code=PhiCode.PHI_TANH, low=-1.0, high=1.0, regression=True,
    classification=True, c=1.0)
