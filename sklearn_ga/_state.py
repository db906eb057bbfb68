"""What a fitted model holds between calls, and how a call keeps it true.

The compiled loop kept from one call to the next (``Kept``, ``KeptLoop``), the
descriptors through which ``coef_``, ``theta_`` and ``intercept_`` read it, the
lock that lets one call train at a time (``TrainingLock``), and the decorators
that make a call atomic (``fit_context``, ``one_row_first``).
"""

import functools
import threading

import scipy.sparse as sp
from sklearn.base import _fit_context


def _atomic(method):
    """Restore the estimator's attributes if ``method`` raises.

    Fitted arrays are not modified in place, except by the trial loop kept between
    calls, which ``_run`` restores itself (``TrialLoop.save``); so a shallow copy of
    ``__dict__`` completes the snapshot. It is put back key by key, never emptied:
    another thread may be predicting.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved, run = dict(self.__dict__), self._the_run()
        saved_run = run.snapshot()
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            for name in self.__dict__.keys() - saved.keys():
                del self.__dict__[name]
            self.__dict__.update(saved)
            run.restore(saved_run)
            raise

    return wrapper


class TrainingLock:
    """The lock that lets one call at a time train an estimator (``fit_context``).

    Two runs of one compiled loop at once would corrupt it (its buffers are
    reallocated, its terms written by both): a call waits for the one running to
    end. Reentrant, for a call that trains the estimator from inside a call that
    trains it. Copies and pickles of the estimator get a new lock.
    """

    __slots__ = ("lock",)

    def __init__(self):
        self.lock = threading.RLock()

    def __enter__(self):
        self.lock.acquire()

    def __exit__(self, *exception):
        self.lock.release()

    def __reduce__(self):
        return TrainingLock, ()


def _one_trainer(method):
    """Run ``method`` holding the estimator's :class:`TrainingLock`."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._training_lock():
            return method(self, *args, **kwargs)

    return wrapper


def _no_loop():
    return None


class Kept:
    """Compiled state kept for the next ``partial_fit``: the settings it was built
    for (``key``) and the read-only views of its parameters that the model gives
    out (``theta``, ``intercept``).

    Not copied or pickled: the estimator's ``__getstate__`` saves the terms.
    """

    __slots__ = ("key", "theta", "intercept")

    def __init__(self, key, theta, intercept):
        self.key, self.theta, self.intercept = key, theta, intercept

    def holds(self, theta, intercept, key):
        """Whether the next call can continue this state: the model's parameters
        are still these views, and its settings those of ``key``."""
        return self.theta is theta and self.intercept is intercept and self.key == key

    def __reduce__(self):
        return _no_loop, ()


class KeptLoop(Kept):
    """The trial loop of the last call (:class:`Kept`), the weights ``coef_`` once
    read, the values of the parameters at the end of the last call that succeeded
    (``params``; None before) and the targets of one row by label (``targets``, a
    classifier's, made by its first one-row call).

    Another thread may predict while a call trains the loop: ``generation`` is odd
    while a call writes the terms (:meth:`writing`), and weights read then, or
    while one started, are never kept for later readers (``cached`` holds the
    generation they were read in).
    """

    __slots__ = ("loop", "generation", "cached", "averaging", "params", "targets")

    def __init__(self, key, loop, theta, intercept, averaging=False):
        super().__init__(key, theta, intercept)
        self.loop, self.generation, self.cached = loop, 0, None
        self.averaging = averaging
        self.params, self.targets = None, None

    def writing(self):
        """Called when a call starts writing the loop's terms, and when it stops."""
        self.generation += 1
        self.cached = None

    def _kept_weights(self):
        generation, cached = self.generation, self.cached
        if cached is not None and cached[0] == generation:
            return cached[1]
        return None

    def coef(self, shape_coef):
        """``coef_``: psi(theta_) from the loop's terms, O(kn), computed once (after
        the last call; during a call, at each read)."""
        weights = self._kept_weights()
        if weights is None:
            generation = self.generation
            weights = shape_coef(self._weights())
            weights.flags.writeable = False
            if generation % 2 == 0:  # (no call writing: for later readers too)
                self.cached = generation, weights
        return weights

    def columns(self, columns):
        """psi(theta_)[:, columns], the numbers of ``coef_``, O(k len(columns))."""
        weights = self._kept_weights()
        if weights is not None:
            return weights.reshape(self.theta.shape)[:, columns]
        return self._weights(columns)

    def _weights(self, columns=None):
        """The weights the model predicts with: the loop's, or their average."""
        if self.averaging:
            weights, _, count = self.loop.average(columns)
            if count:
                return weights
        return self.loop.weights(columns)

    def intercepts(self):
        """``intercept_`` of an averaging model: the mean of the intercepts (a
        read-only array), or None before the first averaged trial."""
        _, intercepts, count = self.loop.average([])
        if not count:
            return None
        intercepts.flags.writeable = False
        return intercepts


class _Weights:
    # BaseGA.coef_: the value a fit (or the user) set, if any, else psi(theta_) built
    # from the kept loop when first read after a call. A data descriptor rather than
    # __getattr__, through which every missing attribute (hasattr, getattr with a
    # default, as in scikit-learn's validation) would cost one more exception.
    # (No docstring: autodoc would list it besides the Attributes sections.)

    def __get__(self, model, owner=None):
        if model is None:
            return self
        fitted = model.__dict__
        if "coef_" in fitted:
            return fitted["coef_"]
        kept = _kept(model)
        if kept is None:
            raise AttributeError(_missing(model))
        return kept.coef(model._shape_coef)

    def __set__(self, model, value):
        model._changed()  # (the one-row path predicts from the kept loop)
        model.__dict__["coef_"] = value

    def __delete__(self, model):
        if "coef_" not in model.__dict__:
            raise AttributeError(
                "coef_ is computed from theta_ and cannot be deleted"
                if _kept(model) is not None else _missing(model))
        del model.__dict__["coef_"]


def _kept(model):
    run = model.__dict__.get("_run")
    return None if run is None else run.kept


def _first(value, default):
    return default if value is None else value


def _missing(model, name="coef_"):
    return f"{type(model).__name__!r} object has no attribute {name!r}"


class _Parameters:
    # BaseGA.theta_ and intercept_: the arrays of the last call (read-only; the kept
    # loop's own), or arrays the user assigned: validated, copied, read-only, and
    # coef_ computed from them at once (Engine._assign), so that coef_, predictions,
    # copies and pickles always agree with theta_. The next call builds its loop on
    # them. (No docstring: autodoc would list it besides the Attributes sections.)

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, model, owner=None):
        if model is None:
            return self
        try:
            value = model.__dict__[self.name]
        except KeyError:
            raise AttributeError(_missing(model, self.name)) from None
        if self.name == "intercept_":
            # An averaging model predicts with the mean of its intercepts; its own
            # stay the loop's (the engine reads them from __dict__).
            kept = _kept(model)
            if kept is not None and kept.averaging and kept.intercept is value:
                return _first(kept.intercepts(), value)
            run = model.__dict__.get("_run")
            averages = None if run is None else run.averages
            if averages is not None and averages[2][0] > 0:
                return averages[1] / averages[2]
        return value

    def __set__(self, model, value):
        with model._training_lock():  # (not while a call trains the model)
            model._assign(self.name, value)

    def __delete__(self, model):
        raise AttributeError(f"{self.name} cannot be deleted; call fit to start over.")


def read_only(*arrays):
    """Read-only views of ``arrays``: given out while a kept loop writes them."""
    views = [array.view() for array in arrays]
    read_only_in_place(*views)
    return views


def read_only_in_place(*arrays):
    for array in arrays:
        array.flags.writeable = False


def batch_columns(X):
    """The column indices of a CSR batch's entries, for ``TrialLoop.save``; None
    for dense X."""
    return X.indices[:X.indptr[-1]] if sp.issparse(X) else None


def fit_context(method):
    """Validate hyper-parameters (scikit-learn's constraints), then run atomically,
    one training call at a time (:class:`TrainingLock`)."""
    return _fit_context(prefer_skip_nested_validation=True)(
        _one_trainer(_atomic(method)))


def one_row_first(partial_fit):
    """``partial_fit`` that first tries the one-row fast path (``_one_row_trial``,
    which either completes the call or changes nothing), and otherwise runs under
    :func:`fit_context`. Anything that guards a call (a lock) guards both."""
    checked = fit_context(partial_fit)

    @functools.wraps(partial_fit)
    def wrapper(self, X, y, *args, **kwargs):
        if ((not (args or kwargs)
             or (not any(arg is not None for arg in args)
                 and not any(arg is not None for arg in kwargs.values())))
                and self._one_row_trial(X, y)):
            return self
        return checked(self, X, y, *args, **kwargs)

    return wrapper
