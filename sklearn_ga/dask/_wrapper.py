"""ParameterMixing: the estimator of :mod:`sklearn_ga.dask`, which drives the
passes on the ``dask.distributed`` client in use."""

import warnings
from numbers import Integral, Real

import dask
import numpy as np
from distributed import CancelledError, get_client
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import SCALE_ROWS, BaseGA
from .._cv import GAClassifierCV, GARegressorCV
from .._psi import PSI
from ._data import (
    block,
    blockwise,
    combined_score,
    held_rows,
    labels,
    length,
    partitions,
    score_terms,
)
from ._mixing import SPACES, Run, combine, learn, mix_pass
from ._placement import arrived, placement


class ParameterMixing(MetaEstimatorMixin, BaseEstimator):
    """One GA model learned on a Dask cluster by iterative parameter mixing.

    The partitions are cut into ``n_learners`` contiguous shares, one learner
    each. Each pass, every learner runs one on-line pass of the compiled loop
    (``partial_fit``) over its share, in order, from the current mixed model,
    where the share's partitions are; a mixing task averages their models,
    weighted by their rows, and the next pass starts from the mix (McDonald, Hall & Mann
    2010), as Vowpal Wabbit's AllReduce mixes its nodes' models between passes.
    Each learner's share of the rows is known before the pass, so the sum runs
    in the binary tree fixed by the shares' order, as a tree of mixing tasks of
    ``mix_fan_in`` terms each: the same partitions and ``n_learners`` give the
    same model, bit for bit, wherever the partitions lie, whichever worker runs
    a share, whenever it finishes, and whichever worker dies meanwhile (Dask
    runs its tasks again). The fit chooses once where each partition is learned,
    each worker given its fair part of every pass: where it lies, the model sent
    from worker to worker, or on another worker, the partition sent there once.
    With one learner, the model is that of ``partial_fit`` over the partitions
    in turn. The tasks run on the ``dask.distributed`` client in use.

    Read more in the :ref:`User Guide <distributed>`.

    Parameters
    ----------
    estimator : GARegressor or GAClassifier
        The model to learn (unfitted; its ``max_iter``, ``tol`` and ``shuffle``
        are not read: a pass is ``partial_fit``'s). ``eta`` must be a number:
        with ``eta="theory"`` each learner would set its rate from its own rows.
    max_iter : int, default=5
        The most passes over the data.
    tol : float or None, default=1e-3
        The passes stop when the on-line loss of a pass, summed over the
        learners, has not fallen below the best pass's minus ``tol * n_samples``
        for ``n_iter_no_change`` passes in a row, as ``fit``'s epochs stop (with
        ``early_stopping``: when the held-out score of the mix has not risen
        above the best's plus ``tol``). None: ``max_iter`` passes.
    n_iter_no_change : int, default=5
        Passes without improvement before stopping.
    early_stopping : bool, default=False
        Whether to stop on a held-out score (R^2 or accuracy): each partition
        holds out its last ``floor(validation_fraction * rows)`` rows, a split
        fixed by the partitioning (not stratified, not shuffled). Each mix is
        scored by the next pass's learners; the model is the last mix.
    validation_fraction : float in (0, 1), default=0.1
        The fraction of each partition's rows held out with ``early_stopping``.
    mixing : {"parameters", "weights"}, default="parameters"
        Where the models are averaged: their parameters Theta (for EG and EG±
        a normalised geometric mean of the weights), or their weights
        psi(Theta), mapped back by psi^-1. Either stays in psi's domain
        (:func:`~sklearn_ga.dask.mix`).
    n_learners : int or None, default=None
        The learners, each given a contiguous share of the partitions (at most
        one partition each); None: one per worker of the client. Fewer learners
        see more rows each per pass; more run more at once.
    mix_fan_in : int, default=16
        The terms each mixing task sums, a power of two: the learners' terms
        are summed in a tree of such tasks, one level per factor of
        ``mix_fan_in`` in ``n_learners``. Changes the time, never the model.

    Attributes
    ----------
    estimator_ : GARegressor or GAClassifier
        The mixed model: a plain fitted estimator, picklable, that predicts
        without Dask. Its ``t_`` counts every trial of every learner and its
        ``cumulative_loss_`` their losses; with ``average``, it predicts with
        the mean weights over all those trials.
    cumulative_loss_ : float
        The first pass's on-line (progressive) loss, summed over the learners.
    loss_curve_ : ndarray of shape (n_iter,)
        Each pass's on-line loss, summed over the learners.
    validation_scores_ : ndarray of shape (n_scores,) or None
        The held-out score of each mix scored, with ``early_stopping`` (else
        None): the last is the returned model's.
    n_iter_ : int
        The passes run.
    n_learners_ : int
        The learners of each pass.
    n_features_in_ : int
        The number of features.
    feature_names_in_ : ndarray of shape (n_features_in,)
        The column names of a DataFrame X.
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
    ...                   dashboard_address=":0") as cluster, Client(cluster):
    ...     model = ParameterMixing(GARegressor(eta=0.01), max_iter=3, tol=None)
    ...     model = model.fit(da.from_array(X, chunks=1000),
    ...                       da.from_array(y, chunks=1000))
    >>> model.n_learners_, model.n_iter_, model.estimator_.t_
    (2, 3, 12000)
    >>> bool(model.score(X, y) > 0.99)
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["partial_fit"])],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, None, None, closed="neither"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "mixing": [StrOptions(set(SPACES))],
        "n_learners": [Interval(Integral, 1, None, closed="left"), None],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "mix_fan_in": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, estimator, *, max_iter=5, tol=1e-3, n_iter_no_change=5,
                 early_stopping=False, validation_fraction=0.1,
                 mixing="parameters", n_learners=None, mix_fan_in=16):
        self.estimator = estimator
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.mixing = mixing
        self.n_learners = n_learners
        self.mix_fan_in = mix_fan_in

    def fit(self, X, y, sample_weight=None, classes=None):
        """Learn the model by passes of parameter mixing over (X, y).

        Parameters
        ----------
        X : dask array or dask DataFrame of shape (n_samples, n_features)
            Inputs, partitioned by rows (a dask array's column chunks are
            joined); chunks of CSR matrices are read as such. In-memory data
            are cut into one partition per worker.
        y : dask array, Series or DataFrame of shape (n_samples,) or \
                (n_samples, n_outputs)
            Targets, partitioned as X (a dask array is rechunked to X's rows).
        sample_weight : dask array or Series of shape (n_samples,), default=None
            Non-negative weights of the trials, partitioned as y.
        classes : array-like of shape (n_classes,), default=None
            A classifier's labels; None: those of y, found in one pass over it.

        Returns
        -------
        self : object
            Fitted wrapper.
        """
        self._validate_params()
        if self.mix_fan_in & (self.mix_fan_in - 1):
            raise ValueError(
                f"mix_fan_in must be a power of two (the groups of the binary "
                f"tree of the sum); got {self.mix_fan_in!r}.")
        estimator = self.estimator
        if (not isinstance(estimator, BaseGA)
                or isinstance(estimator, (GAClassifierCV, GARegressorCV))):
            raise TypeError(
                "ParameterMixing mixes the models of GARegressor or GAClassifier; "
                f"got {type(estimator).__name__} (a CV estimator's grid is many "
                "models: mix the one of its chosen eta_ and U_).")
        if estimator.eta == "theory" or estimator.early_stopping:
            raise ValueError(
                "ParameterMixing needs the estimator's eta to be a number and "
                "early_stopping=False: each learner sees only its partition, "
                "from whose rows eta='theory' would set a rate of its own, and a "
                "pass is partial_fit's, which holds nothing out. Set eta (e.g. "
                "to sklearn_ga.theorem3_learning_rate's on a sample) and "
                "early_stopping=False (ParameterMixing's early_stopping holds "
                "rows out of every partition).")
        client = _client()
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise RuntimeError(
                "The Dask cluster of the client in use has no workers: start "
                "some (or wait for them, client.wait_for_workers) before fit.")
        parts, rows = partitions(X, y, sample_weight, len(workers))
        futures = client.compute([v for part in parts for v in part
                                  if v is not None])
        step = len(futures) // len(parts)
        parts = [tuple(futures[i:i + step]) + (None,) * (3 - step)
                 for i in range(0, len(futures), step)]
        try:
            return self._passes(client, workers, parts, rows, classes,
                                X.shape[1])
        except (CancelledError, OSError, TimeoutError) as error:
            raise RuntimeError(
                f"The Dask cluster went away during fit ({type(error).__name__}: "
                f"{error}); the model is as it was before fit.") from error
        # (The futures are released, never cancelled: their keys are the data's
        # own, which the user's persisted collections may hold too.)

    def _passes(self, client, workers, parts, rows, classes, n_features):
        """The passes over the partitions ``parts`` (triples of futures, of
        ``rows`` rows each, None where unknown); the fitted attributes are set
        only once every pass succeeded."""
        if is_classifier(self.estimator) and classes is None:
            classes = np.unique(np.concatenate(client.gather(
                client.map(labels, [part[1] for part in parts]))))
        unknown = [i for i, r in enumerate(rows) if r is None]
        for i, r in zip(unknown, client.gather(
                client.map(length, [parts[i][0] for i in unknown])), strict=True):
            rows[i] = r
        held = self.validation_fraction if self.early_stopping else 0.0
        if held and not sum(held_rows(r, held) for r in rows):
            raise ValueError(
                f"validation_fraction={held!r} holds out no row of partitions of "
                f"{max(rows)} rows at most (each holds out its last "
                "floor(validation_fraction * rows)); raise it, or set "
                "early_stopping=False.")
        plan, moves = placement(client, workers, parts, rows, held,
                                self.n_learners or len(workers), n_features,
                                self.max_iter)
        if not plan:
            raise ValueError("ParameterMixing got no rows to learn: X is empty.")
        # The whole fit is one graph: each pass's learners wait for the last
        # pass's mix, itself a task (the root of a tree of them), so the driver
        # waits on no pass. Early stopping scores each mix in the next pass, and
        # the last in a round of its own.
        rule = (self.tol, self.n_iter_no_change, self.max_iter, bool(held))
        # The partitions that move are sent, in the order they are read, while
        # the first pass learns those held (the futures are kept until the end).
        sending = [client.submit(arrived, *part[:2], workers=[worker],
                                 allow_other_workers=True, pure=False)
                   for worker, part in moves]
        run = Run(self._template(client, parts, classes))
        for index in range(self.max_iter + bool(held)):
            scoring = index == self.max_iter
            terms = []
            for later, first, share in plan:
                model, runs = None, later if index else first
                for step, (worker, blocks) in enumerate(runs):
                    model = client.submit(
                        learn, run, blocks, None if scoring else share, classes,
                        self.mixing, model, step == len(runs) - 1, held,
                        workers=[worker], allow_other_workers=True, pure=False)
                terms.append(model)
            while len(terms) > self.mix_fan_in:
                terms = [client.submit(combine, *terms[i:i + self.mix_fan_in],
                                       pure=False)
                         for i in range(0, len(terms), self.mix_fan_in)]
            run = client.submit(mix_pass, run, self.mixing, rule, *terms,
                                pure=False)
        run = run.result()
        del sending
        if self.tol is not None and self.max_iter > 1 and not run.stopped:
            warnings.warn(
                f"Maximum number of passes ({self.max_iter}) reached before the "
                f"{'validation score' if held else 'on-line loss'} stopped "
                "improving; consider increasing max_iter.",
                ConvergenceWarning, stacklevel=3)
        start, losses = run.model, run.losses
        self.estimator_ = start
        self.cumulative_loss_ = losses[0]
        self.loss_curve_ = np.array(losses)
        self.validation_scores_ = np.array(run.scores) if held else None
        self.n_iter_, self.n_learners_ = len(losses), len(plan)
        self.n_features_in_ = start.n_features_in_
        if hasattr(start, "feature_names_in_"):
            self.feature_names_in_ = start.feature_names_in_
        if hasattr(start, "classes_"):
            self.classes_ = start.classes_
        return self

    def _template(self, client, parts, classes):
        """A clone of the estimator that every learner starts from. With
        ``U="auto"``, its U is the one the estimator chooses from its first rows
        (``U_``), read from the first partition: the learners share one scale, so
        that their parameters mix (each would otherwise choose its own)."""
        template = clone(self.estimator)
        if template.U == "auto" and PSI[template.psi].scale_norm is not None:
            template.set_params(U=client.submit(
                _chosen_scale, template, parts[0], classes, pure=False).result())
        return template

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
        terms = dask.compute(*[dask.delayed(score_terms)(self.estimator_, part)
                               for part in partitions(X, y, sample_weight)[0]])
        return combined_score(terms, is_classifier(self.estimator_))

    def _blockwise(self, method, X):
        check_is_fitted(self, "estimator_")
        function = getattr(self.estimator_, method)
        if not dask.is_dask_collection(X):
            return function(X)
        return blockwise(function, X, self.n_features_in_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags.sparse = True
        return tags


def _client():
    """The ``dask.distributed`` client in use, or a clear error."""
    try:
        client = get_client()
    except ValueError as error:
        raise RuntimeError(
            "ParameterMixing runs on a dask.distributed client: none is in use "
            "(create one, e.g. Client(LocalCluster()), before fit).") from error
    if client.status not in ("running", "connecting"):
        raise RuntimeError(
            f"The dask.distributed client in use is {client.status}: its cluster "
            "is gone. Connect a new client before fit.")
    return client


def _chosen_scale(template, part, classes):
    """The U that ``template`` (with ``U="auto"``) chooses from the first rows
    of the partition ``part``, where it lies."""
    X, y, sample_weight = block(*part)
    extra = {} if classes is None else {"classes": classes}
    return clone(template).partial_fit(
        X[:SCALE_ROWS], y[:SCALE_ROWS], sample_weight=None
        if sample_weight is None else sample_weight[:SCALE_ROWS], **extra).U_
