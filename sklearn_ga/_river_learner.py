"""What the River learners of :mod:`sklearn_ga.river` share: the features and
classes that the stream brought, the parameters Theta (k x n) and b, the compiled
loop over them and its dict rows (:class:`~sklearn_ga._kernel.DictRows`, O(keys) a
row), ``learn_one``, ``learn_many``, the predictions' activations, the checks of
every input and River's test parameters. (River itself is imported by
:mod:`sklearn_ga.river`, which names the extra to install.)"""

import math

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import validate_parameter_constraints

from ._codes import Status
from ._configuration import Configuration
from ._kernel import DictCode, DictRows, OneRow
from ._kernel import canonical_order as _canonical
from ._passes import RUNAWAY_RATIO, initial_model_loss, may_run_away, runaway
from ._phi import PHI
from ._psi import PSI
from ._river_inputs import _as_dict, _missing, frame_values, series_values
from ._river_rates import _Rates
from ._run import Run, RunCounter

# One output's theta starts with this many columns, doubled when full.
_FIRST_WIDTH = 8


class _Learner(_Rates):
    """What the two learners share: the features and classes that the stream brought,
    the parameters Theta (k x n) and b, the compiled loop over them and its dict
    rows; the parameters of both, ``learn_one``, ``learn_many`` and River's test
    parameters."""

    # The scikit-learn estimator whose parameter constraints check the parameters
    # and whose name the errors give.
    _estimator = None

    # (The run's counters, given out as fitted attributes.)
    t_ = RunCounter()
    cumulative_loss_ = RunCounter()

    def _the_run(self):
        return self._run

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
        params = {name: getattr(self, name) for name in (
            "psi", "phi", "eta", "U", "p", "update", "loss", "Y", "fit_intercept")}
        params["eta"] = self._eta()  # ("auto" resolved)
        name = self._estimator.__name__
        constraints = self._estimator._parameter_constraints
        validate_parameter_constraints(
            {key: constraints[key] for key in params}, params, caller_name=name)
        # (eta="theory": the intercept's rate by intercept_eta="auto", _theory.)
        params["intercept_eta"] = "auto"
        config = Configuration.build(name, **params)
        self._config = config
        self._intercept_only = Configuration.build(name, **params | {"psi": "identity"})
        self._clip = config.clip if self.Y is not None else None
        self._theta_start = config.loop_psi.start
        self._rowwise = self._multiclass
        self._low_target = PHI[self.phi].low
        self._classes = [] if self._multiclass else list(self._binary_classes)
        self._features = {}
        # The run: the trials seen, their losses, the rate's state (eta="theory").
        self._run = Run()
        self._run.t, self._run.cumulative_loss = 0, 0.0
        self._start_scale()
        self._start_tuning()
        # One output for binary labels; for softmax one per class, the first kept
        # before its class comes.
        self._theta = np.zeros((1, 0))
        self._intercept = np.zeros(1)
        self._build(None)

    def _build(self, terms, n=None):
        """The loop on the parameters (continuing ``terms`` if given), its one-row
        calls and dict rows of ``n`` columns (by default every feature's), and the
        buffer of a row's targets."""
        n = len(self._features) if n is None else n
        previous = self.__dict__.get("_rows")
        self._loop = self._trial_loop(terms, n)
        # (A row's targets, encoded before the loop may be built again for its
        # features: kept for as many outputs.)
        target = self.__dict__.get("_target")
        if target is None or target.shape[0] != self._theta.shape[0]:
            self._target = np.zeros(self._theta.shape[0])
        self._rows = None
        if self._loop is None:
            return
        checked = may_run_away(self.psi, self.phi)
        weight_limit, bound_limit, growth = self._limits()
        calls = OneRow(self._loop, None, RUNAWAY_RATIO if checked else 0.0,
                       bound_limit, growth, 0)
        calls.weight_limit = weight_limit
        self._rows = DictRows(calls, n, self._theta_start, checked)
        self._calls = calls
        # (The work of the calls so far, and of building the loop: O(k width).)
        self._rows.work += self._theta.size + (previous.work if previous else 0)
        if terms is None and self._theta.shape[1] > n:
            self._rows.recompute()  # (the spare columns left out of the normalizers)
        self._rates = self._loop.rates

    def _trial_loop(self, terms, n):
        """The compiled loop over (theta, intercept), or None where no trial changes
        anything: phi='softmax' with fewer than two classes predicts probability 1,
        a step of 0."""
        if self._multiclass and len(self._classes) < 2:
            return None
        # Without features the weights are empty and psi plays no part (a normalized
        # psi would divide by an empty normalizer): the intercept learns as it does
        # beside any psi.
        theta = self._theta if n else self._theta[:, :0].copy()
        if not n:
            self._theta = theta
        config = self._config if n else self._intercept_only
        eta, intercept_eta = self._pair()
        return config.trial_loop(theta, self._intercept, eta, self._U(), terms=terms,
                                 intercept_eta=intercept_eta)

    # -- pickling: the loop is built again from its terms --------------------------

    def __getstate__(self):
        n = len(self._features)
        state = {name: value for name, value in self.__dict__.items()
                 if name not in ("_loop", "_rows", "_target", "_rates", "_calls",
                                 "_pending", "_row_reach")}
        # (Only the columns held: the spare ones are scratch.)
        state["_theta"] = self._theta[:, :n].copy()
        state["_terms"] = None
        if self._loop is not None:
            num, den, *rest = self._loop.terms()
            state["_terms"] = (None if num is None else num[:, :n].copy(),
                               None if den is None else den[:, :n].copy(), *rest)
        return state

    def __setstate__(self, state):
        terms = state.pop("_terms")
        self.__dict__.update(state)
        self._build(terms)

    # -- inputs --------------------------------------------------------------------

    def _refused(self, code, name, value):
        """The error of a feature value that DictRows refused (its ``code``)."""
        learner = type(self).__name__
        if code == DictCode.DICT_NOT_FINITE:
            return ValueError(
                f"Input x contains NaN or infinity: feature {name!r} is {value!r}; "
                f"{learner} needs finite feature values. The model was left as it "
                "was."
            )
        if isinstance(value, int):
            return ValueError(
                f"Feature {name!r} is an int beyond the range of a float64; "
                f"{learner} computes in float64. The model was left as it was."
            )
        kind = ValueError if isinstance(value, (str, bytes)) else TypeError
        return kind(
            f"{learner} takes numbers, but feature {name!r} is {value!r} (a "
            f"{type(value).__name__}). Encode other features first (e.g. with "
            "River's preprocessing.OneHotEncoder); a string is not read as a "
            "number, as River's linear models do not read one. The model was left "
            "as it was."
        )

    def _check_row(self, x):
        """Check the values of x as DictRows does (where the model has none)."""
        for name, value in x.items():
            try:
                finite = math.isfinite(value)
            except (TypeError, ValueError, OverflowError):
                raise self._refused(DictCode.DICT_BAD_VALUE, name, value) from None
            if not finite:
                raise self._refused(DictCode.DICT_NOT_FINITE, name, value)

    def _sample_weight(self, w):
        try:
            finite = math.isfinite(w)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(
                f"The sample weight w must be a number; got {w!r}.") from None
        if not (finite and w >= 0):
            raise ValueError(f"The sample weight w must be finite and >= 0; got {w!r}.")
        return float(w)

    def _check_label(self, y):
        """A label of a softmax classifier: hashable and not missing."""
        try:
            hash(y)
        except TypeError:
            raise ValueError(f"A label must be hashable; got {y!r}.") from None
        if _missing(y):
            raise ValueError(
                f"The label is {y!r}, a missing label: learn rows of known labels "
                "only. The model was left as it was."
            )

    # -- growing the model ---------------------------------------------------------

    def _take_in(self, names):
        """Columns for the new feature ``names`` (in this order), after those held:
        theta keeps spare columns, doubled when full (a new feature costs O(k)
        amortized), for one output and for several of a psi without normalizer
        or pnorm (held inside the loop, ``DictRows.inside``); several outputs of
        the others are widened to fit. The loop continues the current one's
        terms. Returns the first new column."""
        features, first = self._features, len(self._features)
        for offset, name in enumerate(names):
            features[name] = first + offset
        k, width = self._theta.shape
        n = len(features)
        spare = k == 1 or (self._rows is not None and self._rows.inside)
        if self._loop is not None and first and spare and n <= width:
            return first
        new_width = max(2 * width, n, _FIRST_WIDTH) if spare else n
        theta = np.full((k, new_width), self._theta_start)
        theta[:, :first] = self._theta[:, :first]
        terms = None
        if self._loop is not None and first and self._rows is not None:
            num, den, *rest = self._loop.terms()
            terms = (self._padded(num, first, new_width),
                     self._padded(den, first, new_width), *rest)
        self._theta, self._intercept = theta, self._intercept.copy()
        if terms is None:
            # (A loop built afresh, from theta: the new columns are in it.)
            self._build(None)
            return n
        # (One output: the new columns enter in the trial; several: theta is n wide,
        # or its spare columns are in the loop, their terms at Theta_1.)
        self._build(terms, first if k == 1 else n)
        self._rows.spare_terms(first)
        return first

    @staticmethod
    def _padded(array, n, width):
        if array is None:
            return None
        padded = np.zeros((array.shape[0], width))
        padded[:, :n] = array[:, :n]
        return padded

    def _learn_new_class(self, x, y, w):
        """``learn_one`` of a row that brings a new class (phi='softmax'): a row of
        Theta at Theta_1's value and intercept 0 for it, then the trial."""
        self._check_label(y)
        self._check_row(x)
        saved = self.__dict__.copy()
        try:
            k, n = self._theta.shape[0], len(self._features)
            classes = self._classes + [y]
            k_new = len(classes) if self._classes else k
            theta = np.full((k_new, n), self._theta_start)
            intercept = np.zeros(k_new)
            theta[:k, :n] = self._theta[:, :n]
            intercept[:k] = self._intercept
            self._classes, self._theta, self._intercept = classes, theta, intercept
            self._build(None)
            self.learn_one(x, y, w)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    # -- learning ------------------------------------------------------------------

    def learn_one(self, x, y, w=1.0):
        """Learn the features ``x`` (dict) and target or label ``y``: one trial.

        Parameters
        ----------
        x : dict or Mapping
            Features by name (finite numbers); a feature missing is 0.
        y : float or label
            Regressor: a target in the range of ``phi``. Classifier: ``False`` /
            ``True`` (binary), any hashable label but None and NaN for
            ``phi="softmax"``.
        w : float, default=1.0
            Sample weight, >= 0: the trial's step is ``w * eta``.
        """
        if type(x) is not dict:
            x = _as_dict(x)
        if w != 1.0:
            w = self._sample_weight(w)
        if self._rowwise:
            if y not in self._classes:
                return self._learn_new_class(x, y, w)
            target = self._target
            self._encode(y, target)
        else:
            target = self._target_value(y)  # (one output: a float, without a view)
        rows = self._rows
        if rows is None:  # (softmax of one class: nothing to learn but the features)
            self._check_row(x)
            self._take_in(_canonical(name for name in x if name not in self._features))
            self._count(1, 0.0)
            return
        tuning = self._tuning_of_rows()
        sums = rows.learn(x, self._features, target, *self._rates, self._run.t,
                          self._run.cumulative_loss, self._run.initial_loss, w, -1,
                          tuning)
        if tuning is not None:
            if type(sums) is tuple:
                self._pending = rows.last_rates
            else:
                self._start_row()  # (eq. 31's R of the paths below: _trial_rates)
        if type(sums) is tuple or (sums is None and self._eta() == "theory" and type(
                sums := self._lowered(x, target, w)) is tuple):
            self._run.t += 1
            self._run.cumulative_loss, self._run.initial_loss, _ = sums
            self._after_trial()
            return
        if not self._rowwise:
            self._target[0] = target  # (the general path reads it there)
        if sums is None and not rows.fresh:
            self._learn_general(x, w)
        elif sums is None or sums == DictCode.DICT_NEW_NAMES:
            self._learn_fresh(x, w, _canonical(rows.fresh))
        else:
            raise self._refused(sums, *rows.bad)
        self._after_trial()

    def _learn_fresh(self, x, w, names):
        """``learn_one`` of a row that brings the new features ``names``."""
        saved = self.__dict__.copy()
        try:
            first = self._take_in(names)
            target = self._target if self._rowwise else self._target.item(0)
            sums = self._rows.learn(x, self._features, target, *self._trial_rates(),
                                    self._run.t, self._run.cumulative_loss,
                                    self._run.initial_loss, w, first)
            if sums is None and self._eta() == "theory":
                sums = self._lowered(x, target, w, first)
            if type(sums) is tuple:
                self._run.t += 1
                self._run.cumulative_loss, self._run.initial_loss, _ = sums
            else:
                self._learn_general(x, w, first)
        except BaseException:
            for name in names:
                self._features.pop(name, None)
            self.__dict__.update(saved)
            raise

    def _learn_general(self, x, w, first=None):
        """The trial of a row that the dict rows did not take (a failure to report,
        or a row that needs a recompute of the loop to take in its features):
        through the loop's general CSR run; the model unchanged if it fails."""
        if first is not None and first < len(self._features) and not self._rows.inside:
            # (The new columns enter a loop built afresh from theta.)
            k, n = self._theta.shape[0], len(self._features)
            theta = np.full((k, max(n, self._theta.shape[1])), self._theta_start)
            theta[:, :first] = self._theta[:, :first]
            self._theta, self._intercept = theta, self._intercept.copy()
            self._build(None)
        columns, values = self._rows.row(x, self._features)
        n, loop, Y = len(self._features), self._loop, self._target[None, :]
        width = self._theta.shape[1] if self._rows.inside else n  # (the loop's n)
        X = sp.csr_array((values, columns, [0, len(columns)]), shape=(1, width))
        rates, pair = None, self._pair()
        if self._eta() == "theory":  # (the rate of the rows seen, this one included)
            rates = self._theory(n)
            rates.prepare(X, Y, None if w == 1.0 else np.full(1, w))
            rates.start_pass()
            pair = rates.rates(np.zeros(1, np.intp), self._run.t)
        loop.save(columns)
        try:
            loop.set_rates(*self._trial_rates(pair))  # (a failure restores them)
            status, _, loss = loop.run_csr(
                values, columns, np.array([0, len(columns)], np.int32), width, Y,
                np.full(1, w), np.zeros(1, np.intp))
            if status != Status.OK:
                raise self._config.divergence(self._run.t + 1, pair[0])
            self._count(1, loss, self._initial_loss(X, Y, np.full(1, w)))
        except BaseException:
            loop.restore()
            raise
        if rates is not None:
            self._commit(rates)

    def _initial_loss(self, X, Y, weights):
        """The loss of the model at Theta_1 on the rows X, the reference of the
        runaway check of the scikit-learn estimators (0 where a run of this psi and
        phi cannot run away while finite)."""
        if not may_run_away(self.psi, self.phi):
            return 0.0
        return initial_model_loss(X, Y, weights, self.psi, self.phi, self._U(),
                                  float(self.p))

    def _count(self, trials, loss, initial_loss=0.0):
        """Count trials of this loss; the same divergence errors as the
        scikit-learn estimators' for a loss that overflows or runs away."""
        cumulative_loss = self._run.cumulative_loss + loss
        initial_loss += self._run.initial_loss
        cause = (runaway(cumulative_loss, initial_loss)
                 if math.isfinite(cumulative_loss)
                 else "the sum of the losses overflowed")
        if cause:
            raise self._config.divergence(self._run.t + trials, self._pair()[0],
                                          cause=cause)
        run = self._run
        run.t += trials
        run.cumulative_loss, run.initial_loss = cumulative_loss, initial_loss

    def learn_many(self, X, y, w=1.0):
        """Learn the rows of ``X`` in order, as ``learn_one`` would one by one.

        Parameters
        ----------
        X : DataFrame
            One row per sample, one numeric column per feature (no missing values):
            any frame that River takes (pandas, polars: read through narwhals).
        y : Series
            Targets (regressor) or labels (classifier).
        w : float or Series, default=1.0
            Sample weights.
        """
        names, values = frame_values(X, type(self).__name__)
        targets = series_values(y)
        if np.ndim(w) == 0:
            weights = np.full(len(targets), self._sample_weight(w))
        else:
            weights = np.asarray(series_values(w), dtype=np.float64)
            if not np.all((weights >= 0.0) & (weights < np.inf)):
                raise ValueError("The sample weights w must be finite and >= 0.")
        if not len(targets) == values.shape[0] == weights.shape[0]:
            raise ValueError(
                f"X has {values.shape[0]} rows, y {len(targets)} and w "
                f"{weights.shape[0]}; they must have one per sample."
            )
        saved = self.__getstate__()
        saved["_features"] = dict(self._features)  # (the learner's grows in place)
        saved_run = self._run.snapshot()  # (the run is counted in place)
        try:
            fresh = _canonical(name for name in names if name not in self._features)
            start = 0
            while start < len(targets):
                if self._multiclass and targets[start] not in self._classes:
                    x = dict(zip(names, values[start].tolist(), strict=True))
                    self._learn_new_class(x, targets[start], weights[start])
                    start += 1
                    fresh = []
                    continue
                # The rows up to the next one that brings a new class run together.
                end = start + 1
                while end < len(targets) and not self._is_new(targets[end]):
                    end += 1
                self._run_rows(names, values[start:end], targets[start:end],
                               weights[start:end], fresh)
                start, fresh = end, []
        except BaseException:
            self.__dict__.clear()
            self.__setstate__(saved)
            self._run.restore(saved_run)
            raise

    def _is_new(self, label):
        return self._multiclass and label not in self._classes

    def _run_rows(self, names, values, targets, weights, fresh):
        """The rows of a frame (its column ``names``), of known classes, in order
        through the dict rows' trials, the ``fresh`` names entering at the first."""
        m, k = values.shape[0], self._theta.shape[0]
        Y = np.zeros((m, k))
        for row, target in zip(Y, targets, strict=True):
            self._encode(target, row)
        if self._rows is None:
            self._take_in(fresh)
            self._count(m, 0.0)
            return
        held = len(self._features)
        first = self._take_in(fresh) if fresh else -1
        columns = np.array([self._features[name] for name in names], np.int32)
        done = 0
        while done < m:
            end = done + min(m - done, self._next_check - self._run.t)  # (inf: m)
            # (Eq. 31's rate follows each row's loss, in the compiled rows.)
            tuning = self._tuning_of_rows(held if done == 0 else None)
            trials, total, initial = self._rows.learn_rows(
                values[done:end], columns, Y[done:end], weights[done:end],
                *self._rates, self._run.t, self._run.cumulative_loss,
                self._run.initial_loss, len(self._features),
                first if done == 0 else -1, tuning)
            self._run.t += trials
            self._run.cumulative_loss, self._run.initial_loss = total, initial
            if tuning is not None and trials:
                self._last_rates = self._pending = self._rows.last_rates
            if tuning is not None and done + trials < end:
                self._start_row(held if done + trials == 0 else None)
            done += trials
            if done < end:  # (the general path learns it, or says what failed)
                self._target[:] = Y[done]
                x = dict(zip(names, values[done].tolist(), strict=True))
                self._learn_general(x, weights[done],
                                    None if done or first < 0 else first)
                done += 1
            self._after_trial()  # (as learn_one, after a row)

    # -- prediction ----------------------------------------------------------------

    def _weights(self):
        """psi(Theta) of the features held, (k, n)."""
        n = len(self._features)
        if self._loop is not None and n:
            return self._loop.weights()[:, :n]  # (k > 1: spare columns, inside)
        return (PSI[self.psi].weights(self._theta[:, :n], self._U(), float(self.p))
                if n else np.zeros((self._theta.shape[0], 0)))

    def _activations(self, names, values):
        """Activations (m, k) of rows ``values`` (m, len(names)), clipped as GA^Y
        predicts (KW01 §4); features the model does not hold count 0.

        The sums run over the model's columns in order, whatever the order of the
        names: ties (a Perceptron's a = 0) do not depend on it.
        """
        features = self._features
        X = np.zeros((values.shape[0], len(features) + 1))
        X[:, [features.get(name, -1) for name in names]] = values
        weights = np.hstack([self._weights(), np.zeros((self._theta.shape[0], 1))])
        return self._checked(X @ weights.T + self._intercept)

    def _activations_one(self, x, outputs=False):
        """The activations of the dict x in O(keys), clipped as GA^Y predicts: a
        float for one output (binary labels, regression), else an array (k,); with
        ``outputs``, phi of them where one compiled call gives them, else None."""
        if type(x) is not dict:
            x = _as_dict(x)
        rows = self._rows
        if rows is None:
            self._check_row(x)
            return None if outputs else self._checked(self._intercept.copy())
        A = rows.activations(x, self._features, outputs)
        if type(A) is float:
            return A if outputs or self._clip is None else min(max(A, self._clip[0]),
                                                               self._clip[1])
        if type(A) is int:
            raise self._refused(A, *rows.bad)
        if A is not None:
            return A[0] if outputs or self._clip is None else self._checked(A[0])
        if outputs:
            return None
        columns, values = rows.row(x, self._features)
        A = self._checked(self._loop.weights(columns) @ values + self._intercept)
        return A if self._rowwise else A.item(0)

    def _checked(self, A):
        if not np.all(np.isfinite(A)):
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
                for row in self._weights().tolist()]
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
