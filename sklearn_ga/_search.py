"""What the two CV estimators share: they hold a :class:`~sklearn_ga._grid.Grid`
of runs, one per (eta, U) configuration, and the models of the selected one.

``SearchGA`` carries only the search's parameters (no plain estimator's): the
grid learns every batch; the configuration of least progressive (or k-fold) loss
is selected; its one-pass model is a plain estimator (``_plain``) that holds the
selected configuration's loop (``Engine._hold``), and ``fit`` then finishes it
as a plain ``fit`` at the selected (eta, U) (``_finish``). Predictions, ``coef_``
and the encoding of targets are those models'; the grid's state and counters are
read from the grid. The public classes and their docstrings are in ``_cv``.
"""

import operator
import warnings
from numbers import Integral, Real
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from ._auto_scale import auto_scale
from ._base import _parameter_getter
from ._configuration import Configuration
from ._grid import Grid, kfold_losses
from ._one_row import CSR_TYPES
from ._psi import PSI
from ._state import TrainingLock, read_only
from ._validation import (
    canonical_csr,
    light_sample_weight,
    light_validation,
    loop_csr,
)

# Us="auto": these multiples of the U that U="auto" would choose (auto_scale).
AUTO_US = (0.25, 1.0, 4.0)
# What a failed call puts back outside __dict__ (_state's atomic calls): nothing,
# the grid restores itself (Grid.snapshot).
_NOTHING_HELD = SimpleNamespace(snapshot=lambda: None, restore=lambda saved: None)


class _GridArray:
    # thetas_, intercepts_, progressive_loss_: read-only views of the grid's
    # arrays, updated in place by later calls; an assignment replaces them (checked
    # and copied), and the next call learns from it. (No docstring: autodoc.)

    def __set_name__(self, owner, name):
        self.name = name
        self.field = {"thetas_": "thetas", "intercepts_": "intercepts",
                      "progressive_loss_": "losses"}[name]

    def __get__(self, search, owner=None):
        if search is None:
            return self
        grid = search.__dict__.get("_grid")
        if grid is None:
            raise AttributeError(
                f"{type(search).__name__!r} object has no attribute {self.name!r}")
        view = getattr(grid, self.field).view()
        view.flags.writeable = False
        return view

    def __set__(self, search, value):
        with search._training_lock():
            grid = getattr(search, "_grid", None)
            if grid is None:
                raise AttributeError(f"{self.name} takes its shape from a first fit; "
                                     "assign it after that.")
            shape = getattr(grid, self.field).shape
            array = np.array(value, dtype=np.float64)
            if array.shape != shape:
                raise ValueError(f"{self.name} must have the fitted shape {shape}; "
                                 f"got {array.shape}.")
            if self.field != "losses" and not np.all(np.isfinite(array)):
                raise ValueError(f"{self.name} contains NaN or infinity.")
            grid.replace(self.field, array)
            search._invalidate_row()


class _SelectedRow:
    # theta_ and intercept_: the selected model's (a row of thetas_ and
    # intercepts_ until fit finishes it), which cannot be assigned.

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, search, owner=None):
        if search is None:
            return self
        try:
            return search.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(search).__name__!r} object has no "
                                 f"attribute {self.name!r}") from None

    def __set__(self, search, value):
        raise AttributeError(
            f"{self.name} of {type(search).__name__} is the selected configuration's "
            f"row of {self.name[:-1]}s_, which the next call continues with the "
            "whole grid. To start from given parameters, assign them to the "
            "estimator of one configuration (eta_, U_) instead.")


class SearchGA(BaseEstimator):
    """Base of the CV estimators (not for direct use): the grid they hold, its
    selection, and the models of the selected configuration."""

    # The plain estimator of a configuration (GARegressor, GAClassifier).
    _plain = None

    @property
    def _target_validation(self):
        # (validate_data's keyword arguments for y: the plain estimator's.)
        return self._plain._target_validation

    _parameter_constraints = {
        "psi": [StrOptions(set(PSI))],
        "etas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "Us": ["array-like", StrOptions({"auto"})],
        "p": [Interval(Real, 2, None, closed="left")],
        "fit_intercept": ["boolean"],
        "cv": [None, "cv_object"],
        "n_jobs": [None, Integral],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, None, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    theta_ = _SelectedRow()
    intercept_ = _SelectedRow()
    thetas_ = _GridArray()
    intercepts_ = _GridArray()
    progressive_loss_ = _GridArray()

    # -- what it holds --------------------------------------------------------------

    def __setattr__(self, name, value):
        # A parameter set anew is resolved by the next call (and validated: the
        # one-row path sees that the parameters are not those validated last).
        if name in self._parameter_constraints:
            self.__dict__.pop("_config", None)
        super().__setattr__(name, value)

    def _training_lock(self):
        lock = self.__dict__.get("_lock")
        if lock is None:  # (setdefault is atomic: two threads get one lock)
            lock = self.__dict__.setdefault("_lock", TrainingLock())
        return lock

    def _the_run(self):
        return _NOTHING_HELD

    def _invalidate_row(self):
        """Send the next one-row call through the general path (the parameters
        were assigned)."""
        self.__dict__.pop("_row_params", None)

    def _configuration(self):
        """The settings the configurations share (``Configuration``: the one
        door of psi and eta to the loops); each configuration's rates are its
        own."""
        config = self.__dict__.get("_config")
        if config is None:
            config = self.__dict__["_config"] = Configuration.build(
                type(self).__name__, psi=self.psi, phi=self.phi, p=self.p,
                fit_intercept=self.fit_intercept)
        return config

    def __sklearn_is_fitted__(self):
        return "theta_" in self.__dict__

    def _predictor(self):
        """The model predicted with: the finished one, else the selected
        configuration's one-pass model."""
        check_is_fitted(self)
        fitted = self.__dict__
        return fitted.get("_finished_model") or fitted["_selected"]

    @property
    def coef_(self):
        return self._predictor().coef_

    @property
    def t_(self):
        return self._held_grid("t_").t

    @property
    def cumulative_loss_(self):
        return float(self._held_grid("cumulative_loss_").losses[self.best_index_])

    @property
    def cv_results_(self):
        grid = self._held_grid("cv_results_")
        scores = self.__dict__.get("_scores")
        scores = grid.losses if scores is None else scores
        etas, Us = (np.array([config[i] for config in grid.configs]) for i in (0, 1))
        results = read_only(etas, Us, grid.losses.copy(), scores.copy(),
                            np.argsort(np.argsort(scores, kind="stable")) + 1)
        return {"params": [{"eta": e, "U": u} for e, u in grid.configs],
                **dict(zip(("param_eta", "param_U", "progressive_loss",
                            "mean_test_loss", "rank_test_loss"), results,
                           strict=True))}

    def _held_grid(self, name):
        grid = self.__dict__.get("_grid")
        if grid is None or "theta_" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}")
        return grid

    # -- the grid -------------------------------------------------------------------

    def _grid_configs(self, scale):
        """``(configs, intercept_etas)``: the (eta, U) configurations, U varying
        slowest (1 for a psi without a scale; ``Us="auto"``: ``AUTO_US`` times
        ``scale``, the first call's auto_scale, for a psi with grid_U, else
        ``scale`` alone), and the intercept's rate beside
        each: the rate given in ``etas``.

        An int ``etas`` is ``np.logspace(-4, 0, etas)``, divided by U^2 for a psi
        that grid_U (EG±: HKW Theorem 2's rate 1 / (4 U^2 X_inf^2 Z) scales so),
        which the intercept, a gradient-descent weight (KW01 Theorem 3's block of
        its own), does not take.
        """
        psi = self._configuration().psi
        grid_U = psi.grid_U
        etas = (np.logspace(-4, 0, self.etas) if isinstance(self.etas, Integral)
                else np.asarray(self.etas, dtype=np.float64).ravel())
        # (A psi whose weights have the norm U, the sphere, takes U="auto"'s scale,
        # or the Us given, without searching around it.)
        Us = (np.ones(1) if psi.scale_norm is None
              else np.asarray(self.Us, dtype=np.float64).ravel()
              if not isinstance(self.Us, str)
              else scale * np.array(AUTO_US) if grid_U else np.array([scale]))
        for name, values in (("etas", etas), ("Us", Us)):
            if values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{name} must hold positive finite numbers; got "
                                 f"{values!r}.")
        per_U = grid_U and isinstance(self.etas, Integral)
        configs = [(float(eta / U**2 if per_U else eta), float(U))
                   for U in Us for eta in etas]
        return configs, [float(eta) for U in Us for eta in etas]

    def _grid_scale(self, X, Y):
        """The U that ``Us="auto"`` stands for (1.0 for a psi without a scale).
        For a psi of weights in a fixed set, the plain estimators' range check
        (``auto_scale`` warns where such weights cannot fit the data)."""
        psi = self._configuration().psi
        if isinstance(self.Us, str) or psi.scale_norm is None:
            scale = auto_scale(self.psi, self.phi, X, Y, self.fit_intercept)
            return 1.0 if psi.scale_norm is None else scale
        return 1.0

    def _plain_model(self, eta, U, intercept_eta, **finish):
        """A plain estimator of one configuration of the grid."""
        model = self._plain(psi=self.psi, phi=self.phi, eta=eta, U=U, p=self.p,
                            intercept_eta=intercept_eta,
                            fit_intercept=self.fit_intercept, **self._plain_extra(),
                            **finish)
        model._restart_advice = "call fit to start over"
        return model

    def _plain_extra(self):
        """The parameters of a plain estimator that only a subclass has."""
        return {}

    def _follow(self, model):
        """Set the shared parameters of ``model`` to this estimator's, where
        ``set_params`` changed them since (its prediction stays its fitted
        one)."""
        shared = {"psi": self.psi, "phi": self.phi, "p": self.p,
                  "fit_intercept": self.fit_intercept, **self._plain_extra()}
        if any(getattr(model, name) is not value for name, value in shared.items()):
            model.set_params(**shared)

    # -- fitting --------------------------------------------------------------------

    def _validate_batch(self, X, y, sample_weight, *, first_call, classes=None):
        """``(X, Y, steps)``: the batch validated, the targets encoded by the
        selected model (a fresh one on a first call) and the steps' multipliers."""
        checked = None if first_call else light_validation(self, X, y)
        X, y = checked or validate_data(
            self, X, y, reset=first_call, accept_sparse="csr", dtype=np.float64,
            order="C", ensure_all_finite=False, **self._target_validation)
        if sp.issparse(X):
            X = canonical_csr(loop_csr(X))
        if first_call:
            self._selected = self._plain_model(1.0, 1.0, "eta")
            self._selected.n_features_in_ = X.shape[1]
        else:
            self._follow(self._selected)
        Y = self._selected._encode_targets(y, first_call=first_call, classes=classes)
        if not first_call:
            self._check_continuation(Y.shape[1])
        self._configuration().phi.check_targets(Y)
        if sample_weight is not None:
            weights = light_sample_weight(sample_weight, X.shape[0])
            sample_weight = weights if weights is not None else _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        return X, Y, self._step_weights(Y, sample_weight)

    def _step_weights(self, Y, sample_weight):
        return sample_weight

    def _check_continuation(self, k):
        """The grid continues only under its psi and with its k outputs."""
        name, grid = type(self).__name__, self._grid
        fitted = grid.config.psi_name
        if self.psi != fitted:
            raise ValueError(
                f"{name} was fitted with psi={fitted!r}: its parameters theta_ are "
                f"not those of psi={self.psi!r}. Set psi back, or call fit to start "
                "over.")
        if k != grid.thetas.shape[1]:
            raise ValueError(
                f"{name} was fitted with {grid.thetas.shape[1]} output(s), but these "
                f"targets need {k} (phi={self.phi!r}). Pass targets of the same shape "
                "(or set phi back), or call fit to start over.")

    def _fit(self, X, y, sample_weight, groups):
        X, Y, steps = self._validate_batch(X, y, sample_weight, first_call=True)
        self._search(X, Y, steps, first_call=True, y=y, groups=groups)
        if self.max_iter > 1:
            self._finish(X, y, sample_weight)
        return self

    def _partial_fit(self, X, y, sample_weight, classes=None):
        first_call = "theta_" not in self.__dict__
        if not first_call:
            params = self._param_values()
            if not all(map(operator.is_, params, self._validated_params)):
                self._validate_params()
        X, Y, steps = self._validate_batch(X, y, sample_weight, first_call=first_call,
                                           classes=classes)
        return self._search(X, Y, steps, first_call=first_call)

    def _param_values(self):
        """The values of the parameters, in the order of ``_parameter_constraints``
        (read in one call: the one-row path compares them at every call)."""
        return _parameter_getter(type(self))(self)

    def _search(self, X, Y, sample_weight, *, first_call, y=None, groups=None):
        config, params = self._configuration(), self._param_values()
        if first_call:
            self._auto_U = self._grid_scale(X, Y)
            configs, intercept_etas = self._grid_configs(self._auto_U)
            grid = Grid.start(config, configs, intercept_etas, Y.shape[1], X.shape[1],
                              self.n_jobs)
        else:
            grid = self._grid
            # (The grid is built again only where a parameter was set since.)
            if not all(map(operator.is_, params, self._validated_params)):
                if self._grid_configs(self._auto_U)[0] != grid.configs:
                    raise ValueError(
                        f"The grid of {type(self).__name__} (etas, Us) changed since "
                        "the first call to partial_fit; it is fixed for a stream. "
                        "Call fit to restart with the new grid.")
                grid.reconfigure(config)
                grid.n_jobs = self.n_jobs
        selected = self.__dict__.get("_selected")
        kept = None if first_call else selected._the_run().kept
        saved = grid.snapshot(X)
        if kept is not None:
            kept.writing()  # (the selected model's loop is the grid's)
        try:
            grid.learn(X, Y, sample_weight)
            grid.t += X.shape[0]
            if first_call and self.cv is not None:
                # The model returned is the pass over all the data: one that
                # diverged there is out, whatever its folds (which may not see those
                # rows) said.
                held_out = kfold_losses(grid, X, y, Y, sample_weight, self.cv,
                                        groups, is_classifier(self))
                scores = np.where(np.isfinite(grid.losses), held_out, np.inf)
            else:
                scores = None
            if not np.any(np.isfinite(grid.losses if scores is None else scores)):
                raise ValueError(
                    f"{type(self).__name__}: every configuration diverged (etas "
                    f"from {min(e for e, _ in grid.configs):.3g}). Use smaller "
                    "etas, or scale the inputs (e.g. with StandardScaler).")
        except BaseException:
            grid.restore(saved)
            if kept is not None:
                kept.writing()
            raise
        self._grid, self._validated_params = grid, params
        self._scores = None if scores is None else read_only(scores)[0]
        self._select(int(np.argmin(grid.losses if scores is None else scores)))
        self._row_ready()
        return self

    def _select(self, best):
        """Make configuration ``best`` the selected one: its one-pass model holds
        its loop."""
        grid, model = self._grid, self._selected
        eta, U = grid.configs[best]
        intercept_eta = grid.intercept_etas[best] if self.fit_intercept else 0.0
        loop, theta, intercept = grid.selected(best)
        model.set_params(eta=eta, U=U, intercept_eta=grid.intercept_etas[best])
        model._hold(loop, theta, intercept, eta=eta, intercept_eta=intercept_eta,
                    t=grid.t, cumulative_loss=grid.losses[best])
        self.__dict__.update(
            best_index_=best, eta_=eta, U_=U, intercept_eta_=intercept_eta,
            n_iter_=1, _finished_model=None, theta_=model.theta_,
            intercept_=model.__dict__["intercept_"])

    def _finish(self, X, y, sample_weight):
        """Finish the selected configuration as ``fit`` finishes a model: the plain
        estimator fitted at its (eta, U) and intercept rate, with the epochs to
        ``tol`` (and the averaging) of its defaults, from scratch. It becomes the
        model predicted with; the grid's one pass stays for ``partial_fit``.
        Should it diverge, the one-pass model stays, with a warning."""
        best = self.best_index_
        eta, U = self._grid.configs[best]
        plain = self._plain_model(eta, U, self._grid.intercept_etas[best],
                                  max_iter=self.max_iter, tol=self.tol,
                                  random_state=self.random_state)
        try:
            plain.fit(X, y, sample_weight=sample_weight)
        except ValueError as error:
            warnings.warn(
                f"{type(self).__name__}: finishing the selected configuration "
                f"(eta={eta:.6g}, U={U:.6g}) with fit's epochs failed, so the model "
                f"is the one-pass model of the grid: {error}", ConvergenceWarning,
                stacklevel=4)
            return
        self.__dict__.update(_finished_model=plain, theta_=plain.theta_,
                             intercept_=plain.intercept_, n_iter_=1 + plain.n_iter_)

    def _progressive(self):
        """partial_fit exists only for progressive validation (k-fold needs the
        whole data set at once)."""
        return self.cv is None

    # -- one row --------------------------------------------------------------------

    def _one_row_trial(self, X, y):
        """``partial_fit(X, y)`` of one row through the grid's one compiled call
        (``Grid.learn_row``) where its outcome is the general path's: parameters
        not set since the last call, no feature names, no step weights, y one
        target the selected model encodes; True if done, else False with nothing
        changed."""
        fitted = self.__dict__
        params = fitted.get("_row_params")
        if params is None or not (
                (type(X) is np.ndarray and X.ndim == 2 and X.shape[0] == 1)
                or (type(X) in CSR_TYPES and X.shape[0] == 1
                    and X.indices.dtype == np.int32)):
            return False
        if not all(map(operator.is_, self._param_values(), params)):
            return False
        model = fitted["_selected"]
        with self._training_lock():
            kept = model._the_run().kept
            target = model._one_row_targets(y, kept)
            if target is None or fitted.get("_row_params") is not params:
                return False
            kept.writing()
            best = fitted["_grid"].learn_row(X, target)
            kept.writing()
            if best < 0:
                return False
            if best != fitted["best_index_"] or fitted["_finished_model"] is not None:
                self._select(best)
            return True

    def _row_ready(self):
        """Let the next one-row call take the compiled path if this state allows
        it (see :meth:`_one_row_trial`)."""
        fitted = self.__dict__
        if (self.cv is None and "feature_names_in_" not in fitted
                and self._step_weights_free()):
            fitted["_row_params"] = fitted["_validated_params"]

    def _step_weights_free(self):
        return True

    # -- copies ---------------------------------------------------------------------

    def __getstate__(self):
        with self._training_lock():
            state = dict(super().__getstate__())
            for name in ("_lock", "_config", "_row_params"):
                state.pop(name, None)
            # (The selected model holds the grid's loop: a copy holds its own
            # grid's, from the grid's terms.)
            # (The grid as plain data, which skops.io loads without trusting
            # its type.)
            grid = state.pop("_grid", None)
            if grid is not None:
                state["_grid_state"] = grid.__getstate__()
            selected = state.pop("_selected", None)
            if selected is not None:
                state["_encoding"] = {name: selected.__dict__[name] for name in
                                      ("classes_", "_single_output")
                                      if name in selected.__dict__}
            return state

    def __setstate__(self, state):
        encoding = state.pop("_encoding", None)
        grid = state.pop("_grid_state", None)
        finished = state.get("_finished_model")
        super().__setstate__(state)
        if grid is None:
            return
        self._grid = Grid.restored(grid)
        model = self.__dict__["_selected"] = self._plain_model(1.0, 1.0, "eta")
        model.__dict__.update(encoding)
        model.n_features_in_ = self.n_features_in_
        self._select(self.best_index_)
        if finished is not None:
            self.__dict__.update(_finished_model=finished, theta_=finished.theta_,
                                 intercept_=finished.intercept_,
                                 n_iter_=state["n_iter_"])

    # -- prediction -----------------------------------------------------------------

    def _inputs(self, X):
        """X for the model predicted with: an ndarray or CSR matrix of the fitted
        width as it is (the model checks it), anything else validated here, with
        this estimator's feature names and messages."""
        if ("feature_names_in_" in self.__dict__
                or not (type(X) is np.ndarray or sp.issparse(X))
                or X.ndim != 2 or X.shape[1] != self.n_features_in_):
            X = validate_data(self, X, reset=False, accept_sparse="csr",
                              dtype=np.float64)
        return X

    def __sklearn_tags__(self):
        # The targets and the scores of the plain estimator of these settings.
        tags, plain = super().__sklearn_tags__(), self._plain(
            psi=self.psi, phi=self.phi).__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags = plain.target_tags
        tags.regressor_tags, tags.classifier_tags = (plain.regressor_tags,
                                                     plain.classifier_tags)
        return tags
