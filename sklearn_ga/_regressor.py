"""GARegressor: the general additive algorithm for (multi-output) regression."""


import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import BaseGA
from ._docstrings import fill_docstring
from ._phi import PHI, REGRESSION_PHI
from ._psi import PSI
from ._state import fit_context, one_row_first

# The dtype of float64 targets as NumPy gives it (others, even equal, take the
# general path).
_FLOAT64 = np.dtype(np.float64)


@fill_docstring
class GARegressor(RegressorMixin, BaseGA):
    """General additive on-line regressor GA(psi, phi, Theta, eta) of Kivinen & Warmuth.

    The model keeps a parameter matrix Theta (k x n). Its weights are
    ``coef_ = psi(Theta)`` (row by row) and it predicts ``phi(coef_ @ x + b)``. Each
    trial updates ``Theta <- Theta - eta * (y_hat - y) x^T``, the gradient step of the
    matching loss of phi taken in parameter space (KW01 Figure 5, eq. 20). With
    ``psi="identity"`` this is gradient descent (``SGDRegressor``); with
    ``psi="eg_pm"`` it is the EG± algorithm, which excels when few of many features
    are relevant.

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    psi : [psi choices], default="identity"
        Parameterization function:
        [psi descriptions]
        ``"sphere"`` and ``"simplex"`` keep the weights on the sphere of radius
        ``U`` and on the probability simplex (Fisher metric) and move them along
        geodesics (KMWW Examples 2, 3), starting from uniform weights; they need
        ``update="explicit"``.
    phi : [regression phi choices], default="identity"
        Transfer function. The loss is its matching loss (square loss for
        ``"identity"``, relative entropy for ``"logistic"``/``"softmax"``, ...).
        Targets must lie in its range: [0, 1] for logistic, [-1, 1] for tanh,
        (-pi/2, pi/2) for arctan, [0, inf) for exp, rows of the simplex (2-D y) for
        softmax.
    eta : float or "theory", default="theory"
        Learning rate of the weights, > 0, or ``"theory"``: KW01 Theorem 3's
        ``eta = 1 / (2 b c)`` for the rows seen so far, lowered before any row
        whose bound b of eq. (28) exceeds those seen (never raised), so that it
        follows a stream whose scale grows. c is c_phi of eq. (29); where the
        theory gives no finite b or c, a rule stands in: for ``psi="exp"`` b at
        the start (``||x||_2^2``) times the largest absolute target (at least 1;
        its square with ``update="natural"``, whose step moves theta by w x;
        for ``"burg"`` times its square, and no rule with ``update="natural"``),
        for ``"sphere"`` and ``"simplex"`` the b of gradient descent and of EG, whose
        steps theirs equal to first order, and for ``phi="exp"`` c = the largest
        target seen (at least 1). A sample weight s multiplies the row's bound.
        The rate in use is ``eta_``. For ``psi="eg_pm"``, HKW's EG± rate, whose
        parameter step is ``eta * U * (y_hat - y) x``.
    intercept_eta : float, "auto" or "eta", default="auto"
        Learning rate of the intercept, > 0. ``"eta"``: the rate of the weights
        (the algorithm of the papers, and ``SGDRegressor``'s). ``"auto"``: with
        ``eta="theory"``, the intercept learns as one more feature on the scale of
        the n others: it takes their average share b / n of Theorem 3's budget
        (at least its own, 1), i.e. ``1 / (2c (n + 1))`` once b >= n, and the
        weights ``1 / (2c (b + b / n))``; the bound still holds (the potential is
        block diagonal). So the intercept reaches the mean of an uncentred target
        even where b is large (EG±: b = U^2 max ||x||_inf^2). With a numeric
        ``eta``, the same as ``"eta"``. A number: that constant rate.
    U : float or "auto", default="auto"
        Scale of EG± (``psi="eg_pm"``): the weights satisfy ``||w||_1 <= U``;
        radius of ``psi="sphere"``: ``||w||_2 = U``. Ignored by the other
        parameterizations. ``"auto"``: chosen from the first call's data, the
        l1 norm (the sphere: l2) of a light ridge fit of the activations
        ``phi^-1(y)`` on its first 1000 rows (labels at the ends of a bounded
        range count as activations of +-4), kept in ``U_`` and by later calls;
        with ``eta="theory"``, EG±'s ``U_`` doubles, the weights unchanged,
        whenever a call leaves them with ``||w||_1 >= 0.75 U_`` (a stream whose
        scale grows; checked after every call of several rows and every 1024th
        one-row call). A number is used as given.
    p : float, default=2.0
        Exponent of ``psi="pnorm"``, >= 2 (``p=2`` is gradient descent, and runs
        as fast; about ``2 ln(n_features)`` suits sparse targets; an integer ``p``
        computes faster). Ignored otherwise.
    update : {"explicit", "implicit", "natural"}, default="explicit"
        Update rule. ``"explicit"``: ``Theta <- Theta - eta (y_hat - y) x^T``
        (KW01 eq. 23). ``"implicit"``: the exact solution of KW01 eq. (22)/(25),
        the residual taken at the updated parameters, ``Theta~ = Theta - eta
        (phi(psi(Theta~) x + b~) - y) x^T`` (KMWW eq. 9), solved to machine
        precision per output (for ``phi="softmax"``, whose outputs are coupled,
        by a root search on its log-normalizer, each output's equation solved for
        a fixed one); it
        stays stable for learning rates at which the explicit rule diverges. It
        needs the matching loss. ``"natural"``: ``theta <- theta - eta
        Dpsi(theta)^T grad_omega L`` (KMWW eq. 5; with ``psi="exp"`` the natural EG
        of KMWW Example 7); not for ``psi="pnorm"`` at ``p > 2``. For
        ``psi="identity"`` the natural rule is the explicit one.
    loss : {"matching", "square"}, default="matching"
        Loss minimized and charged in ``cumulative_loss_``: the matching loss of
        phi, or ``"square"``, ``0.5 ||phi(a) - y||^2`` for any phi, updated by its
        gradient ``(dL/da) x = (phi(a) - y) phi'(a) x`` (GA_L, KW01 eq. 35).
    Y : float or None, default=None
        Clip each prediction to ``[-Y, Y]`` before it is charged a loss and used in
        the update (GA^Y, end of KW01 §4); :meth:`predict` clips too. ``None``: no
        clipping. Not for ``phi="softmax"``.
    alpha : float, default=0.0
        Penalty toward the start Theta_1 (zeros: uniform weights for ``"softmax"``
        and ``"eg_pm"``, all ones for ``"exp"``), >= 0: each trial first scales
        Theta by ``1 - eta * alpha`` (by 0 if that is negative), the step
        ``eta * alpha * (Theta - Theta_1)`` of the penalty ``alpha
        Delta_psi(Theta, Theta_1)``, then takes its own step; the intercepts are
        not penalized. With ``psi="identity"`` this is ``SGDRegressor``'s
        ``penalty="l2"`` with this ``alpha`` (in the same order; the start stays
        Theta_1 = 0 whatever ``coef_init``). Unlike SGD's default (1e-4), 0: the
        algorithm of the papers. A trial on CSR input costs O(nnz) for
        ``"identity"`` and ``"pnorm"`` (a factor of each row, multiplied out at
        the end of a call), O(n) exponentials per output for ``"softmax"``,
        ``"eg_pm"`` and ``"exp"`` (their normalizers, or every weight, change).
        With ``update="implicit"`` or ``"natural"`` the pull comes first and the
        rule takes its step from the pulled parameters (O(n) per trial). Not for
        the geodesic psi.
    learning_rate : {"constant", "invscaling"}, default="constant"
        The rate of each trial: ``eta_`` (the papers' setting), or SGD's
        ``"invscaling"``, ``eta_ / t^power_t`` at the t-th trial since the model
        was reset (continuing across :meth:`partial_fit` calls and fit's epochs),
        for the weights, the intercepts and the penalty alike; with
        ``psi="identity"`` it is ``SGDRegressor(learning_rate="invscaling",
        eta0=eta)``. With ``eta="theory"`` it scales the rate that follows the
        data (``eta_`` and ``intercept_eta_`` stay the unscaled rates). (SGD's
        ``fit`` restarts the schedule also under ``warm_start``, which continues it
        here, as it continues ``t_``.)
    power_t : float, default=0.25
        The exponent of ``"invscaling"``, >= 0 (``SGDRegressor``'s default).
    fit_intercept : bool, default=True
        Whether to learn an intercept b (updated by plain gradient descent).
    max_iter : int, default=1000
        Maximum number of passes (epochs) over the data in :meth:`fit`.
    tol : float or None, default=1e-3
        :meth:`fit` stops when an epoch's on-line loss does not improve on the best
        by at least ``tol * n_samples`` for ``n_iter_no_change`` consecutive epochs
        (with ``early_stopping``, when the validation score does not improve on
        the best by at least ``tol``). ``None`` runs all ``max_iter`` epochs.
        Ctrl-C stops :meth:`fit` too: it keeps the model of the last completed
        epoch and warns (during the first epoch, the model stays as it was and
        KeyboardInterrupt is raised).
    n_iter_no_change : int, default=5
        Number of epochs without improvement before :meth:`fit` stops.
    early_stopping : bool, default=False
        Whether :meth:`fit` holds out a fraction ``validation_fraction`` of the
        samples drawn with ``random_state`` as SGDRegressor draws them,
        scores the model on them with :meth:`score` (R^2) after each epoch, and
        stops when that score has not improved on the best by at least ``tol`` for
        ``n_iter_no_change`` consecutive epochs. The model returned is the last
        one, as SGDRegressor's, not the best scored; the scores are in
        ``validation_scores_``. :meth:`partial_fit` refuses it on a model not yet
        fitted (a stream has no held-out set) and ignores it after :meth:`fit`, as
        SGDRegressor does.
    validation_fraction : float, default=0.1
        Fraction of the samples held out for early stopping, in (0, 1).
    shuffle : bool, default=True
        Whether :meth:`fit` shuffles the samples before each epoch.
        :meth:`partial_fit` never shuffles.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling.
    warm_start : bool, default=False
        Whether :meth:`fit` continues from the current parameters.
    average : bool, int or "auto", default="auto"
        ``"auto"``: :meth:`fit` averages from the end of the first epoch whose
        on-line loss does not improve on the best by ``tol * n_samples`` on (the
        noise floor of a constant rate, whose last weights carry its noise: their
        average does not; a one-epoch fit stays the on-line algorithm), and
        :meth:`partial_fit` never (it learns on-line: ``coef_`` then is
        ``psi(theta_)``), nor with the geodesic psi. Otherwise SGD's averaging:
        ``coef_`` and ``intercept_`` become the mean of the weights
        ``psi(Theta_t)`` and of the intercepts ``b_t`` after each trial's update,
        from the first trial (``True``) or from the ``average``-th trial since
        the model was reset (before it they are the plain ones), across calls
        and epochs: ``average=10`` averages from the 10th sample seen on, as
        ``SGDRegressor(average=10)`` does. ``theta_``, the learning and
        ``cumulative_loss_`` stay those of the plain algorithm; predictions use
        the means. This is the online-to-batch conversion, whose risk is bounded
        by the on-line loss bound (Cesa-Bianchi, Conconi and Gentile, 2004); a
        mean of points of a convex set stays in it (EG's simplex, EG±'s l1 ball).
        A CSR trial stays O(nnz): a coordinate's term is constant between its
        changes while its row's scale moves every trial, so each coordinate keeps
        the sum of the scales at its last change and is settled before the next
        one.
        ``set_params(average=...)`` applies from the next call.
    verbose : int, default=0
        Print, for each epoch of :meth:`fit`, its time, its on-line loss per
        trial, the rates and the trials seen.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
        The weights ``psi(theta_)``, read-only, computed when first read after a
        call (with ``average``, their mean).
    intercept_ : ndarray of shape (n_outputs,)
        The intercepts b (read-only, like ``theta_``; with ``average``, their
        mean).
    eta_ : float
        The learning rate of the weights in use at the end of the last call
        (``eta``, or the rate that ``"theory"`` has come to for the rows seen).
    U_ : float
        The ``U`` in use: ``U``, or the one ``U="auto"`` chose (and doubled);
        1.0 for ``U="auto"`` where psi ignores U.
    intercept_eta_ : float
        The learning rate of the intercept in use (0.0 without intercept).
    n_eta_changes_ : int
        How many times ``eta="theory"`` lowered the rates since the model was
        reset (0 for a numeric ``eta``).
    theta_ : ndarray of shape (n_outputs, n_features)
        The parameters Theta of the algorithm: a read-only view of the arrays of the
        compiled loop, which later ``partial_fit`` calls update in place (assign a new
        array to start from other parameters). For ``psi="sphere"`` and ``"simplex"``
        only their direction counts (the weights are ``U theta / ||theta||`` and
        ``theta**2 / ||theta||**2``): a row is rescaled by a power of 2 when its largest
        ``|theta|`` leaves ``[2**-200, 2**200]``.
    n_iter_ : int
        Number of epochs run by the last call (1 for :meth:`partial_fit`).
    t_ : int
        Number of trials (samples) seen since the model was reset.
    cumulative_loss_ : float
        Sum over all trials seen of the (sample-weighted) loss (see ``loss``) of the
        prediction made before each update: Loss_phi(GA, S) in the papers.
    [run attributes]

    See Also
    --------
    GAClassifier : The same algorithm for classification.
    sklearn.linear_model.SGDRegressor : Gradient descent for linear models; equal
        to ``GARegressor(psi="identity", phi="identity")`` with a constant rate.

    References
    ----------
    .. [KW01] J. Kivinen and M. K. Warmuth, "Relative loss bounds for
       multidimensional regression problems", Machine Learning 45, 2001.
    .. [HKW] D. P. Helmbold, J. Kivinen and M. K. Warmuth, "Relative loss bounds
       for single neurons", IEEE Trans. Neural Networks 10(6), 1999.
    .. [KMWW] Krakowski, Mahony, Williamson and Warmuth, "A geometric view of
       non-linear on-line stochastic gradient descent".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga import GARegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.choice([-1.0, 1.0], size=(2000, 50))
    >>> y = np.tanh(X[:, 0] - X[:, 3])
    >>> model = GARegressor(psi="eg_pm", phi="tanh", eta=0.1, U=3.0)
    >>> model = model.partial_fit(X, y)
    >>> print(np.round(model.coef_[[0, 3]], 1))
    [ 1. -1.]
    >>> model.t_
    2000

    The implicit rule (KW01 eq. 22) stays stable at a rate where the explicit one
    diverges:

    >>> X = rng.normal(size=(200, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5])
    >>> implicit = GARegressor(eta=100.0, update="implicit").partial_fit(X, y)
    >>> print(np.round(implicit.coef_, 3))
    [ 1.  -2.   0.5]
    """

    _parameter_constraints = {
        **BaseGA._parameter_constraints,
        "phi": [StrOptions(set(REGRESSION_PHI))],
    }

    _target_validation = {"multi_output": True, "y_numeric": True}

    def __init__(self, psi="identity", phi="identity", *, eta="theory",
                 intercept_eta="auto", U="auto", p=2.0,
                 update="explicit", loss="matching", Y=None, alpha=0.0,
                 learning_rate="constant", power_t=0.25, fit_intercept=True,
                 max_iter=1000, tol=1e-3, n_iter_no_change=5,
                 early_stopping=False, validation_fraction=0.1,
                 shuffle=True, random_state=None, warm_start=False, average="auto",
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
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.average = average
        self.verbose = verbose

    def _encode_targets(self, y, *, first_call, classes=None):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim not in (1, 2):
            raise ValueError(f"y must be 1-D or 2-D; got an array of shape {y.shape}.")
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity; remove those samples.")
        Y = np.ascontiguousarray(y.reshape(y.shape[0], -1))
        if PHI[self.phi].rowwise and y.ndim != 2:
            raise ValueError(
                f"phi={self.phi!r} needs 2-D targets y of shape (n_samples, "
                f"n_outputs) whose rows are {PHI[self.phi].range_text()}; got 1-D y."
            )
        if first_call:
            self._single_output = y.ndim == 1
        return Y

    def _decode_targets(self, Y):
        return Y[:, 0] if self._single_output else Y

    def _shape_coef(self, weights):
        return weights[0] if self._single_output else weights

    def _one_row_targets(self, y, kept):
        """The targets (1,) of a one-row ``partial_fit`` if y is a float64 ndarray
        of one finite number in the range of phi, to a model of one output; else
        None."""
        if (type(y) is not np.ndarray or y.dtype is not _FLOAT64 or y.shape != (1,)
                or not self._single_output):
            return None
        # (NaN is not inside; an infinite target fails the trial: the general path.)
        return y if PHI[self.phi].inside(y.item()) else None

    @fit_context
    def fit(self, X, y, sample_weight=None, *, coef_init=None, intercept_init=None):
        """Fit the model by epochs over (X, y), like ``SGDRegressor.fit``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs; sparse input is used as CSR.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets in the range of ``phi``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: a trial of weight s takes a step ``s * eta``.
        coef_init : array-like of shape (n_features,) or (n_outputs, n_features), \
                default=None
            Weights to start from (``SGDRegressor.fit``'s, keyword-only here). The
            parameters start at ``psi^-1(coef_init)``, so the weights must lie in
            the range of psi:
            [psi ranges]
            With ``warm_start``, they replace the
            fitted weights.
        intercept_init : array-like of shape (n_outputs,), default=None
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
    def partial_fit(self, X, y, sample_weight=None):
        """Run one on-line pass over (X, y) in the given order.

        This is the algorithm of the papers: each sample is predicted, charged its
        matching loss (added to ``cumulative_loss_``), then learned.

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
        """Predict ``phi(coef_ @ x + intercept_)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predictions, in the range of ``phi``.
        """
        Y = self._one_row_activations(X, outputs=True)
        if Y is None:
            Y = self._outputs(self._activations(X))
        return Y[:, 0] if self._single_output else Y

    def matching_activations(self, X, phi):
        """Activations A with ``predict(X) = phi(A)``, for scoring by a matching loss.

        The matching loss of ``phi`` computed from these activations stays exact
        where predictions round to the edge of the range of ``phi`` (KW01 eq. 16):
        :func:`~sklearn_ga.losses.matching_loss_scorer` reads them. They are
        ``X @ coef_.T + intercept_``, clipped as the predictions are when ``Y`` is
        set (GA^Y, KW01 §4).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs.
        phi : str
            The transfer function whose matching loss is to be computed.

        Returns
        -------
        A : ndarray of shape (n_samples, n_outputs) or None
            The activations; None if the model predicts with another transfer
            function than ``phi`` (its activations would score another predictor).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_ga import GARegressor
        >>> X, y = np.array([[1.0], [-1.0]]), np.array([0.9, 0.1])
        >>> model = GARegressor(phi="logistic", eta=0.5).fit(X, y)
        >>> A = model.matching_activations(X, "logistic")
        >>> bool(np.allclose(1 / (1 + np.exp(-A[:, 0])), model.predict(X)))
        True
        >>> model.matching_activations(X, "identity") is None
        True
        """
        check_is_fitted(self, "theta_")
        if self._fitted.phi_name != phi:
            return None
        return self._clip_activations(self._activations(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        phi = PHI.get(self.phi)
        if phi is not None:
            # Targets in [0, inf): scikit-learn's checks then draw positive ones.
            tags.target_tags.positive_only = phi.low == 0.0 and phi.high == np.inf
            tags.target_tags.single_output = not phi.rowwise
        # A constrained psi, or a phi whose range is not all of R, cannot fit every
        # target of scikit-learn's checks well.
        tags.regressor_tags.poor_score = (
            PSI[self.psi].constrained if self.psi in PSI else False
        ) or (phi is not None and (phi.low, phi.high) != (-np.inf, np.inf))
        return tags
