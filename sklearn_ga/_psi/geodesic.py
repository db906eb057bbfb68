"""The geodesic psi: weights kept on a manifold and moved along its geodesics
(KMWW Examples 2, 3) instead of by the additive step of KW01 eq. (23). Their theta
is a point of the manifold up to a positive factor; they have no potential, and
KW01 Theorem 3 gives them no rate: the default rate takes the bound of the
additive psi whose step theirs is to first order."""

import numpy as np

from .._codes import PsiCode
from ._entry import Parameterization, Unbounded
from ._ranges import RANGE_TOLERANCE, check_on_simplex
from ._scaled_rows import unit_rows
from .eg import SOFTMAX
from .gradient_descent import IDENTITY

# Why KW01 Theorem 3 gives the geodesic psi no rate.
_NO_BOUND = ("Theorem 3 is about the additive update of KW01 eq. (23), and this psi "
             "moves the weights along geodesics (KMWW eq. 10)")


class Sphere(Unbounded, Parameterization):
    """Omega = U theta / ||theta||_2: weights on the sphere of radius U."""

    def weights(self, theta, U, p):
        # U theta / ||theta||_2, measured in units of max |theta| (no overflow).
        _, r = unit_rows(theta)
        return U * r / np.linalg.norm(r, axis=-1, keepdims=True)

    def inverse(self, omega, U, p):
        # Theta is omega up to a positive factor.
        norms = np.linalg.norm(omega, axis=-1)
        if np.any(np.abs(norms - U) > RANGE_TOLERANCE * U):
            raise ValueError(
                f"the weights of psi='sphere' lie on the sphere of radius U={U!r}; "
                f"got rows of l2 norm {np.round(norms, 12).tolist()!r}. Divide each "
                "row by its norm and multiply by U."
            )
        return np.array(omega, dtype=np.float64, copy=True)

    def row_bounds(self, X, U, p):
        return IDENTITY.row_bounds(X, U, p)  # (its step is GD's to first order)


class Simplex(Unbounded, Parameterization):
    """Omega = theta^2 / ||theta||_2^2: the simplex with the Fisher metric, theta =
    sqrt(omega) up to a factor (KMWW Example 3)."""

    def weights(self, theta, U, p):
        return SPHERE.weights(theta, 1.0, p) ** 2

    def inverse(self, omega, U, p):
        check_on_simplex(omega)
        return np.sqrt(omega)

    def row_bounds(self, X, U, p):
        return SOFTMAX.row_bounds(X, U, p)  # (its step is EG's to first order)


SPHERE = Sphere(
    name="sphere", code=PsiCode.PSI_SPHERE, hyperparameters=("U",), constrained=True,
    no_input_bound=_NO_BOUND,
    description="weights on the sphere of radius U, geodesic steps (KMWW Example 2)",
    weight_range="on the sphere of radius ``U``", geodesic=True, start=1.0,
    scale_norm=2.0, scale_fixed=True)
SIMPLEX = Simplex(
    name="simplex", code=PsiCode.PSI_SIMPLEX, constrained=True,
    no_input_bound=_NO_BOUND,
    description="weights on the probability simplex, geodesic steps of the Fisher "
                "metric (KMWW Example 3)", weight_range="on the probability simplex",
    geodesic=True, start=1.0)
