"""What the River learners of :mod:`sklearn_ga.river` share: the features and
classes that the stream brought, the parameters Theta (k x n) and b, the compiled
loop over them and its one-row calls, ``learn_one``, ``learn_many``, the
predictions' activations and River's test parameters. (River itself is imported by
:mod:`sklearn_ga.river`, which names the extra to install.)"""

import math

import numpy as np
from sklearn.base import clone

from ._codes import Status
from ._kernel import OneRow
from ._passes import (
    RUNAWAY_RATIO,
    _start_weights,
    initial_model_loss,
    may_run_away,
    runaway,
)
from ._psi import PSI


def _canonical(names):
    """The features that one row brings, in an order that does not depend on the
    order of its dict: sorted (by repr, where the names do not compare), so that the
    columns, and the order of every sum, are the same for any order of the keys."""
    try:
        return sorted(names)
    except TypeError:
        return sorted(names, key=repr)


class _Learner:
    """What the two learners share: the features and classes that the stream brought,
    the parameters Theta (k x n) and b, the compiled loop over them and its one-row
    buffers; the parameters of both, ``learn_one``, ``learn_many`` and River's test
    parameters."""

    # The scikit-learn estimator that checks the parameters, builds the loop and
    # words its errors.
    _estimator = None

    def __init__(self, psi, phi, eta, U, p, update, loss, Y, fit_intercept):
        self.psi = psi
        self.phi = phi
        self.eta = eta
        self.U = U
        self.p = p
        self.update = update
        self.loss = loss
        self.Y = Y
        self.fit_intercept = fit_intercept
        self._start()

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"psi": "eg_pm"}

    def _start(self):
        """Check the parameters and set up an empty model."""
        if isinstance(self.eta, str):
            raise ValueError(
                f"eta={self.eta!r} is not available in sklearn_ga.river: "
                "eta='theory' sets the rate from the inputs of a first batch, which a "
                "stream does not have. Pass a positive number."
            )
        settings = self._estimator(
            psi=self.psi, phi=self.phi, eta=self.eta, U=self.U, p=self.p,
            update=self.update, loss=self.loss, Y=self.Y,
            fit_intercept=self.fit_intercept,
        )
        settings._validate_params()
        *_, low, high = settings._options()
        self._settings = settings
        self._intercept_only = clone(settings).set_params(psi="identity")
        self._clip = (low, high) if self.Y is not None else None
        self._classes = [] if self._multiclass else list(self._binary_classes)
        self._features = {}
        # One output for binary labels; for softmax one per class, the first kept
        # before its class comes.
        self._theta = np.zeros((1, 0))
        self._intercept = np.zeros(1)
        self._buffers(None)
        self.t_ = 0
        self.cumulative_loss_ = 0.0
        self._initial_loss_sum = 0.0

    def _buffers(self, terms):
        """The loop on the parameters (from ``terms`` if given) and the buffers of
        one row, its target and its sample weight."""
        k, n = self._theta.shape
        self._loop = self._trial_loop(self._theta, self._intercept, terms)
        # The row's features at their columns, and at column n those the model does
        # not hold (at weight 0), for predictions; the loop reads the first n.
        self._row = np.zeros((1, n + 1))
        self._x = self._row[:, :n]
        self._target = np.zeros((1, k))
        self._weight = np.ones(1)
        self._order = np.zeros(1, np.intp)
        self._coef = None
        # The one-row calls of the loop (learn_one, predict_one), in one compiled
        # call each where they succeed.
        self._calls = None
        if self._loop is not None:
            checked = may_run_away(self.psi, self.phi)
            start = (_start_weights(self.psi, n, float(self.U), float(self.p))
                     if checked and n else None)
            self._calls = OneRow(self._loop, start, RUNAWAY_RATIO if checked else 0.0,
                                 math.inf, 0.0, 0)
            self._rates = self._loop.rates

    def _trial_loop(self, theta, intercept, terms=None):
        """The compiled loop over (theta, intercept), or None where no trial changes
        anything: phi='softmax' with fewer than two classes predicts probability 1,
        a step of 0."""
        if self._multiclass and len(self._classes) < 2:
            return None
        # Without features the weights are empty and psi plays no part (a normalized
        # psi would divide by an empty normalizer): the intercept learns as it does
        # beside any psi.
        settings = self._settings if theta.shape[1] else self._intercept_only
        return settings._trial_loop(theta, intercept, float(self.eta), terms=terms)

    # -- pickling: the loop is built again from its terms --------------------------

    def __getstate__(self):
        state = {name: value for name, value in self.__dict__.items()
                 if name not in ("_loop", "_row", "_x", "_target", "_weight",
                                 "_order", "_coef", "_calls", "_rates")}
        state["_terms"] = None if self._loop is None else self._loop.terms()
        return state

    def __setstate__(self, state):
        terms = state.pop("_terms")
        self.__dict__.update(state)
        self._buffers(terms)

    # -- inputs --------------------------------------------------------------------

    def _values(self, items):
        """The values of dict items, as float64; a clear error for one that is not a
        number."""
        try:
            return np.fromiter(items.values(), np.float64, len(items))
        except (TypeError, ValueError):
            for name, value in items.items():
                try:
                    float(value)
                except (TypeError, ValueError):
                    raise ValueError(
                        f"{type(self).__name__} takes numbers, but feature {name!r} "
                        f"is {value!r}. Encode other features first (e.g. with River's "
                        "preprocessing.OneHotEncoder)."
                    ) from None
            raise

    def _check_finite(self, values):
        if not np.all(np.isfinite(values)):
            raise ValueError(
                f"Input x contains NaN or infinity; {type(self).__name__} needs finite "
                "feature values. The model was left as it was."
            )

    def _grown(self, names, labels):
        """``(features, theta, intercept)`` of the model once it holds the features
        ``names`` and the classes ``labels`` (new ones last, in order), without
        changing it; None if it holds them all."""
        new_names = _canonical([name for name in names if name not in self._features])
        new_labels = [label for label in dict.fromkeys(labels)
                      if label not in self._classes]
        if not new_names and not new_labels:
            return None
        k, n = self._theta.shape
        classes = self._classes + new_labels
        k_new = max(len(classes), 1) if new_labels else k
        start = PSI[self.psi].start
        theta = np.full((k_new, n + len(new_names)), start)
        intercept = np.zeros(k_new)
        theta[:k, :n] = self._theta
        intercept[:k] = self._intercept
        features = dict(self._features)
        features.update((name, n + offset) for offset, name in enumerate(new_names))
        return features, classes, theta, intercept

    # -- learning ------------------------------------------------------------------

    def learn_one(self, x, y, w=1.0):
        """Learn the features ``x`` (dict) and target or label ``y``: one trial.

        Parameters
        ----------
        x : dict
            Features by name; a feature missing is 0.
        y : float or label
            Regressor: a target in the range of ``phi``. Classifier: ``False`` /
            ``True`` (binary), any hashable label for ``phi="softmax"``.
        w : float, default=1.0
            Sample weight, >= 0: the trial's step is ``w * eta``.
        """
        if not 0.0 <= w < np.inf:
            raise ValueError(f"The sample weight w must be finite and >= 0; got {w!r}.")
        if (self._calls is not None and not self._is_new(y)
                and self._learn_fast(x, y, w)):
            return
        features = self._features
        try:
            columns = [features[name] for name in x]
        except KeyError:
            columns = None
        if columns is None or self._is_new(y):
            return self._learn_grown(x, y, w)
        values = self._values(x)
        self._encode(y, self._target[0])
        loop = self._loop
        if loop is None:
            self._count(1, 0.0)
            return
        row = self._row[0]
        row[columns] = values
        self._weight[0] = w
        loop.save()
        try:
            status, trials, loss = loop.run_dense(self._x, self._target, self._weight,
                                                  self._order)
            initial_loss = self._initial_loss(self._x, self._target, self._weight)
        finally:
            row[columns] = 0.0
        try:
            if status != Status.OK:
                self._check_finite(values)
                raise self._settings._divergence(self.t_ + 1, float(self.eta))
            self._count(1, loss, initial_loss)
        except ValueError:
            loop.restore()
            raise

    def _learn_fast(self, x, y, w):
        """``learn_one`` of a row of known features and label in one compiled call
        (:class:`~sklearn_ga._kernel.OneRow`); False, with nothing changed, if the
        row or its trial is anything else (``learn_one`` then says what)."""
        target = self._target[0]
        self._encode(y, target)
        sums = self._calls.learn_dict(x, self._features, target, *self._rates,
                                      self.t_, self.cumulative_loss_,
                                      self._initial_loss_sum, w)
        if sums is None:
            return False
        self.t_ += 1
        self.cumulative_loss_, self._initial_loss_sum, _ = sums
        self._coef = None
        return True

    def _learn_grown(self, x, y, w):
        """``_learn_one`` of a row that brings new features or a new class: the trial
        runs on new parameter arrays, which become the model's if it succeeds."""
        self._values(x)  # (a value that is not a number: before anything changes)
        if self._multiclass:
            try:
                hash(y)
            except TypeError:
                raise ValueError(f"A label must be hashable; got {y!r}.") from None
        features, classes, theta, intercept = self._grown(
            x, [y] if self._multiclass else [])
        saved = self.__dict__.copy()
        self._features, self._classes = features, classes
        self._theta, self._intercept = theta, intercept
        try:
            self._buffers(None)
            self.learn_one(x, y, w)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _initial_loss(self, X, Y, weights):
        """The loss of the model at Theta_1 on the rows X, the reference of the
        runaway check of the scikit-learn estimators (0 where a run of this psi and
        phi cannot run away while finite)."""
        if not may_run_away(self.psi, self.phi):
            return 0.0
        return initial_model_loss(X, Y, weights, self.psi, self.phi, float(self.U),
                                  float(self.p))

    def _count(self, trials, loss, initial_loss=0.0):
        """Count trials of this loss; the same divergence errors as the
        scikit-learn estimators' for a loss that overflows or runs away."""
        cumulative_loss = self.cumulative_loss_ + loss
        initial_loss += self._initial_loss_sum
        cause = (runaway(cumulative_loss, initial_loss)
                 if math.isfinite(cumulative_loss)
                 else "the sum of the losses overflowed")
        if cause:
            raise self._settings._divergence(self.t_ + trials, float(self.eta),
                                             cause=cause)
        self.t_ += trials
        self.cumulative_loss_, self._initial_loss_sum = cumulative_loss, initial_loss
        self._coef = None

    def learn_many(self, X, y, w=1.0):
        """Learn the rows of ``X`` in order, as ``learn_one`` would one by one.

        Parameters
        ----------
        X : pandas.DataFrame
            One row per sample, one column per feature (no missing values).
        y : pandas.Series
            Targets (regressor) or labels (classifier).
        w : float or pandas.Series, default=1.0
            Sample weights.
        """
        names = list(X.columns)
        if len(set(names)) != len(names):
            raise ValueError("X has columns of the same name; name each feature once.")
        values = X.to_numpy(dtype=np.float64)
        self._check_finite(values)
        targets = list(y)
        weights = (np.full(len(targets), float(w)) if np.ndim(w) == 0
                   else np.asarray(w, dtype=np.float64))
        if not len(targets) == values.shape[0] == weights.shape[0]:
            raise ValueError(
                f"X has {values.shape[0]} rows, y {len(targets)} and w "
                f"{weights.shape[0]}; they must have one per sample."
            )
        saved = self.__getstate__()
        try:
            start = 0
            while start < len(targets):
                labels = targets[start:start + 1] if self._multiclass else []
                grown = self._grown(names if start == 0 else [], labels)
                if grown is not None:
                    self._features, self._classes, self._theta, self._intercept = grown
                    self._buffers(None)
                # The rows up to the next one that brings a new class run together.
                end = start + 1
                while end < len(targets) and not self._is_new(targets[end]):
                    end += 1
                self._run_rows(names, values[start:end], targets[start:end],
                               weights[start:end])
                start = end
        except BaseException:
            self.__dict__.clear()
            self.__setstate__(saved)
            raise

    def _is_new(self, label):
        return self._multiclass and label not in self._classes

    def _run_rows(self, names, values, targets, weights):
        """One pass over rows of the given columns, the model holding them all."""
        m, (k, n) = values.shape[0], self._theta.shape
        Y = np.zeros((m, k))
        for row, target in zip(Y, targets, strict=True):
            self._encode(target, row)
        if self._loop is None:
            self._count(m, 0.0)
            return
        X = np.zeros((m, n))
        X[:, [self._features[name] for name in names]] = values
        if not np.all((weights >= 0.0) & (weights < np.inf)):
            raise ValueError("The sample weights w must be finite and >= 0.")
        status, trials, loss = self._loop.run_dense(X, Y, weights,
                                                    np.arange(m, dtype=np.intp))
        if status != Status.OK:
            raise self._settings._divergence(self.t_ + trials + 1, float(self.eta))
        self._count(m, loss, self._initial_loss(X, Y, weights))

    # -- prediction ----------------------------------------------------------------

    def _weights(self):
        """psi(Theta) with a column of zeros appended, where the features the model
        does not hold (column -1) are read."""
        if self._coef is None:
            k, n = self._theta.shape
            coef = np.zeros((k, n + 1))
            if self._loop is not None:
                coef[:, :n] = self._loop.weights()
            elif n:
                coef[:, :n] = PSI[self.psi].weights(self._theta, float(self.U),
                                                     float(self.p))
            self._coef = coef
        return self._coef

    def _activations(self, names, values):
        """Activations (m, k) of rows ``values`` (m, len(names)), clipped as GA^Y
        predicts (KW01 §4); features the model does not hold count 0.

        The sums run over the model's columns in order, whatever the order of the
        names: ties (a Perceptron's a = 0) do not depend on it.
        """
        features = self._features
        X = np.zeros((values.shape[0], len(features) + 1))
        X[:, [features.get(name, -1) for name in names]] = values
        return self._checked(X @ self._weights().T + self._intercept, values)

    def _activations_one(self, x, outputs=False):
        """The activations (k,) of the dict x, as ``_activations``, through the row
        buffer; with ``outputs``, phi of them where one compiled call gives them (a
        row of known features), else None."""
        if self._calls is not None:
            A = self._calls.activations_dict(x, self._features, outputs)
            if A is not None:
                return A[0]
        if outputs:
            return None
        values = self._values(x)
        features = self._features
        columns = [features.get(name, -1) for name in x]
        row = self._row[0]
        row[columns] = values
        try:
            A = self._weights() @ row + self._intercept
        finally:
            row[columns] = 0.0
        if -1 in columns:  # (they shared column n: check each)
            self._check_finite(values)
        return self._checked(A, values)

    def _checked(self, A, values):
        if not np.all(np.isfinite(A)):
            self._check_finite(values)
            raise ValueError(
                f"The activations of {type(self).__name__} overflowed on this input "
                "(the inputs are too large for the learned weights)."
            )
        return A if self._clip is None else np.clip(A, *self._clip)

    @property
    def weights(self):
        """The weights psi(Theta) of the features seen so far, by name (by class and
        name for ``phi="softmax"``)."""
        rows = [dict(zip(self._features, row, strict=True))
                for row in self._weights()[:, :-1].tolist()]
        return self._by_class(rows)

    @property
    def intercept(self):
        """The intercept b (by class for ``phi="softmax"``)."""
        return self._by_class(self._intercept.tolist())

    def _by_class(self, rows):
        """The rows of Theta's outputs as the learner gives them: by class for
        phi='softmax' (a model without classes keeps one row for the first)."""
        if not self._multiclass:
            return rows[0]
        return dict(zip(self._classes, rows[:len(self._classes)], strict=True))
