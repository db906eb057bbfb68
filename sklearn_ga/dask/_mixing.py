"""What a learner's pass gives the mix, how the learners' terms are summed, and
the mixed model: the parameter mixing of :mod:`sklearn_ga.dask`.

A learner holds a contiguous share of the partitions: it runs ``partial_fit``
over them in order from the mixed model and gives its terms, its rows and its
model's point in the mixing space. The mixing task weighs each point by its
share of the rows and sums them in a binary tree fixed by the learners' order
(:func:`tree_sum`), so the same shares give the same bits whichever workers ran
them and whenever they finished. The mean, mapped back into psi's domain, is the
next mixed model.
"""

import copy
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.base import clone, is_classifier

from .._psi import PSI
from ._data import block, combined_score, score_terms, split

SPACES = ("parameters", "weights")


def mix(thetas, weights, rows, psi, U=1.0, p=2.0, space="parameters"):
    """The mixed parameters of learners' models, in psi's domain.

    Parameters
    ----------
    thetas : sequence of ndarray of shape (k, n)
        Each learner's parameters Theta.
    weights : sequence of ndarray of shape (k, n) or None
        Each learner's weights psi(Theta), read in weight space only (None
        there: computed from ``thetas``).
    rows : sequence of float
        Each learner's rows in the pass, the weights of the mean.
    psi : str
        The models' psi, a key of :data:`~sklearn_ga.PSI`.
    U : float, default=1.0
        The models' ``U``.
    p : float, default=2.0
        The models' ``p``.
    space : {"parameters", "weights"}, default="parameters"
        The mean of the parameters Theta (for EG, a normalised geometric mean of
        the weights), or that of the weights psi(Theta), mapped back by
        psi^-1.

    Returns
    -------
    theta : ndarray of shape (k, n)
        Parameters whose weights lie in psi's domain: in the l1 ball of radius U
        (EG±), on the simplex (softmax, simplex), on the sphere of radius U
        (sphere), positive (exp, burg). The learners are summed in their order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_ga.dask import mix
    >>> a, b = np.log([[0.5, 0.5]]), np.log([[0.9, 0.1]])
    >>> np.exp(mix([a, b], None, [1, 1], "softmax")).round(3)  # geometric mean
    array([[0.671, 0.224]])
    >>> from scipy.special import softmax
    >>> softmax(mix([a, b], None, [1, 1], "softmax"), axis=1).round(3)
    array([[0.75, 0.25]])
    >>> softmax(mix([a, b], None, [1, 1], "softmax", space="weights"),
    ...         axis=1).round(3)
    array([[0.7, 0.3]])
    """
    if space == "weights" and weights is None:
        weights = [PSI[psi].weights(theta, U, p) for theta in thetas]
    points = [point(theta, None if weights is None else weights[index], psi, space)
              for index, theta in enumerate(thetas)]
    return finish(weighted_mean(points, rows), psi, U, p, space)


def weighted_mean(arrays, rows):
    """The mean of ``arrays`` weighted by ``rows``, each scaled by its share of
    the rows before the sum (one array stays itself, bit for bit)."""
    rows = np.asarray(rows, dtype=np.float64)
    return tree_sum([share * array for share, array in
                     zip(rows / rows.sum(), arrays, strict=True)])


def point(theta, weights, psi, space):
    """A model's point in the mixing space: its weights, or its parameters (for
    a geodesic psi, on the unit sphere: its Theta is its point only up to a
    positive factor, KMWW Examples 2, 3)."""
    if space == "weights":
        return weights
    if PSI[psi].geodesic:
        return theta / np.linalg.norm(theta, axis=-1, keepdims=True)
    return theta


def finish(mean, psi, U, p, space):
    """The parameters of the mean ``mean`` of the learners' points."""
    if space == "parameters":
        # Any mean of parameters is parameters: psi maps them into its domain.
        return mean
    if psi == "sphere":
        # The mean of points of the sphere lies inside its ball: projected back
        # along its ray onto the sphere of radius U (KMWW Example 2).
        mean = mean * (U / np.linalg.norm(mean, axis=-1, keepdims=True))
    elif psi in ("softmax", "simplex"):
        mean = mean / mean.sum(axis=-1, keepdims=True)  # (the simplex, rounded)
    # The l1 ball of EG± (HKW §III) and the positive orthant of EGU and Burg are
    # convex: the mean stays inside, strictly.
    return PSI[psi].inverse(mean, U, p)


def learn(run, parts, share, classes, space, model=None, last=True, held=0.0):
    """One learner's pass, or part of it: ``partial_fit`` over its partitions
    ``parts`` (``(X, y, sample_weight)`` each) in order, continuing ``model``
    (None: from the mixed model of :class:`Run` ``run``, a fresh clone of the
    estimator on the first pass). Unless ``last``, the model, for the share's
    next partitions on another worker (a copy continues bit for bit); else the
    learner's terms, its point and intercepts already scaled by its ``share`` of
    the rows (:func:`combine` sums them), or None once the run stopped.

    ``held``: the fraction of each partition's rows held out (its last ones,
    :func:`~sklearn_ga.dask._data.split`); the learner scores the model it
    starts from on them, for the early stopping of the mix (:func:`mix_pass`).
    A scoring round (``share=None``) only scores. On the first pass the terms
    carry the model, emptied of its loop, as the template of the mixed models."""
    if run.stopped:
        return None
    first, start = run.template is None, run.model
    parts = [split(block(*part), held) for part in parts]
    scores = [] if first or not held else [
        score_terms(start, part[1]) for part in parts]
    if share is None:
        return {"scores": scores}
    if model is None:
        model = clone(start) if first else copy.deepcopy(start)  # (not the shared)
        # Its averaged trials are summed from zero: the mix adds every learner's.
        model._the_run().averages = None
    extra = {} if classes is None else {"classes": classes}
    for (X, y, sample_weight), _ in parts:
        if X.shape[0]:
            model.partial_fit(X, y, sample_weight=sample_weight, **extra)
    if not last:
        return model
    before = np.zeros(3) if first else progress(start)
    theta = np.array(model.theta_)
    psi, U, p = model._fitted.psi_name, model._scale(), float(model.p)
    weights = PSI[psi].weights(theta, U, p) if space == "weights" else None
    terms = {
        "rows": int(progress(model)[0] - before[0]),
        "point": share * point(theta, weights, psi, space),
        # The loop's own intercepts (an averaging model's intercept_ is a mean).
        "intercept": share * np.array(model.__dict__["intercept_"]),
        "progress": progress(model) - before,
        "averages": model._carried_averages(),
        "rates": (model.eta_, model.intercept_eta_, model.n_eta_changes_),
        "template": None,
        "scores": scores,
    }
    if first:
        model._the_run().kept = None  # (it holds this learner's pass)
        terms["template"] = model
    return terms


def combine(*terms):
    """The sum of learners' terms (:func:`learn`), or of sums of them, in their
    order: a node of the tree of mixing tasks. The arrays are summed by
    :func:`tree_sum`; with groups of a power of two, a tree of such nodes sums
    in the order one node over all the learners would, bit for bit. The rates
    are the last learner's, the template the first's, the held-out scores'
    terms are kept in order. None without terms."""
    terms = [part for part in terms if part is not None]
    if not terms:
        return None
    if "point" not in terms[0]:  # (a scoring round)
        return {"scores": [s for part in terms for s in part["scores"]]}
    total = {name: tree_sum([part[name] for part in terms])
             for name in ("rows", "point", "intercept", "progress")}
    total["averages"] = None if terms[0]["averages"] is None else tuple(
        tree_sum(list(parts)) for parts in zip(
            *[part["averages"] for part in terms], strict=True))
    total["rates"] = terms[-1]["rates"]
    total["template"] = terms[0]["template"]
    total["scores"] = [s for part in terms for s in part["scores"]]
    return total


def tree_sum(terms):
    """The sum of ``terms`` up the binary tree that pairs neighbours level by
    level (an odd last one rises alone): fixed by their order, as a spanning
    tree's AllReduce sums, whoever computed them and whenever."""
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i]
                 for i in range(0, len(terms), 2)]
    return terms[0]


def progress(model):
    """``(t_, cumulative_loss_, loss of Theta_1 over the same trials)``: what a
    pass adds to, the last compared with the second by the runaway check of
    :mod:`sklearn_ga._passes`."""
    return np.array([model.t_, model.cumulative_loss_,
                     model._the_run().initial_loss])


@dataclass(frozen=True)
class Run:
    """What one pass of the mixing hands the next: the mixed ``model`` (the
    estimator itself before the first pass), the ``template`` of the mixed
    models, the ``sums`` of every averaged trial, the counters ``before`` the
    next pass, each pass's on-line loss, the held-out score of each mix (with
    early stopping), and where ``tol`` stands."""

    model: object
    template: object = None
    sums: tuple = None
    before: np.ndarray = field(default_factory=lambda: np.zeros(3))
    losses: tuple = ()
    scores: tuple = ()
    best: float = np.inf
    stale: int = 0
    stopped: bool = False


def mix_pass(run, space, rule, *terms):
    """The mix that ends a pass, as a task after the learners' (their
    ``terms``, or sums of them, :func:`combine`, in order): the :class:`Run` of
    the next pass. ``rule``: ``(tol, n_iter_no_change, max_iter,
    early_stopping)``. The run stops once its criterion has not improved by
    ``tol`` for ``n_iter_no_change`` passes, as ``fit``'s epochs stop: the
    on-line loss of a pass, or with early stopping the held-out score of a mix,
    which the next pass's learners compute (the pass they learn meanwhile is
    then dropped: the model is the last mix, as ``fit`` keeps the last epoch's).
    After a stop, it hands the run on unchanged."""
    tol, n_iter_no_change, max_iter, early = rule
    if run.stopped:
        return run
    total = combine(*terms)
    if total is None:
        raise ValueError("ParameterMixing got no rows to learn: X is empty.")
    best, stale, scores = run.best, run.stale, run.scores
    if early and total["scores"]:
        scores += (combined_score(total["scores"], is_classifier(run.model)),)
        # (best: the best score, negated, as the best loss is kept without it.)
        worse = tol is not None and scores[-1] < -best + tol
        stale, best = stale + 1 if worse else 0, min(best, -scores[-1])
        stopped = stale >= n_iter_no_change
        if stopped or "point" not in total:  # (the last mix, or a scoring round)
            return replace(run, scores=scores, best=best, stale=stale,
                           stopped=stopped)
    template = run.template if run.template is not None else total["template"]
    sums = total["averages"]
    if sums is not None and run.sums is not None:
        sums = tuple(a + b for a, b in zip(run.sums, sums, strict=True))
    losses = run.losses + (float(total["progress"][1]),)
    if not early and tol is not None:
        stale = stale + 1 if losses[-1] > best - tol * total["rows"] else 0
        best = min(best, losses[-1])
    stopped = not early and stale >= n_iter_no_change
    model = mixed_model(template, total, run.before, sums, space, len(losses))
    if not stopped and not early and len(losses) < max_iter:
        # (The learners start from theta_: half the bytes sent without it. With
        # early stopping they score the mix: it keeps the weights it predicts with.)
        model.__dict__.pop("coef_", None)
    return Run(model, template, sums, run.before + total["progress"], losses,
               scores, best, stale, stopped)


def mixed_model(template, terms, before, sums, space, n_iter):
    """A plain fitted estimator holding the mix of a pass's learners (their
    mean point and intercepts and summed counters, ``terms``), from the
    counters ``before`` the pass and the sums ``sums`` of every averaged trial
    so far: the next pass starts from it, and the last is ``estimator_``."""
    model = copy.deepcopy(template)
    psi, U, p = model._fitted.psi_name, model._scale(), float(model.p)
    model.theta_ = finish(terms["point"], psi, U, p, space)  # (validated)
    model.intercept_ = terms["intercept"]
    t, loss, initial = before + terms["progress"]
    model.t_, model.cumulative_loss_ = int(t), loss
    model._the_run().initial_loss = initial
    model.eta_, model.intercept_eta_, model.n_eta_changes_ = terms["rates"]
    model.n_iter_ = n_iter
    model.path_measure_ = np.nan  # (a mix is no step along the path)
    if sums is not None and sums[2][0] > 0:
        # It predicts with the mean weights of every trial of every learner; a
        # partial_fit continues these sums.
        model._the_run().averages = sums
        coef = sums[0] / sums[2][:, None]
        coef.flags.writeable = False
        model.coef_ = model._shape_coef(coef)
    return model
