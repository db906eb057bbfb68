"""River learners: GA(psi, phi, Theta, eta) on streams of dicts.

:class:`GARegressor` and :class:`GAClassifier` of this module are `River
<https://riverml.xyz>`_ estimators: ``learn_one`` / ``predict_one`` on one dict
(any mapping) of features at a time, ``learn_many`` / ``predict_many`` on the
DataFrames River takes (pandas, polars: read through narwhals, which River
depends on), so that they fit in River's pipelines,
``evaluate.progressive_val_score`` and model selection. They run the compiled
trial loop of :class:`sklearn_ga.GARegressor` and take the same parameters. A
row costs O(its keys), whatever the number of features seen: its names map to
columns, and it runs as (columns, values) through the loop's CSR trial in one
compiled call (:class:`~sklearn_ga._kernel.DictRows`); predictions read the
weights of its columns only. River is an optional dependency, and the only one
of ``pip install sklearn-ga[river]``.

A feature enters the model when a learned row first brings it (columns in the
order the features appeared; one output's theta keeps spare columns, doubled when
full, so that a new feature costs O(1) amortized), its parameter at Theta_1's
value: 0, or 1 for ``"sphere"`` and ``"simplex"``. Predictions ignore the
features the model does not hold, and a feature missing from a row is 0 in that
row. For the unnormalized psi (``"identity"``, ``"exp"``) and for ``"pnorm"``,
whose normalizer ``||theta||_q`` gains nothing from a parameter at 0, the model
is the one that would have held the feature from the start. A normalized psi
shares a fixed total among the features, so a new one takes its share from the
others, its term added to each row's normalizer Z in O(1): for ``"softmax"`` it
adds ``e^0`` to Z (in Z's units), each weight held shrinks by the factor
``Z / (Z + 1)`` and the new one starts at ``1 / (Z + 1)``, the weights staying
on the simplex; for ``"eg_pm"`` it adds ``e^0 + e^-0 = 2`` at weight 0, each
weight held shrinking by ``Z / (Z + 2)`` (``||w||_1 <= U`` still); for
``"sphere"`` and ``"simplex"`` its parameter 1 joins the norm of theta, the
weights staying on the sphere of radius ``U`` and on the simplex.
"""

try:
    from river import base
except ImportError as error:
    raise ImportError(
        "sklearn_ga.river needs River, an optional dependency of sklearn-ga: install "
        "it with pip install 'sklearn-ga[river]'."
    ) from error

import math

import narwhals.stable.v2 as nw
import numpy as np

from ._classifier import GAClassifier as _SklearnClassifier
from ._classifier import class_probabilities
from ._docstrings import fill_docstring
from ._phi import PHI
from ._regressor import GARegressor as _SklearnRegressor
from ._river_inputs import frame_values
from ._river_learner import _Learner

__all__ = ["GAClassifier", "GARegressor"]

# Labels of a binary classifier, as River gives them, and their codes.
_BINARY_CODES = {False: 0, True: 1}


def _series(X, values):
    """The predictions ``values`` of the rows of the frame X, as a Series of X's
    library (pandas: indexed as X)."""
    if nw.dependencies.is_pandas_dataframe(X):
        return nw.get_native_namespace(X).Series(values, index=X.index)
    return nw.new_series("", values, backend=nw.get_native_namespace(X)).to_native()


def _frame(X, P, classes):
    """The probabilities P (one column a class) of the rows of the frame X, as a
    DataFrame of X's library (pandas: indexed as X, a column a label; others, whose
    column names are strings: str of the label)."""
    namespace = nw.get_native_namespace(X)
    if nw.dependencies.is_pandas_dataframe(X):
        return namespace.DataFrame(P, index=X.index, columns=classes)
    return nw.from_dict({str(label): P[:, j] for j, label in enumerate(classes)},
                        backend=namespace).to_native()


@fill_docstring
class GARegressor(_Learner, base.MiniBatchRegressor):
    """General additive on-line regressor GA(psi, phi, Theta, eta) for River.

    The algorithm of :class:`sklearn_ga.GARegressor` (KW01 Figure 5) on a stream of
    dicts: ``predict_one(x)`` is ``phi(psi(theta) . x + b)``, and ``learn_one(x, y)``
    predicts, adds the loss of that prediction to ``cumulative_loss_``, then
    updates, as one row of :meth:`sklearn_ga.GARegressor.partial_fit` does (the same
    compiled loop, the same numbers).

    Features enter the model as the stream brings them, as the module's
    docstring describes (new ones at Theta_1's value).

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function, as in :class:`sklearn_ga.GARegressor`:
        [psi descriptions]
    phi : [one-output regression phi choices], default="identity"
        Transfer function; the loss is its matching loss. Targets must lie in its
        range.
    eta : float, "theory" or "auto", default="auto"
        Learning rate, > 0; ``"theory"``: KW01 Theorem 3's rate of the rows seen
        so far, as one-row ``partial_fit`` calls of
        :class:`sklearn_ga.GARegressor` compute it (a row that raises its bound
        lowers it first; the intercept's rate that of ``intercept_eta="auto"``,
        over the features held when it falls); ``"auto"``: ``"theory"`` for a psi
        with a scale U (``"eg_pm"``, ``"sphere"``: a number is a rate for one U),
        for ``"eg_pm"`` tuned by the loss so far as KW01 eq. (31) tunes it (the
        rate falls where no linear model fits the rows: see
        doc/user_guide/streaming.rst), else 0.05. Behind River's
        ``preprocessing.StandardScaler`` the defaults (GD and EG±) have a lower
        progressive MAE than River's ``linear_model.LinearRegression()`` on
        River's TrumpApproval and ChickWeights streams
        (doc/user_guide/defaults.rst).
    U : float or "auto", default="auto"
        Scale of ``psi="eg_pm"`` (``||w||_1 <= U``) and radius of ``psi="sphere"``.
        ``"auto"``: 1 at first (a stream has no first batch to fit a scale on),
        doubled with ``eta="theory"`` for ``"eg_pm"`` whenever the weights press on
        the ball (an l1 norm of at least 3/4 of U, checked every
        ``max(32, n / 8)`` rows), the weights kept; the U in use is ``U_``.
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2.
    update : {"explicit", "implicit", "natural"}, default="implicit"
        Update rule, as in :class:`sklearn_ga.GARegressor`. The default, the
        implicit rule of KW01 eq. (22), is stable at any rate: streams arrive
        unscaled, and an explicit step of ``phi="identity"`` diverges once
        ``eta ||x||^2 > 2``.
    loss : {"matching", "square"}, default="matching"
        The matching loss of phi, or the square loss (GA_L, KW01 eq. 35).
    Y : float or None, default=None
        Clip each prediction to ``[-Y, Y]`` (GA^Y, KW01 §4). ``None``: no clipping.
    fit_intercept : bool, default=True
        Whether to learn an intercept b (by gradient descent).

    Attributes
    ----------
    weights : dict
        The weights psi(theta) of the features held, by name.
    intercept : float
        The intercept b.
    U_ : float
        The U in use (``U``, or the one ``U="auto"`` reached).
    t_ : int
        Number of trials (rows learned).
    cumulative_loss_ : float
        Sum of the (sample-weighted) losses of the predictions made before each
        update: Loss_phi(GA, S) in the papers.

    See Also
    --------
    sklearn_ga.GARegressor : The same learner as a scikit-learn estimator.
    GAClassifier : The classifier.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> from sklearn_ga.river import GARegressor
    >>> model = preprocessing.StandardScaler() | GARegressor(psi="eg_pm")
    >>> evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    MAE: 0.712995
    """

    _estimator = _SklearnRegressor
    _default_eta = 0.05
    _multiclass = False
    _binary_classes = ()

    def __init__(self, psi="identity", phi="identity", eta="auto", U="auto", p=2.0,
                 update="implicit", loss="matching", Y=None, fit_intercept=True):
        super().__init__(psi, phi, eta, U, p, update, loss, Y, fit_intercept)
        if PHI[phi].rowwise:
            raise ValueError(
                f"phi={phi!r} predicts a row of the simplex, not one number; use "
                f"sklearn_ga.river.GAClassifier(phi={phi!r}) for classes, or "
                "sklearn_ga.GARegressor for simplex targets."
            )

    def _encode(self, y, row):
        row[0] = self._target_value(y)

    def _target_value(self, y):
        """The target y as a float, in the range of phi."""
        # (As the features: a number, not a string that reads as one.)
        try:
            math.isfinite(y)
        except (TypeError, ValueError):
            raise ValueError(f"y must be a number; got {y!r}.") from None
        except OverflowError:
            raise ValueError("y is an int beyond the range of a float64.") from None
        target = float(y)
        phi = PHI[self.phi]
        if not (math.isfinite(target) and phi.inside(target)):
            raise ValueError(
                f"phi={self.phi!r} predicts values in {phi.range_text()}, but y is "
                f"{target!r}. Rescale y into that range or choose another phi "
                "(phi='identity' accepts any finite target)."
            )
        return target

    def predict_one(self, x):
        """``phi(psi(theta) . x + b)`` for the features ``x`` (dict).

        Parameters
        ----------
        x : dict
            Features by name.

        Returns
        -------
        float
            The prediction.
        """
        output = self._activations_one(x, outputs=True)
        if output is None:
            output = self._outputs(np.array([[self._activations_one(x)]])).item(0)
        return float(output)

    def predict_many(self, X):
        """:meth:`predict_one` of each row of ``X``.

        Parameters
        ----------
        X : DataFrame
            One row per sample, one column per feature (pandas, polars, ...).

        Returns
        -------
        Series
            The predictions, a Series of X's library (pandas: indexed as ``X``).
        """
        A = self._activations(*frame_values(X, type(self).__name__))
        return _series(X, self._outputs(A)[:, 0])

    def _outputs(self, A):
        with np.errstate(over="ignore"):
            outputs = PHI[self.phi].transfer(A)
        if not np.all(np.isfinite(outputs)):
            raise ValueError(
                f"The predictions of {type(self).__name__} overflowed (phi="
                f"{self.phi!r}); the inputs are far outside the training range."
            )
        return outputs



@fill_docstring
class GAClassifier(_Learner, base.MiniBatchClassifier):
    """General additive on-line classifier GA(psi, phi, Theta, eta) for River.

    The algorithm of :class:`sklearn_ga.GAClassifier` on a stream of dicts. With
    ``phi`` = ``"logistic"``, ``"tanh"`` or ``"sign"`` it is binary: labels
    ``False`` and ``True`` (or 0 and 1) are the targets 0 and 1 (-1 and 1 for
    ``"tanh"`` and ``"sign"``), and the defaults take the steps of River's
    ``linear_model.LogisticRegression()``. With ``phi="softmax"`` it is multi-class:
    one row of Theta per class, a class entering when a learned row first brings it,
    with its row at Theta_1's value and intercept 0 (until two classes are known a
    trial changes nothing: the one class has probability 1).

    Features enter the model as the stream brings them, as the module's
    docstring describes (new ones at Theta_1's value).

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function, as in :class:`sklearn_ga.GARegressor`:
        [psi descriptions]
    phi : [classification phi choices], default="logistic"
        Transfer function; the loss is its matching loss. ``"sign"`` (Perceptron,
        normalized Winnow) makes no probabilistic predictions.
    eta : float, "theory" or "auto", default="auto"
        Learning rate, > 0, or ``"theory"``, as in :class:`GARegressor`;
        ``"auto"``: ``"theory"`` for a psi with a scale U, else 0.01 (the steps
        of River's ``linear_model.LogisticRegression()``).
    U : float or "auto", default="auto"
        Scale of ``psi="eg_pm"`` and radius of ``psi="sphere"``, as in
        :class:`GARegressor` (``"auto"``: doubled from 1 for EG± as the weights
        need).
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2.
    update : {"explicit", "implicit", "natural"}, default="explicit"
        Update rule, as in :class:`sklearn_ga.GAClassifier`.
    loss : {"matching", "square"}, default="matching"
        The matching loss of phi, or the square loss (GA_L, KW01 eq. 35).
    Y : float or None, default=None
        Clip each prediction to ``[-Y, Y]`` (GA^Y, KW01 §4). ``None``: no clipping.
    fit_intercept : bool, default=True
        Whether to learn an intercept b (by gradient descent).

    Attributes
    ----------
    weights : dict
        The weights psi(theta) of the features held, by name (by class, then name,
        for ``phi="softmax"``).
    intercept : float or dict
        The intercept b (by class for ``phi="softmax"``).
    U_ : float
        The U in use (``U``, or the one ``U="auto"`` reached).
    t_ : int
        Number of trials (rows learned).
    cumulative_loss_ : float
        Sum of the losses of the predictions made before each update.

    See Also
    --------
    sklearn_ga.GAClassifier : The same learner as a scikit-learn estimator.
    GARegressor : The regressor.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics, preprocessing
    >>> from sklearn_ga.river import GAClassifier
    >>> model = preprocessing.StandardScaler() | GAClassifier(psi="eg_pm")
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 89.04%
    """

    _estimator = _SklearnClassifier
    _default_eta = 0.01
    _binary_classes = (False, True)

    def __init__(self, psi="identity", phi="logistic", eta="auto", U="auto", p=2.0,
                 update="explicit", loss="matching", Y=None, fit_intercept=True):
        super().__init__(psi, phi, eta, U, p, update, loss, Y, fit_intercept)

    @property
    def _multiclass(self):
        return PHI[self.phi].rowwise

    def _encode(self, y, row):
        if self._rowwise:
            self._check_label(y)
            row[:] = 0.0
            if len(self._classes) > 1:
                row[self._classes.index(y)] = 1.0
            return
        row[0] = self._target_value(y)

    def _target_value(self, y):
        """The target of a binary label: 1 for True, 0 (-1 for tanh and sign) for
        False."""
        try:
            code = _BINARY_CODES[y]
        except (KeyError, TypeError):
            raise ValueError(
                f"{type(self).__name__}(phi={self.phi!r}) is a binary classifier of "
                f"labels False and True (or 0 and 1); got {y!r}. Use phi='softmax' "
                "for other labels or more classes."
            ) from None
        return 1.0 if code else self._low_target

    def predict_proba_one(self, x):
        """Probabilities of the classes for the features ``x`` (dict).

        Parameters
        ----------
        x : dict
            Features by name.

        Returns
        -------
        dict
            Probability by label; empty before a softmax classifier has seen a
            label.
        """
        self._check_probabilities()
        if not self._classes:
            return {}
        P = self._probabilities(np.reshape(self._activations_one(x), (1, -1)))[0]
        return dict(zip(self._classes, P.tolist(), strict=True))

    def predict_one(self, x):
        """The most probable label for the features ``x`` (dict), or None before a
        softmax classifier has seen a label.

        Parameters
        ----------
        x : dict
            Features by name.

        Returns
        -------
        label or None
        """
        if not self._classes:
            return None
        A = self._activations_one(x)
        # (Binary: a float, a > 0 is True, as sklearn_ga.GAClassifier decides.)
        return self._classes[A > 0 if type(A) is float else self._codes(A)]

    def predict_proba_many(self, X):
        """:meth:`predict_proba_one` of each row of ``X``.

        Parameters
        ----------
        X : DataFrame
            One row per sample, one column per feature (pandas, polars, ...).

        Returns
        -------
        DataFrame
            One column of probabilities per class, a DataFrame of X's library
            (pandas: indexed as ``X``).
        """
        self._check_probabilities()
        names, values = frame_values(X, type(self).__name__)
        P = self._probabilities(self._activations(names, values)) if self._classes \
            else np.zeros((values.shape[0], 0))
        return _frame(X, P, self._classes)

    def predict_many(self, X):
        """:meth:`predict_one` of each row of ``X``.

        Parameters
        ----------
        X : DataFrame
            One row per sample, one column per feature (pandas, polars, ...).

        Returns
        -------
        Series
            The predicted labels, a Series of X's library (pandas: indexed as
            ``X``).
        """
        names, values = frame_values(X, type(self).__name__)
        if not self._classes:
            return _series(X, [None] * values.shape[0])
        return _series(X, self._labels(self._activations(names, values)))

    def _check_probabilities(self):
        if PHI[self.phi].probability is None:
            raise NotImplementedError(
                "phi='sign' (Perceptron / normalized Winnow) makes no probabilistic "
                "predictions; use predict_one, or phi='logistic'."
            )

    def _probabilities(self, A):
        if len(self._classes) == 1:
            return np.ones((A.shape[0], 1))
        return class_probabilities(A, self.phi)

    def _labels(self, A):
        return [self._classes[code] for code in self._codes(A).tolist()]

    def _codes(self, A):
        """The class codes of activations A (m, k), or of one row's (k,) for
        phi='softmax'. (Binary: a > 0 is True, as sklearn_ga.GAClassifier
        decides.)"""
        if self._rowwise:
            return A.argmax(axis=-1)
        return A[:, 0] > 0

    @classmethod
    def _unit_test_params(cls):
        yield from super()._unit_test_params()
        yield {"phi": "softmax"}
        yield {"psi": "eg_pm", "phi": "softmax"}
