"""ParameterMixing: the estimator of :mod:`sklearn_ga.dask`, which drives the
passes on the ``dask.distributed`` client in use."""

import warnings
from numbers import Integral, Real

import dask
import numpy as np
from distributed import get_client, wait
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import SCALE_ROWS, BaseGA
from .._cv import GAClassifierCV, GARegressorCV
from .._psi import PSI
from ._data import blockwise, combined_score, labels, partitions, score_terms
from ._mixing import SPACES, Run, learn, mix_pass

# What a hop of the model between two workers costs besides its bytes: the
# latency of a task that waits for another, in bytes of a fast link (a few
# milliseconds at a gigabyte a second).
HOP_BYTES = 4 * 2**20


class ParameterMixing(MetaEstimatorMixin, BaseEstimator):
    """One GA model learned on a Dask cluster by iterative parameter mixing.

    The partitions are cut into ``n_learners`` contiguous shares, one learner
    each. Each pass, every learner runs one on-line pass of the compiled loop
    (``partial_fit``) over its share, in order, from the current mixed model,
    where the share's partitions are; a mixing task averages their models,
    weighted by their rows, and the next pass starts from the mix (McDonald, Hall & Mann
    2010), as Vowpal Wabbit's AllReduce mixes its nodes' models between passes.
    The sum runs in a binary tree fixed by the shares' order: the same
    partitions and ``n_learners`` give the same model, bit for bit, whichever
    worker runs a share and whenever it finishes. With one learner, the model
    is that of ``partial_fit`` over the partitions in turn. The tasks run on
    the ``dask.distributed`` client in use.

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
        for ``n_iter_no_change`` passes in a row, as ``fit``'s epochs stop.
        None: ``max_iter`` passes.
    n_iter_no_change : int, default=5
        Passes without improvement before stopping.
    mixing : {"parameters", "weights"}, default="parameters"
        Where the models are averaged: their parameters Theta (for EG and EG±
        a normalised geometric mean of the weights), or their weights
        psi(Theta), mapped back by psi^-1. Either stays in psi's domain
        (:func:`~sklearn_ga.dask.mix`).
    n_learners : int or None, default=None
        The learners, each given a contiguous share of the partitions (at most
        one partition each); None: one per worker of the client. Fewer learners
        see more rows each per pass; more run more at once.

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
                "early_stopping=False.")
        client = get_client()
        workers = sorted(client.scheduler_info()["workers"])
        blocks = client.compute(partitions(X, y, sample_weight, len(workers)))
        try:
            return self._passes(client, workers, blocks, classes, X.shape[1])
        finally:
            client.cancel(blocks)

    def _passes(self, client, workers, blocks, classes, n_features):
        """The passes over the partitions ``blocks`` (futures); the fitted
        attributes are set only once every pass succeeded."""
        if is_classifier(self.estimator) and classes is None:
            classes = np.unique(np.concatenate(client.gather(
                [client.submit(labels, part) for part in blocks])))
        plan = _plan(client, workers, blocks, self.n_learners or len(workers),
                     n_features, self.max_iter)
        # The whole fit is one graph: each pass's learners wait for the last
        # pass's mix, itself a task, so the driver waits on no pass.
        run = Run(self._template(client, blocks, classes))
        for _ in range(self.max_iter):
            terms = []
            for runs in plan:
                model = None
                for index, (worker, part) in enumerate(runs):
                    model = client.submit(learn, run, part, classes, self.mixing,
                                          model, index == len(runs) - 1,
                                          workers=[worker], pure=False)
                terms.append(model)
            run = client.submit(mix_pass, run, self.mixing, self.tol,
                                self.n_iter_no_change, self.max_iter, *terms,
                                pure=False)
        run = run.result()
        if self.tol is not None and self.max_iter > 1 and not run.stopped:
            warnings.warn(
                f"Maximum number of passes ({self.max_iter}) reached before the "
                "on-line loss stopped improving; consider increasing max_iter.",
                ConvergenceWarning, stacklevel=3)
        start, losses = run.model, run.losses
        self.estimator_ = start
        self.cumulative_loss_ = losses[0]
        self.loss_curve_ = np.array(losses)
        self.n_iter_, self.n_learners_ = len(losses), len(plan)
        self.n_features_in_ = start.n_features_in_
        if hasattr(start, "feature_names_in_"):
            self.feature_names_in_ = start.feature_names_in_
        if hasattr(start, "classes_"):
            self.classes_ = start.classes_
        return self

    def _template(self, client, blocks, classes):
        """A clone of the estimator that every learner starts from. With
        ``U="auto"``, its U is the one the estimator chooses from its first rows
        (``U_``), read from the first partition: the learners share one scale, so
        that their parameters mix (each would otherwise choose its own)."""
        template = clone(self.estimator)
        if template.U == "auto" and PSI[template.psi].scale_norm is not None:
            X, y, sample_weight = client.gather(blocks[0])
            extra = {} if classes is None else {"classes": classes}
            probe = clone(template).partial_fit(
                X[:SCALE_ROWS], y[:SCALE_ROWS], sample_weight=None
                if sample_weight is None else sample_weight[:SCALE_ROWS], **extra)
            template.set_params(U=probe.U_)
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
                               for part in partitions(X, y, sample_weight)])
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


def _plan(client, workers, blocks, n_learners, n_features, passes):
    """The learners' contiguous shares of the partitions, in order, each as its
    runs ``[(worker, blocks)]``: the whole share on a worker that holds many of
    its partitions (at most ceil(shares / workers) shares a worker), which
    fetches the others once and keeps them; or, where that moves more bytes
    than the model would in ``passes`` passes, each run of partitions that one
    worker holds on that worker, the model sent from run to run. Where a share
    runs changes nothing but the time."""
    wait(blocks)
    holders = {key: min(held) for key, held in client.who_has(blocks).items()}
    sizes = client.nbytes([block.key for block in blocks], summary=False)
    # A model pickles its parameters and its loop's terms: about three (k, n)
    # arrays (k = 1 here: the outputs are not known yet). A hop also waits for
    # the scheduler between two tasks, counted as the bytes a link sends
    # meanwhile (HOP_BYTES).
    hop_bytes = 24 * n_features + HOP_BYTES
    shares = [[blocks[i] for i in share] for share in np.array_split(
        np.arange(len(blocks)), min(n_learners, len(blocks)))]
    held = [{worker: sum(holders[block.key] == worker for block in share)
             for worker in workers} for share in shares]
    room = dict.fromkeys(workers, -(-len(shares) // len(workers)))
    chosen = {}
    for index in sorted(range(len(shares)), key=lambda i: -max(held[i].values())):
        worker = max((w for w in workers if room[w]), key=held[index].get)
        chosen[index], room[worker] = worker, room[worker] - 1
    plan = []
    for index, share in enumerate(shares):
        runs = []
        for block in share:
            if runs and runs[-1][0] == holders[block.key]:
                runs[-1][1].append(block)
            else:
                runs.append((holders[block.key], [block]))
        moved = sum(sizes[block.key] for block in share
                    if holders[block.key] != chosen[index])
        hops = (len(runs) - 1) * passes * hop_bytes
        plan.append([(chosen[index], share)] if moved <= hops else runs)
    return plan
