"""phi = softmax on rows of the simplex: multiclass logistic regression, whose
matching loss is the cross-entropy (KW01 Examples 2, 6)."""

import numpy as np
from scipy.special import log_softmax, logsumexp, rel_entr, softmax, xlogy

from .._codes import PhiCode
from ._entry import TransferFunction, log_of


class Softmax(TransferFunction):
    """phi(a) = e^a / sum e^a; P = ln sum e^a, on whole rows.

    c = 1/2, not the 1/4 of KW01 Example 6: near y = y_hat = (1/2, 1/2) the ratio
    of eq. (29) tends to 1/2. Pinsker's inequality gives L >= ||y - y_hat||_1^2 / 2
    >= ||y - y_hat||_2^2 (the entries of y - y_hat sum to 0), hence c <= 1/2;
    Example 6's L >= 2 ||y - y_hat||_2^2 is false.
    """

    def transfer(self, A):
        return softmax(A, axis=-1)

    def potential(self, A):
        return logsumexp(A, axis=-1, keepdims=True)

    def loss(self, Y, A):
        # (A class of target 0 adds nothing, however far below the others its
        # activation: log_softmax may be -inf there.)
        with np.errstate(over="ignore"):
            log_y_hat = np.where(Y > 0, log_softmax(A, axis=-1), 0.0)
        return np.sum(xlogy(Y, Y) - Y * log_y_hat, axis=-1, keepdims=True)

    def prediction_loss(self, Y, Y_hat):
        return np.sum(rel_entr(Y, Y_hat), axis=-1, keepdims=True)

    def inverse(self, Y):
        return log_of(Y)

    def probability(self, A):
        return softmax(A, axis=-1)

    def log_probability(self, A):
        return log_softmax(A, axis=-1)


SOFTMAX = Softmax(
    name="softmax", code=PhiCode.PHI_SOFTMAX, low=0.0, high=1.0, regression=True,
    classification=True, c=0.5, rowwise=True)
