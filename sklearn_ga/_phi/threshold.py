"""phi = sign: the Perceptron (psi = identity) and normalized Winnow (psi =
softmax), whose loss is the linear hinge loss max(0, -y a) (slides): half the
divergence of the potential |a|. No eq. (29) constant, no probabilities."""

import numpy as np

from .._codes import PhiCode
from ._entry import TransferFunction


class Sign(TransferFunction):
    """phi(a) = sign a (a = 0 counts as -1: a mistake on either label)."""

    def transfer(self, A):
        return np.where(A > 0, 1.0, -1.0)

    def potential(self, A):
        return np.abs(A)

    def loss(self, Y, A):
        return np.maximum(0.0, -Y * A)


SIGN = Sign(
    name="sign", code=PhiCode.PHI_SIGN, low=-1.0, high=1.0, regression=False,
    classification=True, c=None, threshold=True)
