"""The parameterization functions psi: the weights are Omega = psi(Theta), row by
row.

Each psi is one class holding all its formulas (weights, potential, divergence of
KW01 eq. 19, inverse, the row bound of eq. 28; :class:`Parameterization` lists
them) and one instance, its registry entry ``PSI[name]``, holding its facts; the
compiled half of each psi is its branches in ``_src/psi.pxi``
(doc/developers/compiled_core.rst). The modules follow the families of the papers:

* ``gradient_descent``: identity (GD, Widrow-Hoff);
* ``eg``: softmax (EG) and eg_pm (EG±, HKW §III);
* ``egu``: exp (EGU);
* ``burg``: the Burg entropy;
* ``pnorm``: the p-norm algorithm;
* ``geodesic``: sphere and simplex (KMWW Examples 2, 3).

``PSI`` holds the entries that these modules define, in the order of their kernel
codes: a psi is registered by being defined here, in a module of its family. This
package knows no estimator: the estimators ask an entry's fields, never a psi's
name.
"""

from .._registry import registry
from ._entry import Parameterization

PSI = registry(__name__, __path__, Parameterization)

__all__ = ["PSI", "Parameterization"]
