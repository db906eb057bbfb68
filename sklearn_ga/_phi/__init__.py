"""The transfer functions phi and their matching losses (KW01 eq. 2, 16).

Each phi is one class holding all its formulas (transfer, potential, the matching
loss from the activations and from the predictions, inverse, probabilities;
:class:`TransferFunction` lists them) and one instance, its registry entry
``PHI[name]``, holding its facts (range, c_phi of eq. 29, the estimators that
accept it); the compiled half of each phi is its branches in ``_src/phi.pxi``.
Coordinate-wise functions act on each output; softmax acts on rows. The modules:

* ``linear``: identity (square loss);
* ``sigmoid``: logistic and tanh (relative entropies);
* ``arctan``;
* ``poisson``: exp (Poisson deviance);
* ``softmax``: the cross-entropy on rows of the simplex;
* ``threshold``: sign (the Perceptron's hinge at 0).

``PHI`` holds the entries these modules define, in the order of their kernel
codes: a phi is registered by being defined here.
"""

from .._registry import registry
from ._entry import TransferFunction

PHI = registry(__name__, __path__, TransferFunction)

REGRESSION_PHI = sorted(name for name, phi in PHI.items() if phi.regression)
CLASSIFICATION_PHI = sorted(name for name, phi in PHI.items() if phi.classification)

__all__ = ["CLASSIFICATION_PHI", "PHI", "REGRESSION_PHI", "TransferFunction"]
