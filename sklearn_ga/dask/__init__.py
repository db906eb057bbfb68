"""Parameter mixing on a Dask cluster: one GA model learned by every worker at once.

:class:`ParameterMixing` runs iterative parameter mixing (McDonald, Hall & Mann
2010; the scheme of Vowpal Wabbit's AllReduce, Agarwal et al. 2014): each pass,
every learner runs one on-line pass of the compiled loop (``partial_fit``) over
its contiguous share of the partitions, from the mixed model, where the share
lies; mixing tasks average their models, weighted by their rows, in a tree of
tasks that sums in the binary tree fixed by the shares' order, and map the mean
back into psi's domain (:func:`mix`). Only ``dask.distributed`` runs the work,
on the client in use. The modules: ``_mixing`` (a learner's pass, the mix, the
mixed model), ``_data`` (partitions, and scores on dask data), ``_placement``
(the worker that learns each partition, which never changes the model),
``_wrapper`` (the estimator); they import the package's estimators, never the
reverse. See doc/user_guide/distributed.rst.
"""

from ._mixing import mix
from ._wrapper import ParameterMixing

__all__ = ["ParameterMixing", "mix"]
