"""Parameter mixing on a Dask cluster: one GA model learned by every worker at once.

:class:`ParameterMixing` runs iterative parameter mixing (McDonald, Hall & Mann
2010; the scheme of Vowpal Wabbit's AllReduce, Agarwal et al. 2014): each pass,
every partition's learner runs one on-line pass of the compiled loop
(``partial_fit``) from the mixed model, where the partition lives; the learners'
models are summed, weighted by their rows, in a fixed binary tree over the
partitions, and the next pass starts from their mean, mapped back into psi's
domain (:func:`mix`). Only ``dask.distributed`` runs the work, on the client in
use. The modules: ``_mixing`` (what a learner gives, how models are summed and
mixed), ``_data`` (partitions and the scores of dask data), ``_wrapper`` (the
estimator). See doc/user_guide/distributed.rst.
"""

from ._mixing import mix
from ._wrapper import ParameterMixing

__all__ = ["ParameterMixing", "mix"]
