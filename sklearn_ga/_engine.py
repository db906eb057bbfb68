"""The engine of the GA estimators: it builds the compiled trial loop, runs the
epochs of a call through it, keeps it for the next call, and saves and restores
its state.

A call to ``fit`` or ``partial_fit`` either continues the loop kept from the last
call (when it was built for the same settings and the model's parameters are still
its own) or builds a new one on a copy of the parameters; a call that raises leaves
the model as it was (``fit_context``, ``TrialLoop.save``/``restore``). The data flow
is described in doc/developers/architecture.rst.
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils import check_random_state

from ._codes import Status
from ._configuration import SETTINGS, Configuration
from ._one_row import one_row, one_row_path
from ._passes import (
    Chunks,
    Interrupt,
    Interrupted,
    TrialRunner,
    count_initial_loss,
    initial_model_loss,
    may_run_away,
    run_pass,
    runaway,
)
from ._run import Run, RunCounter
from ._state import (
    KeptLoop,
    _first,
    _Parameters,
    _Weights,
    batch_columns,
    read_only,
    read_only_in_place,
)

AT_FLOOR = -1  # average="auto" in fit: from the noise floor on (see _epochs)


class Engine:
    """The engine half of :class:`~sklearn_ga._base.BaseGA`: the compiled loop of
    its settings, the epochs of a call, the loop kept between calls and its pickled
    state. It reads the estimator's parameters and sets its fitted attributes.
    """

    coef_ = _Weights()
    theta_ = _Parameters()
    intercept_ = _Parameters()
    # (The run's counters, given out as fitted attributes.)
    t_ = RunCounter()
    cumulative_loss_ = RunCounter()
    path_measure_ = RunCounter()
    n_iter_ = RunCounter()

    # Whether theta_ and intercept_ may be assigned (not the selected row of a grid).
    _assignable_parameters = True

    def __setattr__(self, name, value):
        # A parameter set anew is validated by the next call: not a one-row path's.
        if name in self._parameter_constraints:
            self._changed()
            self.__dict__.pop("_config", None)
        super().__setattr__(name, value)

    def _assign(self, name, value):
        """Set ``theta_`` or ``intercept_`` (``name``) to a validated read-only copy
        of ``value``; for theta_, ``coef_`` to psi(theta_) at once. The next call
        builds its loop on them (the kept loop no longer holds the model's
        parameters), and the counters ``t_`` and ``cumulative_loss_`` go on."""
        model = type(self).__name__
        self._changed()  # (the one-row path was built on the parameters replaced)
        if not self._assignable_parameters:
            raise AttributeError(
                f"{name} of {model} is the selected configuration's row of "
                f"{name[:-1]}s_, which the next call continues with the whole grid. "
                "To start from given parameters, assign them to the estimator of "
                "one configuration (eta_, U_) instead.")
        if "theta_" not in self.__dict__:
            raise NotFittedError(
                f"This {model} is not fitted yet: {name} takes its shape from a first "
                "fit (or partial_fit of a batch); assign it after that.")
        shape = self.__dict__[name].shape
        try:
            array = np.array(value, dtype=np.float64)  # (a copy, C-contiguous)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name} must be an array of numbers: {error}") from None
        if array.shape != shape:
            raise ValueError(f"{name} must have the fitted shape {shape}; got "
                             f"{array.shape}.")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} contains NaN or infinity; a model's parameters "
                             "are finite numbers.")
        array.flags.writeable = False
        if name == "intercept_":
            self.__dict__[name] = array
            return
        fitted = self._fitted
        with np.errstate(all="ignore"):  # (reported below)
            weights = fitted.psi.weights(array, self.U_, fitted.p)
        if not np.all(np.isfinite(weights)):
            raise ValueError(
                f"psi={fitted.psi_name!r} gives no finite weights for this theta_ "
                f"({fitted.psi.description}).")
        coef = self._shape_coef(weights)
        coef.flags.writeable = False
        self.__dict__.update(theta_=array, coef_=coef)

    def _the_run(self):
        """This estimator's :class:`~sklearn_ga._run.Run`, made at its first use."""
        run = self.__dict__.get("_run")
        if run is None:  # (setdefault is atomic: two threads get one run)
            run = self.__dict__.setdefault("_run", Run())
        return run

    def _training_lock(self):
        """The :class:`TrainingLock` of this estimator's run."""
        return self._the_run().lock

    def _changed(self):
        """The model changed outside the one-row path: drop that path."""
        run = self.__dict__.get("_run")
        if run is not None:
            run.changed()

    def __getstate__(self):
        # (Not while a call trains the model: the loop's terms are read.)
        with self._training_lock():
            state = dict(super().__getstate__())  # (object's is __dict__ itself)
            state.pop("_config", None)
            # The run as plain data (Run.__getstate__: not its loop, lock or
            # one-row path, which a copy builds anew).
            run = state.pop("_run")
            state["_run_state"] = run_state = run.__getstate__()
            # (The configuration as its parameters: the state holds plain data,
            # which skops.io loads without trusting the registries' types.)
            fitted = state.pop("_fitted", None)
            if fitted is not None:
                state["_fitted_settings"] = fitted.settings
            kept = run.kept
            if kept is None:
                return state
            continuation = self._continuation(kept)
            if continuation is not None:
                state["_kept_terms"] = continuation
                return state
            if "coef_" not in state:
                # Parameters or settings changed since the last call: like the
                # model, the copy builds a loop at its next call, and predicts with
                # these until then.
                state["coef_"] = kept.coef(self._shape_coef)
            if kept.averaging:  # (its next loop continues them, and intercept_)
                run_state["averages"] = kept.loop.averages()
            return state

    def __setstate__(self, state):
        continuation = state.pop("_kept_terms", None)
        settings = state.pop("_fitted_settings", None)
        run = Run()
        run.__setstate__(state.pop("_run_state", {}))
        super().__setstate__(state)
        self.__dict__["_run"] = run
        if settings is not None:
            self._fitted = Configuration.restored(type(self).__name__, settings)
        if continuation is not None:
            self._continue_from(continuation)
        else:  # (the parameters and weights stay read-only: they stay in agreement)
            read_only_in_place(*(self.__dict__[name] for name in
                                 ("theta_", "intercept_", "coef_")
                                 if name in self.__dict__))
        if "theta_" in state and settings is None:
            # Pickled before the model kept the configuration it was fitted with:
            # the psi, phi and Y it recorded (older: the parameters').
            recorded = {name: self.__dict__.pop("_fitted_" + name, getattr(self, name))
                        for name in ("psi", "phi", "Y")}
            self.__dict__.pop("_fitted_U", None)
            self._fitted = Configuration.build(type(self).__name__, **{
                name: getattr(self, name) for name in SETTINGS
                if hasattr(self, name)} | recorded)

    def _continuation(self, kept):
        """What a copy needs to continue the kept loop exactly as the model would:
        its key and terms; None if the next call builds a new loop anyway."""
        if self._continuable() is None:
            return None
        return kept.key, kept.loop.terms()

    def _continue_from(self, continuation):
        """Build the loop of ``_continuation`` again, on copies of the parameters."""
        _, terms = continuation
        theta = np.array(self.theta_)
        intercept = np.array(self.__dict__["intercept_"])
        config = self._configuration()
        eta, intercept_eta = self._rates(False, theta.shape[1]).current()
        self._keep(config.trial_loop(theta, intercept, eta, self._scale(), terms=terms,
                                     intercept_eta=intercept_eta,
                                     average=self._average_of(False)),
                   theta, intercept)

    def _learn(self, X, Y, sample_weight, *, first_call, epochs, check_rows=False,
             start=None, validation=None):
        """Run the trial loop and set the fitted attributes.

        ``epochs=True`` runs ``fit``'s epochs (shuffling, stopping on ``tol``) on a
        loop of their own; otherwise one in-order pass of the kept loop, the
        on-line algorithm of the papers. ``check_rows``: see :class:`TrialRunner`.
        ``start``: parameters ``(theta, intercept)`` to start from instead of the
        usual ones. ``validation``: ``score(weights, intercept)`` of the model after
        each epoch, which ``tol`` then watches instead of the on-line loss (early
        stopping).
        """
        rates = self._rates(first_call, X.shape[1])
        rates.prepare(X, Y, sample_weight)
        average = self._average_of(epochs)
        loop, theta, intercept, kept = self._loop_to_continue(
            rates, Y.shape[1], X.shape[1], first_call, epochs, start, average)

        def watch(loop):
            # (The model that the call returns: with averaging, the averages.)
            weights, intercepts, count = loop.average()
            if count:
                return validation(weights, intercepts)
            return validation(loop.weights(), intercept)

        run = self._the_run()
        progress = ((0, 0.0, 0.0) if first_call else
                    (run.t, run.cumulative_loss, run.initial_loss))
        # The path measure goes on (a model pickled before it was kept has none).
        loop.path = 0.0 if first_call else _first(run.path, np.nan)
        if kept:
            # The kept loop writes theta_ in place: a failed call puts it back.
            loop.save(batch_columns(X))
            run.kept.writing()
        try:
            n_iter, t, cumulative_loss, initial_loss = self._epochs(
                loop, TrialRunner(X, Y, sample_weight, type(self).__name__,
                                  check_rows),
                rates, (X, Y, sample_weight), progress, epochs,
                None if validation is None else watch, average)
            loop.release()  # (a CSR fit's epochs may hold theta transposed)
        except BaseException:
            if kept:
                loop.restore()
                run.kept.writing()
            raise
        # The next partial_fit continues this loop (building one costs O(n)
        # exponentials), and coef_ is computed from it when it is read.
        if kept:
            run.kept.writing()
        else:
            self._keep(loop, theta, intercept, average)
        run.kept.params = self._param_values()
        run.rate_state, run.initial_loss = rates.state(), initial_loss
        eta, intercept_eta = rates.current()
        self._set_state(run.kept.theta, run.kept.intercept, None,
                        eta=eta, intercept_eta=intercept_eta,
                        n_eta_changes=rates.n_changes, U=self._scale(), n_iter=n_iter,
                        t=t, cumulative_loss=cumulative_loss)
        # A penalty's pull moves Theta too, and is not measured.
        self.path_measure_ = loop.path if self.alpha == 0 else np.nan
        return self

    def _one_row_trial(self, X, y):
        """``partial_fit(X, y)`` through the model's one-row path
        (:mod:`sklearn_ga._one_row`) if X is one ndarray or CSR row and the path
        can run the call; True if it did, else False with nothing changed."""
        # (Read, not made: this runs at every one-row call.)
        run = self.__dict__.get("_run")
        path = None if run is None else run.one_row
        if path is None:
            path = one_row_path(self) if one_row(X) else None
        return bool(path) and path.learn(self, X, y)

    def _loop_key(self, average=None):
        """What a trial loop is built from, besides the parameters (averaging
        from trial ``average``, by default as in ``partial_fit``)."""
        return self._configuration().key(
            self._scale(), self._average_of(False) if average is None else average)

    def _loop_to_continue(self, rates, k, n, first_call, epochs, start=None, average=0):
        """``(loop, theta, intercept, kept)``: the loop of the last call if it was
        built for these settings, the model's parameters are still its own and the
        call is partial_fit's; else a new one on fresh parameters (``start``, or a
        copy of the fitted ones, continuing the kept loop's terms where there is
        one). A fit runs on a loop of its own, so that a failure, or an
        interruption after its first epoch, leaves the kept loop as it was."""
        terms = None
        if start is not None:
            theta, intercept = start
        elif not first_call:
            kept = self._continuable()
            if kept is not None and not epochs:
                return kept.loop, kept.theta.base, kept.intercept.base, True
            theta = self.theta_.copy()
            intercept = self.__dict__["intercept_"].copy()
            terms = kept.loop.terms() if kept is not None else None
        else:
            theta = self._configuration().initial_parameters((k, n))
            intercept = np.zeros(k)
        # (Where the loop is built without terms, which carry them; a fit of
        # average="auto" averages its own epochs.)
        auto = epochs and self.average == "auto"
        averages = None if first_call or auto else self._carried_averages()
        eta, intercept_eta = rates.current()
        loop = self._configuration().trial_loop(
            theta, intercept, eta, self._scale(), terms=terms,
            intercept_eta=intercept_eta, averages=averages, average=average)
        return loop, theta, intercept, False

    def _carried_averages(self):
        """The sums of the averaged trials so far, for a loop built again (on
        changed settings or assigned parameters): the averages go on, as t_."""
        run = self._the_run()
        if run.kept is not None:
            return run.kept.loop.averages()
        return run.averages

    def _continuable(self):
        """The kept loop if a call can continue it (built for these settings, on
        parameters that are still the model's), else None."""
        kept = self._the_run().kept
        if kept is not None and kept.holds(self.theta_, self.__dict__["intercept_"],
                                           self._loop_key()):
            return kept
        return None

    def _keep(self, loop, theta, intercept, average=None):
        """Keep ``loop`` (of ``_loop_key(average)``) for the next call, its parameters
        given out as read-only ``theta_`` and ``intercept_`` (so that they stay
        those of its terms)."""
        theta, intercept = read_only(theta, intercept)
        self.__dict__.update(theta_=theta, intercept_=intercept)
        run = self._the_run()
        key = self._loop_key(average)
        run.kept = KeptLoop(key, loop, theta, intercept, averaging=key[-1])
        run.averages = None  # (the loop holds them)

    def _hold(self, loop, theta, intercept, *, eta, intercept_eta, t, cumulative_loss):
        """Make ``loop``, which updates ``theta`` and ``intercept`` in place, this
        model's kept loop after ``t`` trials at the rates ``eta`` and
        ``intercept_eta`` (its parameters), as a ``partial_fit`` that ended with it
        would: how a CV grid's selected configuration becomes a model."""
        self._keep(loop, theta, intercept)
        run = self._the_run()
        run.kept.params = self._param_values()
        self._set_state(run.kept.theta, run.kept.intercept, None, eta=eta,
                        intercept_eta=intercept_eta, U=self._scale(), n_iter=1, t=t,
                        cumulative_loss=cumulative_loss)

    def _epochs(self, loop, run, rates, batch, progress, epochs, watch=None, average=0):
        """Run the passes of one call; ``(n_iter, t, cumulative_loss,
        initial_loss)`` after them, from ``progress`` = (t, cumulative_loss,
        initial_loss) before. ``tol`` watches the on-line loss of each epoch, or
        with ``watch`` (early stopping) the score ``watch(loop)`` after it, as SGD
        does.

        ``initial_loss`` sums the loss of the model at Theta_1 over the trials
        seen, the reference of the runaway check (``may_run_away``). Ctrl-C
        during fit keeps the model of the last completed epoch (restored from the
        save at the start of the epoch interrupted, when that epoch ran in several
        chunks) and warns; during the first epoch, or during partial_fit, it
        raises KeyboardInterrupt (the caller leaves the model as it was).
        """
        X, Y, sample_weight = batch
        t, cumulative_loss, initial_loss = progress
        m = X.shape[0]
        n_epochs = self.max_iter if epochs else 1
        stop_on_tol = epochs and self.tol is not None
        shuffled = epochs and self.shuffle
        order = None if shuffled else np.arange(m, dtype=np.intp)
        rng = check_random_state(self.random_state) if shuffled else None
        config = self._configuration()
        chunks = Chunks(X, Y.shape[1], config.lazy_csr)
        checked, batch_initial = may_run_away(self.psi, self.phi), None
        counted = count_initial_loss(loop, X, checked, self.psi, self._scale(), self.p)
        floor = average == AT_FLOOR
        best_loss, no_improvement, epoch, done, first_loss = np.inf, 0, 0, 0, 0.0
        best_score = -np.inf
        with Interrupt(enabled=n_epochs > 1 or chunks.rows < m) as interrupt:
            for epoch in range(1, n_epochs + 1):
                if shuffled:
                    order = None  # free the last epoch's order before drawing one
                    order = rng.permutation(m).astype(np.intp, copy=False)
                if done and chunks.rows < m:
                    loop.save()  # the last completed epoch, for an interruption
                started = time.perf_counter() if self.verbose else 0.0
                loop.loss_sum = cumulative_loss
                try:
                    status, trials, epoch_loss = run_pass(
                        loop, run, order, rates, t, chunks, hold=epochs,
                        interrupt=interrupt, average=t + m + 1 if floor else average)
                except Interrupted:
                    if done:
                        loop.restore()
                    break
                if status != Status.OK:
                    # (trials = m: the end-of-pass check of the parameters failed.)
                    raise config.divergence(t + min(trials + 1, m), rates)
                t += m
                # (Each trial's loss added to the sum as it ends, as one-row calls
                # add theirs: epoch_loss, the epoch's own sum, is for tol.)
                cumulative_loss = loop.loss_sum
                if not np.isfinite(cumulative_loss):
                    raise config.divergence(t, rates, cause=(
                        "the sum of the losses overflowed (each counted s times for "
                        "a sample weight s: large weights can overflow it too)"))
                if checked:
                    if batch_initial is None:
                        batch_initial = loop.start_loss if counted else (
                            initial_model_loss(X, Y, sample_weight, self.psi,
                                               self.phi, self._scale(), self.p))
                        loop.count_start = False
                    initial_loss += batch_initial
                    cause = runaway(cumulative_loss, initial_loss)
                    if cause:
                        raise config.divergence(t, rates, cause=cause)
                done = epoch
                if epoch == 1:
                    first_loss = epoch_loss
                if watch is None:
                    worse = stop_on_tol and epoch_loss > best_loss - self.tol * m
                    scored = ""
                else:
                    score = watch(loop)
                    worse = stop_on_tol and score < best_score + self.tol
                    best_score = max(best_score, score)
                    scored = f", validation {score:.6g}"
                if self.verbose:
                    self._report(epoch, time.perf_counter() - started, epoch_loss / m,
                                 rates, t, scored)
                no_improvement = no_improvement + 1 if worse else 0
                if floor and epoch_loss > best_loss - max(self.tol or 0.0, 0.0) * m:
                    # The constant rate's noise floor: the average of the
                    # iterates from here on has none of their noise.
                    floor, average = False, t + 1
                best_loss = min(best_loss, epoch_loss)
                if interrupt.requested or (
                        stop_on_tol and no_improvement >= self.n_iter_no_change):
                    break
            else:
                if stop_on_tol:
                    warnings.warn(
                        f"Maximum number of iterations ({n_epochs}) reached before the "
                        f"{'on-line loss' if watch is None else 'validation score'} "
                        "stopped improving; consider increasing max_iter.",
                        ConvergenceWarning, stacklevel=4)
        if interrupt.requested:
            self._interrupted(done if epochs else 0, t)
        # Finite weights can still be diverging (each step overshooting, e.g.
        # eta ||x||^2 > 2 for GD): a later epoch that does worse than the first,
        # which started from scratch, is not convergence.
        if done > 1 and epoch_loss > max(first_loss, 2.0 * best_loss):
            warnings.warn(
                f"The on-line loss grew over the epochs: {epoch_loss / m:.3g} per "
                f"trial in epoch {done} against {first_loss / m:.3g} in the first. "
                f"{config.rate_text(rates)} is probably too large (the weights "
                "may be diverging); use a smaller eta, or scale the inputs (e.g. with "
                "StandardScaler).",
                ConvergenceWarning,
                stacklevel=4,
            )
        return done, t, cumulative_loss, initial_loss

    def _interrupted(self, done, t):
        """Ctrl-C: keep the model of epoch ``done`` (> 0), or raise
        KeyboardInterrupt; either way, say which."""
        name = type(self).__name__
        if done:
            warnings.warn(
                f"{name}.fit was interrupted (Ctrl-C): the model is that of its last "
                f"completed epoch, {done} ({t} trials seen).", ConvergenceWarning,
                stacklevel=5)
            return
        call = "fit, during its first epoch" if self.max_iter > 1 else "the call"
        warnings.warn(f"{name} was interrupted (Ctrl-C) in {call}: the model is as "
                      "it was before the call.", UserWarning, stacklevel=5)
        raise KeyboardInterrupt

    def _report(self, epoch, seconds, loss, rates, t, scored):
        """verbose: one line per epoch."""
        print(f"-- Epoch {epoch}: {seconds:.3g} s, loss {loss:.6g} per trial, "
              f"{self._configuration().rate_text(rates)}, trials seen {t}{scored}")

    def _configuration(self):
        """The :class:`~sklearn_ga._configuration.Configuration` of the parameters
        (validated by the call that asks), built once after they were set."""
        config = self.__dict__.get("_config")
        if config is None:
            config = self.__dict__["_config"] = Configuration.of(self)
        return config

    def _rates(self, first_call, n_features):
        """The rate object of a call, continued from the last call's state
        (:meth:`Configuration.rates`)."""
        return self._configuration().rates(
            self._scale(), n_features,
            None if first_call else self._the_run().rate_state)

    def _set_state(self, theta, intercept, weights, *, eta, U, n_iter, t,
                   cumulative_loss, intercept_eta=None, n_eta_changes=0):
        """Set the fitted attributes; ``weights`` is psi(theta) (the compiled loop
        computes it faster than the registry's NumPy functions), or None for
        ``coef_`` from the kept loop (``_keep``)."""
        self._changed()  # (the one-row path was built on the state before the call)
        self.eta_ = eta
        self.intercept_eta_ = (intercept_eta if intercept_eta is not None
                               else eta if self.fit_intercept else 0.0)
        self.n_eta_changes_ = n_eta_changes
        # The model predicts as it was fitted: set_params takes effect at the next
        # fit (a binary phi='logistic' row read as softmax would be one class).
        self._fitted, self.U_ = self._configuration(), U
        self.__dict__.update(theta_=theta, intercept_=intercept)
        if weights is not None:
            self.coef_ = self._shape_coef(weights)
        else:
            self.__dict__.pop("coef_", None)  # (one set by hand, or by a CV fit)
        self.n_iter_ = n_iter
        self.t_ = t
        self.cumulative_loss_ = float(cumulative_loss)
        return self
