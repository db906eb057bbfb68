"""Parameter mixing on a Dask cluster: one GA model learned by every worker at once.

:class:`ParameterMixing` runs iterative parameter mixing (McDonald, Hall & Mann
2010; the scheme of Vowpal Wabbit's AllReduce, Agarwal et al. 2014): each pass,
every learner runs one on-line pass of the compiled loop (``partial_fit``) over
its own contiguous share of the partitions, starting from the mixed model; the
driver mixes the learners' models, weighted by their rows, in the order of the
partitions, and the next pass starts from the mix. The mix keeps each psi's
domain (:func:`mix`). Only ``dask.distributed`` runs the work: the tasks go to the
client in use. See doc/user_guide/distributed.rst.
"""

import copy
import warnings
from numbers import Integral, Real

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp
from distributed import get_client
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import BaseGA
from ._psi import PSI

# Mixing in parameter space by default for every psi: measured on the streams of
# doc/user_guide/distributed.rst, it was never worse than weight space, and for
# EG± keeps the mix the exponential family's mean (a normalised geometric mean).
MIXINGS = ("weights", "parameters")


def mix(thetas, weights, rows, psi, U=1.0, p=2.0, space="parameters"):
    """The mixed parameters of learners' models, in one psi's domain.

    Parameters
    ----------
    thetas : sequence of ndarray of shape (k, n)
        Each learner's parameters Theta.
    weights : sequence of ndarray of shape (k, n) or None
        Each learner's weights psi(Theta) (read in weight space only).
    rows : sequence of float
        Each learner's rows in the pass: the mixing weights, normalised.
    psi : str
        The psi of the models (a key of :data:`~sklearn_ga.PSI`).
    U, p : float, default=1.0, 2.0
        The estimators' ``U`` and ``p``.
    space : {"parameters", "weights"}, default="parameters"
        Where the average is taken: of the parameters Theta (for EG a
        normalised geometric mean of the weights), or of the weights psi(Theta),
        mapped back by psi^-1.

    Returns
    -------
    theta : ndarray of shape (k, n)
        Parameters whose weights lie in the domain of psi: the l1 ball of radius
        U (EG±), the simplex (softmax, simplex), the sphere of radius U (sphere),
        positive weights (exp, burg). Summed in the learners' order, so that the
        same models give the same bits.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.dask import mix
    >>> a, b = np.log([[0.5, 0.5]]), np.log([[0.9, 0.1]])
    >>> mix([a, b], None, [1, 1], "softmax").round(3)
    array([[-0.693, -1.354]])
    """
    entry, share = PSI[psi], np.asarray(rows, dtype=np.float64)
    share = share / share.sum()
    if space == "parameters":
        # A geodesic psi's Theta is its point only up to a positive factor
        # (KMWW Examples 2, 3): each is put on the unit sphere before the mean.
        points = ([theta / np.linalg.norm(theta, axis=-1, keepdims=True)
                   for theta in thetas] if entry.geodesic else thetas)
        return _weighted_sum(points, share)
    mean = _weighted_sum(weights, share)
    if psi == "sphere":
        # The mean of points of the sphere lies inside its ball: projected back
        # onto the sphere of radius U along its ray.
        mean *= U / np.linalg.norm(mean, axis=-1, keepdims=True)
    elif psi in ("softmax", "simplex"):
        mean /= mean.sum(axis=-1, keepdims=True)  # (the simplex up to rounding)
    # The l1 ball of EG± and the positive orthant are convex: the mean stays in.
    return entry.inverse(mean, U, p)


def _weighted_sum(arrays, share):
    total = np.zeros_like(arrays[0], dtype=np.float64)
    for array, fraction in zip(arrays, share, strict=True):
        total += fraction * array
    return total


def _block(X, y, sample_weight):
    """A partition as the learners read it: X as given (an ndarray, a CSR matrix,
    or a DataFrame, whose feature names the model keeps), y and the weights as
    ndarrays."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    y = np.asarray(y)
    return X, y, None if sample_weight is None else np.asarray(sample_weight)


def _labels(block):
    return np.unique(block[1])


def _learn(start, blocks, classes, first, space):
    """One learner's pass: ``partial_fit`` over its partitions in order, from the
    mixed model ``start`` (a fresh clone of the estimator on the first pass).
    Returns what the mix reads (:func:`_learned`) and, on a first pass, the model
    itself as the template of the mixed models."""
    model = clone(start) if first else copy.deepcopy(start)  # (never the shared one)
    extra = {} if classes is None else {"classes": classes}
    rows = 0
    for X, y, sample_weight in blocks:
        if X.shape[0]:
            model.partial_fit(X, y, sample_weight=sample_weight, **extra)
            rows += X.shape[0]
    if not rows:
        return None
    before = (0, 0.0, 0.0) if first else _progress(start)
    learned = _learned(model, rows, before, space)
    if first:
        model.__dict__.pop("_kept_loop", None)  # (its loop: this learner's alone)
        learned["template"] = model
    return learned


def _progress(model):
    # t_, cumulative_loss_ and the loss of Theta_1 over the same trials, which the
    # runaway check of sklearn_ga._passes compares with it.
    return (model.t_, model.cumulative_loss_,
            model.__dict__.get("_initial_loss", 0.0))


def _learned(model, rows, before, space):
    """What one learner's pass gives the mix: its rows, its own parameters (not
    an average), its weights in weight space, what its pass added to the counters
    and to the sums of the averaged trials, and its rates."""
    theta = np.array(model.theta_)
    intercept = np.array(model.__dict__["intercept_"])  # (not the averaged one)
    weights = None
    if space == "weights":
        weights = PSI[model._fitted_psi].weights(theta, float(model.U),
                                                float(model.p))
    after = _progress(model)
    return {
        "rows": rows, "theta": theta, "intercept": intercept, "weights": weights,
        "progress": tuple(a - b for a, b in zip(after, before, strict=True)),
        "averages": model._carried_averages(),
        "rates": (model.eta_, model.intercept_eta_, model.n_eta_changes_),
    }


def _mixed_model(template, learned, progress, sums, space, n_iter):
    """A plain fitted estimator holding the mix of the learners' models: the next
    pass starts from it, and the last one is ``estimator_``."""
    model = copy.deepcopy(template)
    rows = [part["rows"] for part in learned]
    theta = mix([part["theta"] for part in learned],
                [part["weights"] for part in learned], rows, model._fitted_psi,
                float(model.U), float(model.p), space)
    model.theta_ = theta  # (validated; coef_ = psi(theta_) at once)
    model.intercept_ = _weighted_sum([part["intercept"] for part in learned],
                                     np.asarray(rows) / sum(rows))
    model.t_, model.cumulative_loss_, model._initial_loss = progress
    model.eta_, model.intercept_eta_, model.n_eta_changes_ = learned[-1]["rates"]
    model.n_iter_ = n_iter
    model.path_measure_ = np.nan  # (a mix is no step of the path)
    if sums is not None and sums[2][0] > 0:
        # The averages of every trial of every learner, in weight space.
        model._averages = sums
        coef = sums[0] / sums[2][:, None]
        coef.flags.writeable = False
        model.coef_ = model._shape_coef(coef)
    return model


def _add_averages(sums, learned):
    """The sums of the averaged trials so far plus those of this pass's
    learners, in their order (None without averaging)."""
    for part in learned:
        if part["averages"] is None:
            continue
        sums = part["averages"] if sums is None else tuple(
            a + b for a, b in zip(sums, part["averages"], strict=True))
    return sums


def _partitions(X, y, sample_weight, n_learners):
    """The partitions of (X, y, sample_weight) in row order, as delayed
    :func:`_block` values: of dask arrays (rows chunked as X), of dask DataFrames
    or Series (one partition each), or of in-memory data cut into ``n_learners``
    contiguous pieces."""
    collections = [v for v in (X, y, sample_weight) if dask.is_dask_collection(v)]
    if not collections:
        X = X if sp.issparse(X) else np.asarray(X)
        pieces = np.array_split(np.arange(X.shape[0]), n_learners)
        edges = [(piece[0], piece[-1] + 1) for piece in pieces if piece.size]
        take = [(lambda v, a=a, b=b: None if v is None else v[a:b])
                for a, b in edges]
        return [dask.delayed(_block)(cut(X), cut(np.asarray(y)),
                                     cut(sample_weight)) for cut in take]
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D; got a dask array of shape {X.shape}.")
        X = X.rechunk({1: -1})
        y = _aligned(y, X.chunks[0], "y")
        sample_weight = _aligned(sample_weight, X.chunks[0], "sample_weight")
        parts = [X.to_delayed()[:, 0], _blocks_of(y), _blocks_of(sample_weight)]
    elif hasattr(X, "to_delayed") and hasattr(X, "npartitions"):
        parts = [X.to_delayed()]
        for name, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None and getattr(value, "npartitions",
                                             None) != X.npartitions:
                raise ValueError(
                    f"{name} must be a dask DataFrame or Series partitioned as X "
                    f"({X.npartitions} partitions); got {type(value).__name__}.")
            parts.append(None if value is None else value.to_delayed())
    else:
        raise TypeError(
            "X must be a dask array or dask DataFrame when y or sample_weight is "
            f"one; got {type(X).__name__}.")
    count = len(parts[0])
    return [dask.delayed(_block)(parts[0][i], parts[1][i],
                                 None if parts[2] is None else parts[2][i])
            for i in range(count)]


def _aligned(value, chunks, name):
    """A dask array ``value`` with rows chunked as X's (``chunks``)."""
    if value is None:
        return None
    if not isinstance(value, da.Array):
        value = da.from_array(np.asarray(value), chunks=(chunks,) + (-1,) * (
            np.ndim(value) - 1))
    if value.shape[0] != sum(chunks):
        raise ValueError(f"{name} has {value.shape[0]} rows but X has "
                         f"{sum(chunks)}.")
    return value.rechunk((chunks,) + (-1,) * (value.ndim - 1))


def _blocks_of(value):
    if value is None:
        return None
    blocks = value.to_delayed()
    return blocks if blocks.ndim == 1 else blocks[:, 0]


class ParameterMixing(MetaEstimatorMixin, BaseEstimator):
    """One GA model learned on a Dask cluster by iterative parameter mixing.

    Each pass, every learner runs one on-line pass of the compiled loop
    (``partial_fit``) over its contiguous share of the partitions, from the
    current mixed model; the driver then mixes the learners' models weighted by
    their rows and starts the next pass from the mix (McDonald, Hall & Mann
    2010), as Vowpal Wabbit's AllReduce does between passes. The tasks run on the
    ``dask.distributed`` client in use. The same partitioning and number of
    learners give the same model, bit for bit: the mix sums the learners in the
    order of the partitions, whichever worker finishes first.

    Read more in the :ref:`User Guide <distributed>`.

    Parameters
    ----------
    estimator : GARegressor or GAClassifier
        The model to learn (unfitted; its ``max_iter``, ``tol``, ``shuffle`` are
        not read, since each pass is ``partial_fit``'s). A numeric ``eta`` is
        needed: each learner would follow the rows of its own share with
        ``eta="theory"``.
    max_iter : int, default=5
        The most passes over the data.
    tol : float or None, default=1e-3
        The passes stop when the on-line loss of a pass, summed over the
        learners, has not fallen below the best one's minus ``tol * n_samples``
        for ``n_iter_no_change`` passes in a row, as ``fit``'s epochs do. None:
        ``max_iter`` passes.
    n_iter_no_change : int, default=5
        Passes without improvement before stopping.
    mixing : {"parameters", "weights"}, default="parameters"
        Where the models are averaged: their parameters Theta (for EG a
        normalised geometric mean of the weights), or their weights psi(Theta),
        mapped back by psi^-1. Either stays in psi's domain (:func:`mix`).
    n_learners : int or None, default=None
        The learners of a pass, each given a contiguous share of the partitions
        (at most one per partition); None: one per worker of the client.

    Attributes
    ----------
    estimator_ : GARegressor or GAClassifier
        The mixed model: a plain fitted estimator, picklable, that predicts
        without Dask. Its ``t_`` counts every trial of every learner, its
        ``cumulative_loss_`` their losses. With ``average``, it predicts with
        the mean of the weights of all those trials.
    cumulative_loss_ : float
        The first pass's on-line (progressive) loss, summed over the learners.
    loss_curve_ : ndarray of shape (n_iter_,)
        Each pass's on-line loss, summed over the learners.
    n_iter_ : int
        The passes run.
    n_learners_ : int
        The learners of each pass.
    classes_ : ndarray of shape (n_classes,)
        The class labels (classifiers only).

    See Also
    --------
    sklearn_ga.GARegressor.partial_fit : The pass each learner runs.
    dask_ml.wrappers.Incremental : One learner over every block in turn.

    References
    ----------
    R. McDonald, K. Hall and G. Mann, "Distributed training strategies for the
    structured perceptron", NAACL 2010.

    A. Agarwal, O. Chapelle, M. Dudik and J. Langford, "A reliable effective
    terascale linear learning system", JMLR 15, 2014.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from sklearn_ga import GARegressor
    >>> from sklearn_ga.dask import ParameterMixing
    >>> rng = np.random.default_rng(0)
    >>> X = rng.choice([-1.0, 1.0], size=(4000, 10))
    >>> y = X @ np.linspace(-1, 1, 10)
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
    ...                   dashboard_address=None) as cluster, Client(cluster):
    ...     model = ParameterMixing(GARegressor(eta=0.01), max_iter=3).fit(
    ...         da.from_array(X, chunks=1000), da.from_array(y, chunks=1000))
    >>> model.n_learners_, model.n_iter_
    (2, 3)
    >>> bool(model.score(X, y) > 0.99)
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["partial_fit"])],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, None, None, closed="neither"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "mixing": [StrOptions(set(MIXINGS))],
        "n_learners": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, estimator, *, max_iter=5, tol=1e-3, n_iter_no_change=5,
                 mixing="parameters", n_learners=None):
        self.estimator = estimator
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.mixing = mixing
        self.n_learners = n_learners

    def fit(self, X, y, sample_weight=None, classes=None):
        """Learn the model by passes of parameter mixing over (X, y).

        Parameters
        ----------
        X : dask array or dask DataFrame of shape (n_samples, n_features)
            Inputs, partitioned by rows (a dask array's column chunks are
            joined); chunks of CSR matrices are read as such. In-memory data
            are cut into ``n_learners`` pieces.
        y : dask array, Series or DataFrame of shape (n_samples,) or \
                (n_samples, n_outputs)
            Targets, partitioned as X (a dask array is rechunked to X's rows).
        sample_weight : dask array or Series of shape (n_samples,), default=None
            Non-negative weights of the trials, partitioned as y.
        classes : array-like of shape (n_classes,), default=None
            A classifier's labels; None: computed from y in one pass over it.

        Returns
        -------
        self : object
            Fitted wrapper.
        """
        self._validate_params()
        estimator = self.estimator
        if not isinstance(estimator, BaseGA) or not hasattr(estimator, "psi"):
            raise TypeError(
                "ParameterMixing mixes the models of GARegressor or GAClassifier; "
                f"got {type(estimator).__name__}.")
        if estimator.eta == "theory" or estimator.early_stopping:
            raise ValueError(
                "ParameterMixing needs the estimator's eta to be a number and "
                "early_stopping=False: each learner sees only its share of the "
                "rows, from which eta='theory' would set its own rate, and a pass "
                "is partial_fit's, which holds nothing out. Set eta (e.g. "
                "sklearn_ga.theorem3_learning_rate of a sample) and "
                "early_stopping=False.")
        client = get_client()
        workers = sorted(client.scheduler_info()["workers"])
        wanted = self.n_learners or len(workers)
        blocks = _partitions(X, y, sample_weight, wanted)
        shares = [share for share in np.array_split(
            np.arange(len(blocks)), min(wanted, len(blocks))) if share.size]
        placed = [client.compute([blocks[i] for i in share],
                                 workers=[workers[g % len(workers)]])
                  for g, share in enumerate(shares)]
        try:
            return self._passes(client, workers, placed, classes)
        finally:
            client.cancel([f for group in placed for f in group])

    def _passes(self, client, workers, placed, classes):
        classifier = is_classifier(self.estimator)
        if classifier and classes is None:
            classes = np.unique(np.concatenate(client.gather(
                [client.submit(_labels, f) for group in placed for f in group])))
        start, template, sums = clone(self.estimator), None, None
        progress, losses = (0, 0.0, 0.0), []
        best, stale = np.inf, 0
        for n_iter in range(1, self.max_iter + 1):
            tasks = [client.submit(_learn, start, group, classes, template is None,
                                   self.mixing, workers=[workers[g % len(workers)]],
                                   pure=False)
                     for g, group in enumerate(placed)]
            learned = [part for part in client.gather(tasks) if part is not None]
            if not learned:
                raise ValueError("ParameterMixing got no rows to learn: X is empty.")
            template = learned[0].pop("template", template)
            added = np.sum([part["progress"] for part in learned], axis=0)
            progress = (int(progress[0] + added[0]), float(progress[1] + added[1]),
                        float(progress[2] + added[2]))
            sums = _add_averages(sums, learned)
            start = _mixed_model(template, learned, progress, sums, self.mixing,
                                 n_iter)
            losses.append(float(added[1]))
            if self.tol is not None:
                stale = stale + 1 if losses[-1] > best - self.tol * added[0] else 0
                best = min(best, losses[-1])
                if stale >= self.n_iter_no_change:
                    break
        else:
            if self.tol is not None and self.max_iter > 1:
                warnings.warn(
                    f"Maximum number of passes ({self.max_iter}) reached before the "
                    "on-line loss stopped improving; consider increasing max_iter.",
                    ConvergenceWarning, stacklevel=3)
        self.estimator_ = start
        self.cumulative_loss_ = losses[0]
        self.loss_curve_ = np.array(losses)
        self.n_iter_, self.n_learners_ = len(losses), len(placed)
        self.n_features_in_ = start.n_features_in_
        if hasattr(start, "feature_names_in_"):
            self.feature_names_in_ = start.feature_names_in_
        if classifier:
            self.classes_ = start.classes_
        return self

    # -- prediction, block by block on dask data ---------------------------------

    def predict(self, X):
        """Predictions of ``estimator_``: a dask array for dask X (computed
        partition by partition), else an ndarray.

        Parameters
        ----------
        X : dask array, dask DataFrame or array-like of shape \
                (n_samples, n_features)
            Inputs.

        Returns
        -------
        y : dask array or ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predicted targets or labels.
        """
        return self._blockwise("predict", X)

    def predict_proba(self, X):
        """Class probabilities of ``estimator_`` (classifiers), as :meth:`predict`.

        Parameters
        ----------
        X : dask array, dask DataFrame or array-like of shape \
                (n_samples, n_features)
            Inputs.

        Returns
        -------
        proba : dask array or ndarray of shape (n_samples, n_classes)
            Probabilities of the classes, in the order of ``classes_``.
        """
        return self._blockwise("predict_proba", X)

    def decision_function(self, X):
        """Decision values of ``estimator_`` (classifiers), as :meth:`predict`.

        Parameters
        ----------
        X : dask array, dask DataFrame or array-like of shape \
                (n_samples, n_features)
            Inputs.

        Returns
        -------
        scores : dask array or ndarray of shape (n_samples,) or \
                (n_samples, n_classes)
            Decision values.
        """
        return self._blockwise("decision_function", X)

    def score(self, X, y, sample_weight=None):
        """R^2 (regressor) or accuracy (classifier) of ``estimator_`` on (X, y),
        from sums over the partitions of dask data.

        Parameters
        ----------
        X : dask array, dask DataFrame or array-like of shape \
                (n_samples, n_features)
            Inputs.
        y : dask array, Series or array-like of shape (n_samples,) or \
                (n_samples, n_outputs)
            True targets or labels, partitioned as X.
        sample_weight : dask array, Series or array-like of shape \
                (n_samples,), default=None
            Weights of the samples.

        Returns
        -------
        score : float
            As ``estimator_.score``.
        """
        check_is_fitted(self, "estimator_")
        if not any(dask.is_dask_collection(v) for v in (X, y, sample_weight)):
            return self.estimator_.score(X, y, sample_weight=sample_weight)
        stats = dask.compute(*[dask.delayed(_score_terms)(self.estimator_, block)
                               for block in _partitions(X, y, sample_weight, 1)])
        return _combined_score(stats, is_classifier(self.estimator_))

    def _blockwise(self, method, X):
        check_is_fitted(self, "estimator_")
        function = getattr(self.estimator_, method)
        if not dask.is_dask_collection(X):
            return function(X)
        if isinstance(X, da.Array):
            X = X.rechunk({1: -1})
            parts, lengths = X.to_delayed()[:, 0], X.chunks[0]
        else:
            parts = X.to_delayed()
            lengths = [np.nan] * len(parts)
        sample = function(np.zeros((1, self.n_features_in_)) if not hasattr(
            X, "columns") else X._meta_nonempty.iloc[:1])
        return da.concatenate([
            da.from_delayed(dask.delayed(function)(part), (rows,) + sample.shape[1:],
                            dtype=sample.dtype)
            for part, rows in zip(parts, lengths, strict=True)])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags.sparse = True
        return tags


def _score_terms(estimator, block):
    """A partition's terms of the score: the weight, the weighted mean of y and
    the sum of squares about it, the squared errors (regressor, per output), or
    the weight and the weight of the right labels (classifier)."""
    X, y, sample_weight = block
    if not X.shape[0]:
        return None
    w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    predicted = estimator.predict(X)
    if is_classifier(estimator):
        return w.sum(), float(w @ (predicted == y))
    Y = y.reshape(y.shape[0], -1)
    mean = w @ Y / w.sum()
    return (w.sum(), mean, w @ (Y - mean) ** 2,
            w @ (Y - predicted.reshape(Y.shape)) ** 2)


def _combined_score(stats, classifier):
    """The score of the terms of every partition (:func:`_score_terms`), the
    means and sums of squares combined pairwise in partition order (Chan,
    Golub & LeVeque), so that no sum of y^2 cancels."""
    stats = [s for s in stats if s is not None]
    if classifier:
        return sum(s[1] for s in stats) / sum(s[0] for s in stats)
    weight, mean, spread, errors = stats[0]
    for w, m, s, e in stats[1:]:
        delta, total = m - mean, weight + w
        mean = mean + delta * w / total
        spread = spread + s + delta**2 * weight * w / total
        errors, weight = errors + e, total
    # As r2_score: an output of constant y scores 1 if predicted exactly, else 0.
    scores = np.where(spread > 0, 1 - errors / np.where(spread > 0, spread, 1),
                      np.where(errors == 0, 1.0, 0.0))
    return float(np.mean(scores))
