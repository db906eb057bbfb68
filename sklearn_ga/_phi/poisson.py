"""phi = exp on [0, inf): Poisson regression, whose matching loss is the Poisson
deviance / 2. The ratio of eq. (29) is about y_hat for large y, y_hat: no finite
c."""

import numpy as np
from scipy.special import rel_entr

from .._codes import PhiCode
from ._entry import TransferFunction, log_of


class Exponential(TransferFunction):
    """phi(a) = e^a = P(a); L = y ln(y / y_hat) - y + y_hat."""

    def transfer(self, A):
        return np.exp(A)

    def potential(self, A):
        return np.exp(A)

    def loss(self, Y, A):
        # y ln y - y a - y + e^a = y (e^d - 1 - d) with d = a - ln y: no
        # cancellation near the exact fit, and no overflow where the loss is finite
        # (e^a at y = 0).
        positive = Y > 0
        with np.errstate(over="ignore"):
            d = A - log_of(np.where(positive, Y, 1.0))
            return np.where(positive, Y * (np.expm1(d) - d), np.exp(A))

    def prediction_loss(self, Y, Y_hat):
        return rel_entr(Y, Y_hat) - Y + Y_hat

    def inverse(self, Y):
        return log_of(Y)


EXP = Exponential(
    name="exp", code=PhiCode.PHI_EXP, low=0.0, high=np.inf, regression=True,
    classification=False, c=np.inf)
