"""GAClassifier: the general additive algorithm for classification."""

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import column_or_1d

from ._base import BaseGA
from ._docstrings import fill_docstring
from ._phi import CLASSIFICATION_PHI, PHI
from ._psi import PSI
from ._state import fit_context, one_row_first, read_only


def _class_labels(classes):
    """The sorted labels of ``classes=``, checked as scikit-learn checks them."""
    try:
        if np.ndim(classes) != 1:
            raise ValueError(f"a 1-D array is needed, got shape {np.shape(classes)}.")
        return unique_labels(classes)  # reads the labels' types before converting
    except ValueError as error:
        raise ValueError(
            f"classes={classes!r} are not class labels: {error} Pass a 1-D array of "
            "labels of one type, e.g. classes=np.unique(y_all)."
        ) from None


def _same_labels(classes, labels):
    """Whether ``classes`` are these (checked) labels, in order, of their kind."""
    classes = np.asarray(classes)
    return classes.dtype.kind == labels.dtype.kind and np.array_equal(classes, labels)


def class_probabilities(A, phi):
    """Class probabilities of the activations A (m, k) of a classifier of this phi
    (see :meth:`GAClassifier.predict_proba`)."""
    entry = PHI[phi]
    P = entry.probability(A)
    if entry.rowwise:
        return P
    if P.shape[1] == 1:
        return np.hstack([1.0 - P, P])
    total = P.sum(axis=1, keepdims=True)
    uniform = total[:, 0] == 0
    P[uniform] = 1.0
    return P / np.where(uniform[:, None], P.shape[1], total)


def _class_codes(Y):
    """The index in ``classes_`` of each row of encoded targets Y."""
    return (Y[:, 0] > 0).astype(np.intp) if Y.shape[1] == 1 else np.argmax(Y, axis=1)


def _class_weights(estimator, Y):
    """The weight of each class, from ``class_weight`` and the labels of Y."""
    class_weight, classes = estimator.class_weight, estimator.classes_
    try:
        weights = compute_class_weight(class_weight, classes=classes,
                                       y=classes[_class_codes(Y)])
    except ValueError as error:
        how = ("weighs the classes by their frequencies in the y of each call, and "
               "every class must be in it" if isinstance(class_weight, str) else
               "maps class labels to weights")
        raise ValueError(
            f"class_weight={class_weight!r} {how}: {error} (classes "
            f"{classes.tolist()!r})."
        ) from None
    if not np.all(np.isfinite(weights) & (weights >= 0)):
        raise ValueError(
            f"class_weight must give finite non-negative weights; got "
            f"{dict(zip(classes.tolist(), weights.tolist(), strict=True))!r}."
        )
    return weights


def step_weights(estimator, Y, sample_weight):
    """The multiplier of each trial's step: ``class_weight`` multiplies it, as a
    sample weight would."""
    if estimator.class_weight is None:
        return sample_weight
    weights = _class_weights(estimator, Y)[_class_codes(Y)]
    return weights if sample_weight is None else sample_weight * weights


def _balanced(class_weight):
    return isinstance(class_weight, str) and class_weight == "balanced"


def check_stream_start(estimator, classes):
    """The checks of a classifier's first ``partial_fit`` (a stream's start):
    ``classes`` given, and no ``class_weight="balanced"``."""
    if hasattr(estimator, "theta_"):
        return
    if classes is None:
        raise ValueError(
            "classes must be passed on the first call to partial_fit: the "
            "classifier has to know every label in advance, e.g. "
            "partial_fit(X, y, classes=np.unique(y_all))."
        )
    if _balanced(estimator.class_weight):
        raise ValueError(
            "class_weight 'balanced' is not supported for partial_fit (the "
            "frequencies of the classes are those of the whole stream). Compute "
            "them with compute_class_weight('balanced', classes=classes, y=y) on "
            "a large enough sample of the stream, and pass them as a dict "
            "class_weight."
        )


def _has_probabilities(estimator):
    fitted = getattr(estimator, "_fitted", None)
    phi = estimator.phi if fitted is None else fitted.phi_name
    if isinstance(phi, str) and phi in PHI and PHI[phi].probability is None:
        raise AttributeError(
            f"phi={phi!r} makes no probabilistic predictions; use "
            "decision_function, or phi='logistic'."
        )
    return True


@fill_docstring
class GAClassifier(ClassifierMixin, BaseGA):
    """General additive on-line classifier GA(psi, phi, Theta, eta) (Kivinen, Warmuth).

    Labels are encoded as targets in the range of phi and learned with the matching
    loss of phi (KW01 Figure 5): ``Theta <- Theta - eta * (y_hat - y) x^T`` with
    weights ``coef_ = psi(Theta)``.

    ========== ================================== =====================================
    phi        targets                            outputs (k)
    ========== ================================== =====================================
    logistic   {0, 1}; one-vs-rest if > 2         1 if binary, else one per class;
               classes                            probabilities normalized over classes
    softmax    one-hot rows                       one per class (multinomial)
    tanh       {-1, +1}; one-vs-rest              as logistic; P = (1 + tanh a) / 2
    sign       {-1, +1}; one-vs-rest              as logistic; no probabilities
               (Perceptron with psi="identity",
               normalized Winnow with "softmax")
    ========== ================================== =====================================

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function (see :class:`GARegressor`).
    phi : [classification phi choices], default="logistic"
        Transfer function; its matching loss is the loss (log loss for logistic and
        softmax; with ``"sign"`` the update is the Perceptron's: a step on mistakes,
        where ``a = 0`` counts as a mistake; an exact tie is decided in floating
        point, where the normalizers of softmax, EG± and pnorm, kept up to date
        incrementally within a call, can round it to +-1e-17, so on integer
        inputs a stream split into calls may decide a tie otherwise).
    eta : float or "theory", default="theory"
        Learning rate of the weights, > 0, or ``"theory"`` for KW01 Theorem 3's
        ``1 / (2 b c)`` for the rows seen so far, lowered before a row of larger
        bound b (see :class:`GARegressor`). For ``phi="sign"``, which has no c of
        eq. (29), c = 1, that of tanh: for the Perceptron (``psi="identity"``,
        from Theta = 0, ``intercept_eta="eta"``) any constant rate makes the same
        predictions, and the rate matters for the other ``psi``. For
        ``psi="eg_pm"``, HKW's EG± rate.
    intercept_eta : float, "auto" or "eta", default="auto"
        Learning rate of the intercepts: the weights' (``"eta"``), their own share
        of Theorem 3's budget with ``eta="theory"`` (``"auto"``; with a numeric
        ``eta``, the same as ``"eta"``), or a number (see :class:`GARegressor`).
    U : float or "auto", default="auto"
        Scale of EG± (``psi="eg_pm"``): ``||w||_1 <= U`` for each class; radius
        of ``psi="sphere"``: ``||w||_2 = U``. ``"auto"``: chosen from the data of
        the first call and kept in ``U_`` (see :class:`GARegressor`; a label is an
        activation of +-4).
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2.
    update : {"explicit", "implicit", "natural"}, default="explicit"
        Update rule: KW01 eq. (23), the exact implicit rule of eq. (22)/(25) (not
        for ``phi="sign"``), or the natural rule of KMWW eq. (5) (see
        :class:`GARegressor`).
    loss : {"matching", "square"}, default="matching"
        The matching loss of phi, or the square loss ``0.5 ||phi(a) - y||^2``
        updated by its gradient (GA_L, KW01 eq. 35); not for ``phi="sign"``.
    Y : float or None, default=None
        Clip the predictions phi(a) to ``[-Y, Y]`` before they are charged and used
        in the update (GA^Y, KW01 §4); for ``phi="logistic"`` and ``"tanh"``.
        :meth:`predict_proba` stays unclipped, so that it ranks the classes as
        :meth:`decision_function` does.
    alpha : float, default=0.0
        Penalty toward the start Theta_1, >= 0: each trial first scales Theta by
        ``1 - eta * alpha`` (see :class:`GARegressor`); with ``psi="identity"``,
        ``SGDClassifier``'s ``penalty="l2"``. Not for the geodesic psi.
    learning_rate : {"constant", "invscaling"}, default="constant"
        The rate of each trial: ``eta_``, or ``eta_ / t^power_t`` at the t-th trial
        since the model was reset (see :class:`GARegressor`); with
        ``psi="identity"``, ``SGDClassifier(learning_rate="invscaling")``.
    power_t : float, default=0.5
        The exponent of ``"invscaling"``, >= 0 (``SGDClassifier``'s default).
    fit_intercept : bool, default=True
        Whether to learn intercepts.
    max_iter : int, default=1000
        Maximum number of epochs in :meth:`fit`.
    tol : float or None, default=1e-3
        Stopping criterion of :meth:`fit` (see :class:`GARegressor`; with
        ``early_stopping``, on the validation accuracy; also for Ctrl-C).
    n_iter_no_change : int, default=5
        Number of epochs without improvement before :meth:`fit` stops.
    early_stopping : bool, default=False
        Whether :meth:`fit` holds out a fraction ``validation_fraction`` of the
        samples, stratified, drawn with ``random_state`` as SGDClassifier draws them,
        scores the model on them with :meth:`score` (accuracy) after each epoch, and
        stops when that score has not improved on the best by at least ``tol`` for
        ``n_iter_no_change`` consecutive epochs. The model returned is the last
        one, as SGDClassifier's, not the best scored; the scores are in
        ``validation_scores_``. :meth:`partial_fit` refuses it on a model not yet
        fitted (a stream has no held-out set) and ignores it after :meth:`fit`, as
        SGDClassifier does.
    validation_fraction : float, default=0.1
        Fraction of the samples held out for early stopping, in (0, 1).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as SGDClassifier's: a trial's step is multiplied
        by the weight of its class (and by its sample weight), as by a sample
        weight, in ``cumulative_loss_`` too. A dict ``{label: weight}`` (absent
        classes weigh 1), or ``"balanced"``: ``n_samples / (n_classes *
        np.bincount(y))`` on the y of each call. :meth:`partial_fit` refuses
        ``"balanced"`` on its first call, as SGDClassifier does (pass the weights
        of ``compute_class_weight("balanced", ...)`` on a sample of the stream as
        a dict); after :meth:`fit`, each call balances its own batch. Unlike
        SGDClassifier's one-vs-rest problems, which weigh only their positive
        samples, every output of a trial takes the weighted step.
    shuffle : bool, default=True
        Whether :meth:`fit` shuffles the samples before each epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    warm_start : bool, default=False
        Whether :meth:`fit` continues from the current parameters.
    average : bool, int or "auto", default=False
        ``"auto"``: :meth:`fit` averages from its noise floor on, and
        :meth:`partial_fit` never (:class:`GARegressor`'s default; not the
        classifier's, whose last weights classified bundled data sets better
        than their averages, doc/user_guide/defaults.rst). Otherwise SGD's
        averaging: ``coef_`` and ``intercept_`` become the mean of the
        weights and intercepts after each trial, from the first (``True``) or
        the ``average``-th trial on (see :class:`GARegressor`); ``theta_`` and
        ``cumulative_loss_`` stay plain.
    verbose : int, default=0
        Print, for each epoch of :meth:`fit`, its time, its on-line loss per
        trial, the rates and the trials seen.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (k, n_features)
        The weights ``psi(theta_)``; k = 1 for binary problems except with
        ``phi="softmax"`` (k = 2), else k = n_classes. Read-only, computed when
        first read after a call (with ``average``, their mean).
    intercept_ : ndarray of shape (k,)
        The intercepts (read-only, like ``theta_``; with ``average``, their mean).
    eta_ : float
        The learning rate of the weights in use at the end of the last call
        (``eta``, or the rate that ``"theory"`` has come to for the rows seen).
    U_ : float
        The ``U`` in use: ``U``, or the one ``U="auto"`` chose (and doubled);
        1.0 for ``U="auto"`` where psi ignores U.
    intercept_eta_ : float
        The learning rate of the intercepts in use (0.0 without intercept).
    n_eta_changes_ : int
        How many times ``eta="theory"`` lowered the rates since the model was
        reset (0 for a numeric ``eta``).
    theta_ : ndarray of shape (k, n_features)
        The parameters Theta: a read-only view of the arrays of the compiled loop, which
        later ``partial_fit`` calls update in place (assign a new array to start from
        other parameters). For ``psi="sphere"`` and ``"simplex"`` only their direction
        counts (the weights are ``U theta / ||theta||`` and ``theta**2 /
        ||theta||**2``): a row is rescaled by a power of 2 when its largest ``|theta|``
        leaves ``[2**-200, 2**200]``.
    n_iter_ : int
        Number of epochs run by the last call (1 for :meth:`partial_fit`).
    t_ : int
        Number of trials seen since the model was reset.
    cumulative_loss_ : float
        Sum of the losses (see ``loss``) of the predictions made before each
        update.
    [run attributes]

    See Also
    --------
    GARegressor : The same algorithm for regression.
    sklearn.linear_model.SGDClassifier : Equal to ``GAClassifier(phi="logistic")``
        with ``loss="log_loss"``, no penalty and a constant rate.
    sklearn.linear_model.Perceptron : Equal to ``GAClassifier(phi="sign")`` with
        ``eta0 = 2 * eta``.

    References
    ----------
    .. [KW01] J. Kivinen and M. K. Warmuth, "Relative loss bounds for
       multidimensional regression problems", Machine Learning 45, 2001.
    .. [HKW] D. P. Helmbold, J. Kivinen and M. K. Warmuth, "Relative loss bounds
       for single neurons", IEEE Trans. Neural Networks 10(6), 1999.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_ga import GAClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(),
    ...                     GAClassifier(phi="softmax", eta=0.1, random_state=0))
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    >>> clf.predict_proba(X[:1]).argmax()
    np.int64(0)
    """

    _parameter_constraints = {
        **BaseGA._parameter_constraints,
        "phi": [StrOptions(set(CLASSIFICATION_PHI))],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    _target_validation = {"multi_output": False}

    def __init__(self, psi="identity", phi="logistic", *, eta="theory",
                 intercept_eta="auto", U="auto", p=2.0,
                 update="explicit", loss="matching", Y=None, alpha=0.0,
                 learning_rate="constant", power_t=0.5, fit_intercept=True,
                 max_iter=1000, tol=1e-3, n_iter_no_change=5,
                 early_stopping=False, validation_fraction=0.1, class_weight=None,
                 shuffle=True, random_state=None, warm_start=False, average=False,
                 verbose=0):
        self.psi = psi
        self.phi = phi
        self.eta = eta
        self.intercept_eta = intercept_eta
        self.U = U
        self.p = p
        self.update = update
        self.loss = loss
        self.Y = Y
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.class_weight = class_weight
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.average = average
        self.verbose = verbose

    def _encode_targets(self, y, *, first_call, classes=None):
        if first_call or not (isinstance(y, np.ndarray) and y.ndim == 1):
            y = column_or_1d(y, warn=True)  # (a validated batch's 1-D array is one)
        if first_call:
            check_classification_targets(y)
        # On later calls, classes= is usually the fitted classes again: checked by
        # comparison (the full check costs more than learning a small batch).
        if classes is not None and (first_call
                                    or not _same_labels(classes, self.classes_)):
            classes = _class_labels(classes)
        codes = None
        if first_call:
            # (The codes of y's own labels come with them: no search of y after.)
            labels, codes = (np.unique(y, return_inverse=True) if classes is None
                             else (classes, None))
            if labels.shape[0] < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 classes; got "
                    f"{labels.shape[0]} class: {labels.tolist()!r}. Pass all classes "
                    "with partial_fit(..., classes=...)."
                )
        else:
            labels = self.classes_
            if classes is not None and not np.array_equal(classes, labels):
                raise ValueError(
                    f"classes={classes.tolist()!r} differs from the classes of the "
                    f"first call, {labels.tolist()!r}; the set of classes is fixed by "
                    "the first call to partial_fit."
                )
        # A label is known iff it sits where searchsorted places it (no extra sort).
        try:
            known = True
            if codes is None:
                codes = np.searchsorted(labels, y)
                known = labels[np.minimum(codes, labels.shape[0] - 1)] == y
        except TypeError:  # object labels that do not compare (str against int)
            known = np.zeros(y.shape[0], dtype=bool)
        if not np.all(known):
            # (On a later call y was not checked: labels that are all known are.)
            check_classification_targets(y)
            unseen = np.unique(y[~known])
            raise ValueError(
                f"y contains labels {unseen.tolist()!r} that are not among the "
                f"classes {labels.tolist()!r}; pass every class in classes= on the "
                f"first call to partial_fit, or {self._restart_hint()}."
            )
        # Two classes are one output of a coordinate-wise phi: low or 1.
        phi = PHI[self.phi]
        k = 1 if labels.shape[0] == 2 and not phi.rowwise else labels.shape[0]
        Y = np.full((y.shape[0], k), phi.low)
        if k == 1:
            Y[codes == 1, 0] = 1.0
        else:
            Y[np.arange(y.shape[0]), codes] = 1.0
        if first_call:
            self.classes_, = read_only(labels)
        return Y

    def _decode_targets(self, Y):
        return self.classes_[_class_codes(Y)]

    def _step_weights(self, Y, sample_weight):
        return step_weights(self, Y, sample_weight)

    def _one_row_targets(self, y, kept):
        """The encoded targets (k,) of a one-row ``partial_fit`` if y is an
        ndarray of one known label (of a numeric or str dtype); else None. The
        classes' targets are encoded once for the kept loop."""
        if type(y) is not np.ndarray or y.shape != (1,) or y.dtype.kind not in "biufU":
            return None
        if kept.targets is None:
            Y = self._encode_targets(self.classes_, first_call=False)
            Y.flags.writeable = False
            kept.targets = {label: Y[code]
                            for code, label in enumerate(self.classes_.tolist())}
        return kept.targets.get(y[0])

    @fit_context
    def fit(self, X, y, sample_weight=None, *, coef_init=None, intercept_init=None):
        """Fit the model by epochs over (X, y), like ``SGDClassifier.fit``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``.
        coef_init : array-like of shape (k, n_features) or (n_features,), \
                default=None
            Weights to start from (``SGDClassifier.fit``'s, keyword-only here). The
            parameters start at ``psi^-1(coef_init)``, so the weights must lie in
            the range of psi:
            [psi ranges]
            With ``warm_start``, they replace the
            fitted weights.
        intercept_init : array-like of shape (k,), default=None
            Intercepts to start from (with ``fit_intercept=False`` they stay
            fixed, as SGD's); with ``warm_start``, they replace the fitted ones.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, coef_init=coef_init,
                         intercept_init=intercept_init)

    @one_row_first
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Run one on-line pass over (X, y) in the given order.

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

    def decision_function(self, X):
        """Confidence scores: the activations (for softmax binary, their difference).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Positive scores favour ``classes_[1]`` in the binary case.
        """
        A = self._activations(X)
        if self.classes_.shape[0] == 2 and A.shape[1] == 2:
            with np.errstate(over="ignore"):  # (reported as an error)
                return self._finite_activations(A[:, 1] - A[:, 0])
        return A[:, 0] if self.classes_.shape[0] == 2 else A

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Predicted classes.
        """
        A = self._activations(X)
        # (Binary softmax: A_1 > A_0 is argmax, which their difference may overflow.)
        codes = (A[:, 0] > 0).astype(int) if A.shape[1] == 1 else A.argmax(axis=1)
        return self.classes_[codes]

    @available_if(_has_probabilities)
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
        A = self._activations(X)
        log_probability = self._fitted.phi.log_probability
        if log_probability is not None:
            return log_probability(A)
        with np.errstate(divide="ignore"):
            return np.log(self._probabilities(A))

    @available_if(_has_probabilities)
    def predict_proba(self, X):
        """Class probabilities from phi of the activations.

        Logistic: ``phi(a)``; tanh: ``(1 + tanh a) / 2``; one-vs-rest outputs are
        normalized to sum to 1, as ``SGDClassifier`` does (classes whose outputs
        round to 1.0 tie; :meth:`predict` ranks them by activation); softmax:
        ``softmax(a)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities of the classes, in the order of ``classes_``.
        """
        return self._probabilities(self._activations(X))

    def _probabilities(self, A):
        """predict_proba of the activations A."""
        return class_probabilities(A, self._fitted.phi_name)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = (
            PSI[self.psi].constrained if self.psi in PSI else False
        )
        return tags
