"""phi = arctan on (-pi/2, pi/2): a bounded transfer whose range excludes its
ends."""

import numpy as np

from .._codes import PhiCode
from ._entry import TransferFunction

# pi / 2 as the double nearest it and the rest.
HALF_PI_HIGH, HALF_PI_LOW = np.pi / 2, 6.123233995736766e-17


def _half_log1p_square(a):
    # 0.5 * log(1 + a^2) without overflow for huge |a|.
    big = np.abs(a) > 1
    safe = np.where(big, a, 1.0)
    return np.where(big, np.log(np.abs(safe)) + 0.5 * np.log1p((1 / safe) ** 2),
                    0.5 * np.log1p(np.where(big, 0.0, a) ** 2))


class Arctan(TransferFunction):
    """phi(a) = arctan a; P = a arctan a - ln(1 + a^2) / 2; c = 1."""

    def transfer(self, A):
        return np.arctan(A)

    def potential(self, A):
        # About pi |a| / 2 - ln |a| for large |a|: +inf at +-inf (not inf - inf).
        with np.errstate(invalid="ignore"):
            return np.where(np.isinf(A), np.inf,
                            A * np.arctan(A) - _half_log1p_square(A))

    def loss(self, Y, A):
        # (y_hat - y) tan(y_hat) + ln(cos y_hat / cos y) with tan(y_hat) = a. Near
        # the ends of the range y_hat - y and cos y are differences from +-pi/2,
        # taken from pi/2 in two parts: arctan a = sign(a) pi/2 - arctan(1/a) for
        # |a| > 1, and cos y = sin(pi/2 - |y|).
        far, side = np.abs(A) > 1.0, np.sign(A)
        gap = np.where(far, (side * HALF_PI_HIGH - Y) + side * HALF_PI_LOW
                       - np.arctan(1.0 / np.where(far, A, 1.0)), np.arctan(A) - Y)
        log_cos_y = np.where(np.abs(Y) > 1.0,
                             np.log(np.sin((HALF_PI_HIGH - np.abs(Y)) + HALF_PI_LOW)),
                             np.log(np.cos(Y)))
        return A * gap - _half_log1p_square(A) - log_cos_y

    def prediction_loss(self, Y, Y_hat):
        return (Y_hat - Y) * np.tan(Y_hat) + np.log(np.cos(Y_hat) / np.cos(Y))

    def inverse(self, Y):
        return np.tan(Y)


ARCTAN = Arctan(
    name="arctan", code=PhiCode.PHI_ARCTAN, low=-np.pi / 2, high=np.pi / 2,
    closed=False, regression=True, classification=False, c=1.0)
