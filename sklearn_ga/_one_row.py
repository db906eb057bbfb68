"""The one-row path: a stream's test-then-train step without the general path's
per-call work.

A one-row ``partial_fit`` of the general path validates the call, prepares the
rates from the row, saves the kept loop, runs a pass of one trial, checks the
loss against the runaway reference and sets the fitted attributes: about a
hundred times the trial itself. :class:`OneRowPath` does the same in one compiled
call (:class:`sklearn_ga._kernel.OneRow`) wherever the outcome is known to be the
general path's:

* the call is ``partial_fit(X, y)`` of one row of the fitted width, a
  C-contiguous float64 ndarray or a canonical float64 CSR matrix of int32
  indices, to a model fitted without feature names (nor ``coef_`` set by hand)
  and without ``verbose``, whose parameters have not been set since its last
  call; y a target that ``_one_row_targets`` encodes; no step weights (sample or
  class weights);
* the row leaves the rates as they are: a constant ``eta``, or a row that does not
  raise the bound of ``eta="theory"`` (whose rate would then fall, which the
  general path computes), scaled by ``invscaling``'s schedule;
* a CSR row runs as run_csr would run it: not output by output nor with theta
  outputs innermost (k > 1 outputs of a coordinate-wise phi; a full row of a
  multi-output psi = identity), which the general path does;
* the trial succeeds and does not run away (see ``may_run_away``).

Anything else, including every error, goes to the general path, which then does
(or reports) what it always does; a trial that failed is undone first. The
predictions of one row read the activations from the loop's terms in the same
way (an averaging model's, from the averages ``coef_``, for dense rows only).
The path is built at the first one-row call after a general call, and
dropped when a parameter is set (``Engine.__setattr__``) or a general call
changes the model (any ``partial_fit`` or ``fit`` that does not take it).
"""

import operator

import numpy as np
import scipy.sparse as sp

from ._kernel import OneRow, invscaling_factor
from ._passes import RUNAWAY_RATIO, _start_weights, may_run_away
from ._rates import InvScaling, Rates, TheoryRates

_NDARRAY = np.ndarray
# The CSR types and the index dtype that the one-row path reads (others, even
# equal, take the general path).
CSR_TYPES = (sp.csr_matrix, sp.csr_array)
_INT32 = np.dtype(np.int32)
# A model whose U_ may double (BaseGA._double_scale) sends every DOUBLING_CHECK-th
# trial to the general path, which checks the weights after it.
DOUBLING_CHECK = 1024


def one_row(X):
    """Whether X is one row of a type the path may read (its other checks are
    the path's): the test that keeps batches from building it."""
    return ((type(X) is _NDARRAY and X.ndim == 2) or type(X) in CSR_TYPES) and (
        X.shape[0] == 1)


def one_row_path(model):
    """The model's :class:`OneRowPath`, built if it has none; None if its state
    does not allow one, or a call is training it (the general path then runs)."""
    run = model._the_run()
    path = run.one_row
    if path is None:
        # Built from a model that no call is training (a prediction in another
        # thread takes the general path meanwhile): a call drops it at its end.
        lock = run.lock.lock
        if not lock.acquire(blocking=False):
            return None
        try:
            path = run.one_row = OneRowPath.of(model, run) or False
        finally:
            lock.release()
    return path or None


class OneRowPath:
    """The one-row calls of a model in its current state (see the module
    docstring). Not copied or pickled (``Engine.__getstate__``): a copy builds its
    own."""

    __slots__ = ("run", "kept", "calls", "pair", "power_t", "measured", "predicts",
                 "lock", "doubles")

    @classmethod
    def of(cls, model, run):
        """The path of ``model`` in its ``run``, or None where the general path must
        run."""
        fitted = model.__dict__
        kept = run.kept
        if (kept is None or kept.params is None or "coef_" in fitted
                or "feature_names_in_" in fitted or model.verbose
                or fitted["theta_"] is not kept.theta
                or fitted["intercept_"] is not kept.intercept
                or not all(map(operator.is_, model._param_values(), kept.params))
                or kept.key != model._loop_key()):
            return None
        return cls(model, run)

    def __init__(self, model, run):
        self.run, self.kept, self.lock = run, run.kept, run.lock.lock
        kept = self.kept
        k, n = kept.theta.shape
        rates = model._rates(False, n)
        self.power_t = None
        if isinstance(rates, InvScaling):
            self.power_t, rates = rates.power_t, rates.base
        self.pair = rates.current()
        bound_limit, growth = np.inf, 0.0
        if isinstance(rates, TheoryRates):
            limits = rates.one_row_limits()
            if limits is None:
                self.pair = None
            else:
                bound_limit, growth = limits
        elif type(rates) is not Rates:
            self.pair = None
        if getattr(model, "class_weight", None) is not None:
            self.pair = None  # (class weights scale the steps: the general path)
        checked = may_run_away(model.psi, model.phi)
        start = (_start_weights(model._configuration().loop_psi.name, n,
                                model._scale(), float(model.p))
                 if checked else None)
        self.doubles = model._doubles()
        self.measured = model.alpha == 0
        # (An averaging model predicts with the averages, not the loop's weights.)
        self.predicts = not kept.averaging
        self.calls = OneRow(kept.loop, start, RUNAWAY_RATIO if checked else 0.0,
                            bound_limit, growth, model._average_of(False))

    def learn(self, model, X, y):
        """Run ``partial_fit(X, y)`` if this path can (see the module docstring);
        True if done, else False with nothing changed."""
        if self.pair is None:
            return False
        dense = type(X) is _NDARRAY
        if not (dense or (type(X) in CSR_TYPES and X.indices.dtype is _INT32)):
            return False
        # (A batch, for one, fails the compiled call's shape test.)
        target = model._one_row_targets(y, self.kept)
        if target is None:
            return False
        run = self.run
        with self.lock:
            if run.one_row is not self:  # (another call's since)
                return False
            t = run.t
            if self.doubles and not (t + 1) % DOUBLING_CHECK:
                return False
            eta, intercept_eta = self.pair
            if self.power_t is not None:
                scale = invscaling_factor(t + 1, self.power_t)
                eta, intercept_eta = eta * scale, intercept_eta * scale
            try:
                if dense:
                    sums = self.calls.learn(X, target, eta, intercept_eta, t,
                                            run.cumulative_loss, run.initial_loss)
                else:
                    sums = self.calls.learn_csr(
                        X.data, X.indices, X.indptr, X.shape[1], target, eta,
                        intercept_eta, t, run.cumulative_loss, run.initial_loss)
            except (ValueError, TypeError, BufferError):  # (X is not float64 rows)
                return False
            if sums is None:
                return False
            kept = self.kept
            # Weights read before, or while, the trial ran are not kept for later.
            kept.generation += 2
            kept.cached = None
            run.t, run.n_iter = t + 1, 1
            run.cumulative_loss, run.initial_loss, path = sums
            run.path = path if self.measured else np.nan
            model.__dict__["validation_scores_"] = None
            return True
