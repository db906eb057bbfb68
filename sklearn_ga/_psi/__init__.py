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

import importlib
import pkgutil

from ._entry import Parameterization


def _defined_entries():
    """The entries of the family modules (the public modules of this package)."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            family = importlib.import_module(f"{__name__}.{module.name}")
            yield from (value for value in vars(family).values()
                        if isinstance(value, Parameterization))


PSI = {entry.name: entry
       for entry in sorted({entry.name: entry for entry in _defined_entries()}.values(),
                           key=lambda entry: entry.code)}

__all__ = ["PSI", "Parameterization"]
