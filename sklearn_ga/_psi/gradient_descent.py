"""psi = identity: gradient descent (Widrow-Hoff), the weights are the parameters."""

import numpy as np

from .._codes import PsiCode
from ._entry import Parameterization
from ._scaled_rows import squared_norms


class Identity(Parameterization):
    """Omega = Theta; P = ||theta||^2 / 2; b_{X,psi} = max ||x||_2^2."""

    def weights(self, theta, U, p):
        return np.array(theta, dtype=np.float64, copy=True)

    def potential(self, theta, U, p):
        return 0.5 * np.sum(theta**2, axis=-1)

    def divergence(self, theta_tilde, theta, U, p):
        return 0.5 * np.sum((theta_tilde - theta) ** 2, axis=-1)

    def inverse(self, omega, U, p):
        return np.array(omega, dtype=np.float64, copy=True)

    def row_bounds(self, X, U, p):
        return squared_norms(X)


IDENTITY = Identity(
    name="identity", code=PsiCode.PSI_IDENTITY, constrained=False,
    description="gradient descent (Widrow-Hoff)", weight_range="anywhere",
    bound_text="max ||x||_2^2 (KW01 Example 5)",
    blocks=True)
