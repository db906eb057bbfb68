"""sklearn-ga: the general additive on-line learners of Kivinen & Warmuth.

GARegressor and GAClassifier run GA(psi, phi, Theta, eta): weights psi(Theta),
predictions phi(psi(Theta) x), and the update Theta <- Theta - eta (y_hat - y) x^T
whose loss is the matching loss of phi. sklearn_ga.losses and sklearn_ga.theory
compute the papers' losses, divergences, constants and bounds. See doc/ for the guide.
"""

from ._classifier import GAClassifier
from ._cv import GAClassifierCV, GARegressorCV
from ._phi import PHI
from ._psi import PSI
from ._regressor import GARegressor
from .losses import divergence, matching_loss, matching_loss_scorer, potential
from .theory import (
    hkw_theorem1,
    hkw_theorem2,
    input_bound,
    relative_loss_bound,
    theorem3_bound,
    theorem3_learning_rate,
    transfer_bound,
)

__version__ = "0.1.0.dev0"

# The package's types for skops.io.load(..., trusted=SKOPS_TRUSTED_TYPES): their state
# holds only NumPy arrays and Python scalars.
SKOPS_TRUSTED_TYPES = [
    f"{cls.__module__}.{cls.__qualname__}"
    for cls in (GAClassifier, GAClassifierCV, GARegressor, GARegressorCV)
]

__all__ = [
    "GAClassifier",
    "GAClassifierCV",
    "GARegressor",
    "GARegressorCV",
    "PHI",
    "PSI",
    "SKOPS_TRUSTED_TYPES",
    "__version__",
    "divergence",
    "hkw_theorem1",
    "hkw_theorem2",
    "input_bound",
    "matching_loss",
    "matching_loss_scorer",
    "potential",
    "relative_loss_bound",
    "theorem3_bound",
    "theorem3_learning_rate",
    "transfer_bound",
]
