"""GARegressorCV and GAClassifierCV: a grid of (eta, U) selected in one pass, the
selected configuration then finished as ``fit`` finishes a model.

Each holds a grid of runs (``_grid.Grid``, learned in lock-step) and the models of
the selected configuration (``_search.SearchGA``): its one-pass model, a plain
estimator that holds its loop, and the plain estimator's ``fit`` of it (epochs to
``tol``), which the CV estimator predicts with, while ``partial_fit`` continues
the grid's one pass.
"""


from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metaestimators import available_if

from ._classifier import (
    GAClassifier,
    _has_probabilities,
    check_stream_start,
    step_weights,
)
from ._docstrings import fill_docstring
from ._phi import CLASSIFICATION_PHI, REGRESSION_PHI
from ._regressor import GARegressor
from ._search import SearchGA
from ._state import fit_context, one_row_first


def _predicts_probabilities(search):
    # (The fitted phi's answer once fitted, the parameter's before.)
    return _has_probabilities(search.__dict__.get("_selected", search))


@fill_docstring
class GARegressorCV(RegressorMixin, SearchGA):
    """GARegressor with eta (and U) chosen by progressive validation in one pass.

    Every configuration of the grid ``etas`` x ``Us`` learns the data in lock-step
    (one read of the data serves the whole grid); the one with the least cumulative
    on-line matching loss, each prediction made before its example is learned, is
    selected, as HKW §V tune their learning rates. :meth:`fit` then finishes the
    selected configuration as :class:`GARegressor`'s ``fit`` does (its epochs until
    the on-line loss stops improving by ``tol``, averaged from the second), and
    predicts with that model; ``max_iter=1`` keeps the one-pass model.
    :meth:`partial_fit` continues the stream for the whole grid (one pass over the
    batch for every configuration), so the selection follows the stream, and
    predicts with the selected configuration's one-pass model.

    Progressive validation estimates the loss *while learning*, which favours
    rates that learn fast; k-fold CV (``cv=5``) estimates the loss of the model at
    the end of a pass, which can favour smaller rates on long, noisy streams.

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function (see :class:`GARegressor`).
    phi : [regression phi choices], default="identity"
        Transfer function (see :class:`GARegressor`).
    [search grid parameters]
    cv : None, int, cross-validation generator or iterable, default=None
        ``None`` selects by progressive validation. Otherwise the configuration
        with the least mean held-out matching loss over these folds is selected
        (each fold costs one more lock-step pass over its training rows) and
        finished on all the data; :meth:`partial_fit` is not available (k-fold
        needs the whole data set).
    [search run parameters]

    Attributes
    ----------
    [search attributes]

    See Also
    --------
    GARegressor : The estimator with a fixed configuration.
    sklearn.model_selection.GridSearchCV : k-fold search, one fit per fold and
        configuration.

    References
    ----------
    .. [HKW] D. P. Helmbold, J. Kivinen and M. K. Warmuth, "Relative loss bounds
       for single neurons", IEEE Trans. Neural Networks 10(6), 1999, Section V.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga import GARegressorCV
    >>> rng = np.random.RandomState(0)
    >>> X = rng.choice([-1.0, 1.0], size=(3000, 100))
    >>> y = np.tanh(X[:, 0] - X[:, 1])
    >>> model = GARegressorCV(psi="eg_pm", phi="tanh", etas=[0.01, 0.1, 1.0],
    ...                       Us=[0.5, 3.0]).fit(X, y)
    >>> model.eta_, model.U_
    (0.1, 3.0)
    >>> model.cv_results_["progressive_loss"].shape
    (6,)
    """

    _parameter_constraints = {
        **SearchGA._parameter_constraints,
        "phi": [StrOptions(set(REGRESSION_PHI))],
    }

    _plain = GARegressor

    def __init__(self, psi="identity", phi="identity", *, etas=9, Us="auto", p=2.0,
                 fit_intercept=True, cv=None, n_jobs=None, max_iter=1000, tol=1e-3,
                 random_state=None):
        self.psi = psi
        self.phi = phi
        self.etas = etas
        self.Us = Us
        self.p = p
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.n_jobs = n_jobs
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    @fit_context
    def fit(self, X, y, sample_weight=None, groups=None):
        """Learn the data once with every configuration and select the best.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs, learned in the given order.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets in the range of ``phi``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``,
            and held-out losses are weighted means.
        groups : array-like of shape (n_samples,), default=None
            Group labels for the splitter of ``cv`` (e.g. ``GroupKFold``); unused
            when ``cv`` is None.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, groups)

    @available_if(SearchGA._progressive)
    @one_row_first
    def partial_fit(self, X, y, sample_weight=None):
        """Continue the stream for every configuration: one on-line pass over
        (X, y) in the given order, then the selection again.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets in the range of ``phi``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``.

        Returns
        -------
        self : object
            Updated estimator.
        """
        return self._partial_fit(X, y, sample_weight)

    def predict(self, X):
        """Predict with the selected configuration's model (see
        :meth:`GARegressor.predict`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions, in the range of ``phi``.
        """
        model = self._predictor()
        return model.predict(self._inputs(X))

    def matching_activations(self, X, phi):
        """The selected configuration's :meth:`GARegressor.matching_activations`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.
        phi : str
            The transfer function whose matching loss is to be computed.

        Returns
        -------
        A : ndarray of shape (n_samples, n_outputs) or None
            The activations; None if the model predicts with another phi.
        """
        model = self._predictor()
        return model.matching_activations(self._inputs(X), phi)


@fill_docstring
class GAClassifierCV(ClassifierMixin, SearchGA):
    """GAClassifier with eta (and U) chosen by progressive validation in one pass.

    The classifier counterpart of :class:`GARegressorCV`: every configuration of
    ``etas`` x ``Us`` learns the data in lock-step and the one with the least
    cumulative on-line matching loss (log loss for logistic and softmax, the
    Perceptron's hinge for sign) is selected.

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function (see :class:`GARegressor`).
    phi : [classification phi choices], default="logistic"
        Transfer function (see :class:`GAClassifier`).
    [search grid parameters]
    cv : None, int, cross-validation generator or iterable, default=None
        ``None`` selects by progressive validation; otherwise by the mean held-out
        matching loss over these folds (stratified for an int, as in
        ``GridSearchCV``; see :class:`GARegressorCV`).
    [search run parameters]
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes (see :class:`GAClassifier`): a multiplier of each
        trial's step, as a sample weight, which also weighs the losses that select
        the configuration (progressive and held-out), so that the selection
        follows the weighted objective.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    [search attributes]

    See Also
    --------
    GAClassifier : The estimator with a fixed configuration.
    GARegressorCV : The same search for regression.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_ga import GAClassifierCV
    >>> X, y = load_iris(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> order = np.random.RandomState(0).permutation(len(y))
    >>> clf = GAClassifierCV(phi="softmax", etas=[0.001, 0.01, 0.1, 1.0])
    >>> clf = clf.fit(X[order], y[order])
    >>> clf.eta_
    1.0
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        **SearchGA._parameter_constraints,
        "phi": [StrOptions(set(CLASSIFICATION_PHI))],
        "class_weight": GAClassifier._parameter_constraints["class_weight"],
    }

    _plain = GAClassifier

    def __init__(self, psi="identity", phi="logistic", *, etas=9, Us="auto", p=2.0,
                 fit_intercept=True, cv=None, n_jobs=None, max_iter=1000, tol=1e-3,
                 random_state=None, class_weight=None):
        self.psi = psi
        self.phi = phi
        self.etas = etas
        self.Us = Us
        self.p = p
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.n_jobs = n_jobs
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.class_weight = class_weight

    @fit_context
    def fit(self, X, y, sample_weight=None, groups=None):
        """Learn the data once with every configuration and select the best.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs, learned in the given order.
        y : array-like of shape (n_samples,)
            Class labels (an int ``cv`` makes stratified folds of them).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``,
            and held-out losses are weighted means.
        groups : array-like of shape (n_samples,), default=None
            Group labels for the splitter of ``cv`` (e.g. ``GroupKFold``); unused
            when ``cv`` is None.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, groups)

    @available_if(SearchGA._progressive)
    @one_row_first
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Continue the stream for every configuration: one on-line pass over
        (X, y) in the given order, then the selection again.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Class labels, all among ``classes``.
        classes : array-like of shape (n_classes,), default=None
            All the classes that can appear. Required on the first call, optional
            (and checked) afterwards.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``.

        Returns
        -------
        self : object
            Updated estimator.
        """
        check_stream_start(self, classes)
        return self._partial_fit(X, y, sample_weight, classes=classes)

    @property
    def classes_(self):
        selected = self.__dict__.get("_selected")
        if selected is None or "classes_" not in selected.__dict__:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute 'classes_'")
        return selected.classes_

    def _plain_extra(self):
        return {"class_weight": self.class_weight}

    def _step_weights(self, Y, sample_weight):
        return step_weights(self, Y, sample_weight)

    def _step_weights_free(self):
        return self.class_weight is None

    def decision_function(self, X):
        """The selected configuration's :meth:`GAClassifier.decision_function`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Positive scores favour ``classes_[1]`` in the binary case.
        """
        model = self._predictor()
        return model.decision_function(self._inputs(X))

    def predict(self, X):
        """Predict class labels with the selected configuration's model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Predicted classes.
        """
        model = self._predictor()
        return model.predict(self._inputs(X))

    @available_if(_predicts_probabilities)
    def predict_proba(self, X):
        """The selected configuration's :meth:`GAClassifier.predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities of the classes, in the order of ``classes_``.
        """
        model = self._predictor()
        return model.predict_proba(self._inputs(X))

    @available_if(_predicts_probabilities)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities of the classes, in the order of ``classes_``.
        """
        model = self._predictor()
        return model.predict_log_proba(self._inputs(X))

