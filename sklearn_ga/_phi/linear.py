"""phi = identity: linear regression, whose matching loss is the square loss / 2."""

import numpy as np

from .._codes import PhiCode
from ._entry import TransferFunction


class Identity(TransferFunction):
    """phi(a) = a; P = a^2 / 2; L = (y - a)^2 / 2; c = 1."""

    def transfer(self, A):
        return A.copy()

    def potential(self, A):
        return 0.5 * A**2

    def loss(self, Y, A):
        return 0.5 * (Y - A) ** 2

    def prediction_loss(self, Y, Y_hat):
        return self.loss(Y, Y_hat)

    def inverse(self, Y):
        return Y.copy()


IDENTITY = Identity(
    name="identity", code=PhiCode.PHI_IDENTITY, low=-np.inf, high=np.inf,
    regression=True, classification=False, c=1.0)
