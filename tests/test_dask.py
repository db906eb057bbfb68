"""sklearn_ga.dask: parameter mixing on a LocalCluster, against partial_fit in
turn and a plain-NumPy transcription of the scheme; the mix in each psi's
domain; the inequalities the theory page states; the same bits on any cluster."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from sklearn_ga import (  # noqa: E402
    PSI,
    GAClassifier,
    GARegressor,
    GARegressorCV,
    matching_loss,
)
from sklearn_ga.dask import ParameterMixing, mix  # noqa: E402

CHUNK = 500


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  processes=False, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            yield client


def _stream(m=2000, n=8, seed=0, outputs=1):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(m, n))
    W = rng.uniform(-0.3, 0.3, size=(outputs, n))
    y = X @ W.T + 0.05 * rng.standard_normal((m, outputs))
    return X, y[:, 0] if outputs == 1 else y


def _dask(X, y):
    return da.from_array(X, chunks=(CHUNK, -1)), da.from_array(y, chunks=CHUNK)


def _shares(X, y, learners):
    """The learners' shares of the partitions as ParameterMixing cuts them."""
    parts = [(X[i:i + CHUNK], y[i:i + CHUNK]) for i in range(0, len(X), CHUNK)]
    return [[parts[i] for i in share] for share in
            np.array_split(np.arange(len(parts)), learners)]


def _same(a, b):
    """The same parameters, bit for bit; the same weights (the mix computes
    them from theta_ with the registry's NumPy formula, the loop in C)."""
    assert np.array_equal(a.theta_, b.theta_)
    assert np.array_equal(a.intercept_, b.intercept_)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-13, atol=1e-300)


MODELS = {
    "gd": dict(eta=0.01),
    "eg_pm": dict(psi="eg_pm", U=3.0, eta=0.05),
    "softmax": dict(psi="softmax", eta=0.05),
    "exp": dict(psi="exp", eta=0.01),
    "pnorm": dict(psi="pnorm", p=4.0, eta=0.01),
    "sphere": dict(psi="sphere", U=2.0, eta=0.01),
    "simplex": dict(psi="simplex", eta=0.01),
    "burg": dict(psi="burg", eta=0.001),
}


@pytest.mark.parametrize("name", MODELS)
def test_one_learner_is_partial_fit_in_turn(client, name):
    # One learner's pass is partial_fit over the partitions in turn, bit for
    # bit; its mix is itself.
    X, y = _stream()
    y = np.abs(y) + 0.1 if name in ("exp", "burg") else y
    estimator = GARegressor(**MODELS[name])
    mixed = ParameterMixing(estimator, max_iter=1, n_learners=1,
                            tol=None).fit(*_dask(X, y))
    sequential = GARegressor(**MODELS[name])
    for X_part, y_part in _shares(X, y, 1)[0]:
        sequential.partial_fit(X_part, y_part)
    if PSI[sequential.psi].geodesic:
        # The mix puts a geodesic psi's Theta, its point up to a positive
        # factor, on the unit sphere: the same point.
        unit = sequential.theta_ / np.linalg.norm(sequential.theta_)
        np.testing.assert_allclose(mixed.estimator_.theta_, unit, rtol=1e-14)
        np.testing.assert_allclose(mixed.estimator_.coef_, sequential.coef_,
                                   rtol=1e-13)
    else:
        _same(mixed.estimator_, sequential)
    assert mixed.estimator_.t_ == sequential.t_ == len(X)
    assert mixed.cumulative_loss_ == sequential.cumulative_loss_


def _learner(params, theta, intercept, X, y):
    """A GARegressor started from (theta, intercept): fitted on a row, its
    parameters then assigned (the public way to set a model's state)."""
    model = GARegressor(**params).partial_fit(X[:1], y[:1])
    model.theta_, model.intercept_ = theta, intercept
    return model


@pytest.mark.parametrize("space", ["parameters", "weights"])
@pytest.mark.parametrize("name", ["gd", "eg_pm", "softmax"])
def test_against_a_numpy_transcription(client, name, space):
    # Each pass: every share learned by partial_fit from the mix, then the mean
    # of their Theta (or of their weights, mapped back by psi^-1) weighted by
    # their rows, in NumPy alone.
    X, y = _stream(m=3000)
    params = MODELS[name]
    entry, U = PSI[params.get("psi", "identity")], params.get("U", 1.0)
    theta = np.full((1, X.shape[1]), entry.start)
    intercept = np.zeros(1)
    for _ in range(3):
        points, intercepts, rows = [], [], []
        for share in _shares(X, y, 2):
            model = _learner(params, theta, intercept, X, y)
            for X_part, y_part in share:
                model.partial_fit(X_part, y_part)
            points.append(entry.weights(model.theta_, U, 2.0)
                          if space == "weights" else model.theta_)
            intercepts.append(model.intercept_)
            rows.append(sum(len(part[1]) for part in share))
        shares = np.array(rows, dtype=float) / np.sum(rows)
        mean = np.einsum("g,gkn->kn", shares, np.array(points))
        theta = entry.inverse(mean, U, 2.0) if space == "weights" else mean
        intercept = shares @ np.array(intercepts)
    mixed = ParameterMixing(GARegressor(**params), max_iter=3, tol=None,
                            mixing=space).fit(*_dask(X, y))
    np.testing.assert_allclose(mixed.estimator_.theta_, theta, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(mixed.estimator_.intercept_, intercept, rtol=1e-9,
                               atol=1e-12)
    assert mixed.estimator_.t_ == 3 * len(X) and mixed.n_learners_ == 2


def test_same_bits_on_any_cluster(client):
    # Eight workers, twice, and the two-worker cluster: the same shares give
    # the same model, whichever worker ran a share and when.
    X, y = _stream(m=4000)
    dX, dy = _dask(X, y)
    estimator = GARegressor(psi="eg_pm", U=3.0, eta=0.05, average=True)
    with distributed.LocalCluster(n_workers=8, threads_per_worker=1,
                                  processes=False, dashboard_address=":0") as big:
        with distributed.Client(big, set_as_default=False) as other:
            with other.as_current():
                runs = [ParameterMixing(estimator, max_iter=3, tol=None).fit(dX, dy)
                        for _ in range(2)]
    assert runs[0].n_learners_ == 8
    with client.as_current():
        runs.append(ParameterMixing(estimator, max_iter=3, tol=None,
                                    n_learners=8).fit(dX, dy))
    for run in runs[1:]:
        _same(run.estimator_, runs[0].estimator_)
        assert np.array_equal(run.loss_curve_, runs[0].loss_curve_)


def _learners(X, y, params, learners):
    """Each share's model after one pass from the start, and its rows."""
    models = []
    for share in _shares(X, y, learners):
        model = GARegressor(**params)
        for X_part, y_part in share:
            model.partial_fit(X_part, y_part)
        models.append(model)
    return models


def test_counters_and_averages(client):
    # t_ and the first pass's loss sum the learners'; with average, coef_ is
    # the mean of every learner's averaged weights, weighted by their trials.
    X, y = _stream(m=3000, outputs=2)
    params = dict(eta=0.01, average=True)
    mixed = ParameterMixing(GARegressor(**params), max_iter=1, tol=None,
                            n_learners=3).fit(*_dask(X, y))
    models = _learners(X, y, params, 3)
    assert mixed.estimator_.t_ == len(X)
    np.testing.assert_allclose(mixed.cumulative_loss_,
                               sum(m.cumulative_loss_ for m in models), rtol=1e-12)
    trials = np.array([m.t_ for m in models], dtype=float)
    np.testing.assert_allclose(
        mixed.estimator_.coef_,
        np.einsum("g,gkn->kn", trials / trials.sum(), [m.coef_ for m in models]),
        rtol=1e-12)
    np.testing.assert_allclose(
        mixed.estimator_.intercept_,
        trials / trials.sum() @ np.array([m.intercept_ for m in models]),
        rtol=1e-12, atol=1e-15)
    assert mixed.estimator_.coef_.shape == (2, X.shape[1])
    # A plain estimator: it pickles, predicts without dask, and continues.
    copy = pickle.loads(pickle.dumps(mixed.estimator_))
    np.testing.assert_array_equal(copy.predict(X), mixed.predict(X))
    copy.partial_fit(X, y)
    assert copy.t_ == 2 * len(X)


@pytest.mark.parametrize("space", ["parameters", "weights"])
@pytest.mark.parametrize("psi", ["eg_pm", "softmax", "simplex", "sphere", "exp",
                                 "burg", "pnorm"])
def test_mix_stays_in_the_domain(psi, space):
    rng = np.random.default_rng(1)
    U = 2.0
    # Learners far apart: EG± weights near the l1 ball's boundary.
    thetas = [rng.normal(scale=6.0, size=(2, 5)) for _ in range(3)]
    if psi == "burg":
        thetas = [-np.abs(theta) - 0.1 for theta in thetas]
    theta = mix(thetas, None, [1, 2, 3], psi, U=U, p=3.0, space=space)
    weights = PSI[psi].weights(theta, U, 3.0)
    assert np.all(np.isfinite(weights))
    if psi == "eg_pm":
        assert np.all(np.abs(weights).sum(axis=1) < U)
    elif psi in ("softmax", "simplex"):
        assert np.all(weights > 0)
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-14)
    elif psi == "sphere":
        np.testing.assert_allclose(np.linalg.norm(weights, axis=1), U, rtol=1e-14)
    elif psi in ("exp", "burg"):
        assert np.all(weights > 0)
    if space == "weights" and psi != "sphere":
        # psi(mix) is the mean of the weights (the sphere's is projected).
        mean = np.einsum("g,gkn->kn", np.array([1, 2, 3]) / 6,
                         [PSI[psi].weights(t, U, 3.0) for t in thetas])
        np.testing.assert_allclose(weights, mean, rtol=1e-9, atol=1e-12)


def test_parameter_space_is_a_normalised_geometric_mean():
    rng = np.random.default_rng(2)
    weights = [softmax(rng.normal(size=(1, 6)), axis=1) for _ in range(4)]
    rows = np.array([1.0, 3.0, 2.0, 2.0])
    mixed = softmax(mix([np.log(w) for w in weights], None, rows, "softmax"), axis=1)
    geometric = np.prod([w ** (r / rows.sum())
                         for w, r in zip(weights, rows, strict=True)], axis=0)
    np.testing.assert_allclose(mixed, geometric / geometric.sum(), rtol=1e-13)


def _kl(u, w):
    return np.sum(u * np.log(u / w))


@pytest.mark.parametrize("space", ["parameters", "weights"])
def test_what_the_theory_page_states(space):
    # Parameter space: the divergence from any comparator u is convex in the
    # parameters, so KL(u || mix) <= the row-weighted mean of KL(u || w_g); for
    # EG the relative entropy is jointly convex, so weight space keeps it too.
    # Weight space: the square loss of the mixed weights is at most the mean
    # of the learners' (Jensen); parameter space can exceed it.
    rng = np.random.default_rng(3)
    n, rows = 6, np.array([2.0, 1.0, 1.0])
    X = rng.normal(size=(50, n))
    y = X @ softmax(rng.normal(size=n))
    jensen_fails = 0
    for _ in range(200):
        thetas = [rng.normal(scale=2.0, size=(1, n)) for _ in rows]
        weights = [softmax(t, axis=1) for t in thetas]
        mixed = softmax(mix(thetas, None, rows, "softmax", space=space), axis=1)
        u = softmax(rng.normal(scale=2.0, size=(1, n)), axis=1)
        means = rows / rows.sum()
        assert _kl(u, mixed) <= means @ [_kl(u, w) for w in weights] + 1e-12
        losses = [np.sum((X @ w[0] - y) ** 2) for w in weights]
        mixed_loss = np.sum((X @ mixed[0] - y) ** 2)
        if space == "weights":
            assert mixed_loss <= means @ losses + 1e-9
        jensen_fails += mixed_loss > means @ losses
    assert (jensen_fails > 0) == (space == "parameters")


def test_classifier_dataframes_and_predictions(client):
    import pandas as pd

    X, y = _stream(m=3000)
    labels = np.where(y > 0.1, "up", np.where(y < -0.1, "down", "flat"))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    dX = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(labels), npartitions=4)
    model = ParameterMixing(GAClassifier(phi="softmax", eta=0.05), max_iter=2,
                            tol=None).fit(dX, dy)
    given = ParameterMixing(GAClassifier(phi="softmax", eta=0.05), max_iter=2,
                            tol=None).fit(dX, dy, classes=["down", "flat", "up"])
    _same(model.estimator_, given.estimator_)
    assert model.classes_.tolist() == ["down", "flat", "up"]
    assert list(model.feature_names_in_) == list(frame.columns)
    for method in ("predict", "predict_proba", "decision_function"):
        lazy = getattr(model, method)(dX)
        assert isinstance(lazy, da.Array)
        np.testing.assert_array_equal(lazy.compute(),
                                      getattr(model.estimator_, method)(frame))
    assert model.score(dX, dy) == model.estimator_.score(frame, labels) > 0.8
    # Early stopping holds out the last rows of each DataFrame partition, by
    # position, and scores the mixes by accuracy there.
    held = ParameterMixing(GAClassifier(phi="softmax", eta=0.05), max_iter=2,
                           tol=None, early_stopping=True,
                           validation_fraction=0.2).fit(dX, dy)
    sizes = dX.map_partitions(len).compute().to_numpy()
    position = np.arange(len(frame)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    out = position >= np.repeat(sizes - (0.2 * sizes).astype(int), sizes)
    assert held.validation_scores_.shape == (2,)
    assert held.estimator_.t_ == 2 * np.sum(~out)
    np.testing.assert_allclose(held.validation_scores_[-1], held.estimator_.score(
        frame[out], labels[out]), rtol=1e-12)


def test_csr_partitions_and_scores(client):
    rng = np.random.default_rng(4)
    X = sp.random(2000, 300, density=0.02, format="csr", random_state=rng)
    y = X @ rng.normal(size=300) + 0.01 * rng.normal(size=2000)
    weight = rng.uniform(0.5, 2.0, size=2000)
    dX = da.from_array(X, chunks=(CHUNK, -1), asarray=False,
                       meta=sp.csr_matrix((0, 300)))
    dy, dw = (da.from_array(v, chunks=CHUNK) for v in (y, weight))
    model = ParameterMixing(GARegressor(eta=0.5), max_iter=3, tol=None,
                            n_learners=1).fit(dX, dy, sample_weight=dw)
    sequential = GARegressor(eta=0.5)
    for _ in range(3):
        for i in range(0, 2000, CHUNK):
            sequential.partial_fit(X[i:i + CHUNK], y[i:i + CHUNK],
                                   sample_weight=weight[i:i + CHUNK])
    _same(model.estimator_, sequential)  # (GD: its loop keeps no other terms)
    np.testing.assert_allclose(model.score(dX, dy, sample_weight=dw),
                               sequential.score(X, y, sample_weight=weight),
                               rtol=1e-12)
    np.testing.assert_array_equal(model.predict(dX).compute(), sequential.predict(X))


def test_tol_stops_the_passes(client):
    X, y = _stream()
    dX, dy = _dask(X, y)
    # No pass improves on the best by tol * n_samples: stop after n_iter_no_change.
    model = ParameterMixing(GARegressor(eta=0.01), max_iter=10, tol=1e3,
                            n_iter_no_change=2).fit(dX, dy)
    assert model.n_iter_ == 3 and model.loss_curve_.shape == (3,)
    assert model.estimator_.t_ == 3 * len(X)
    with pytest.warns(ConvergenceWarning, match="Maximum number of passes"):
        ParameterMixing(GARegressor(eta=0.01), max_iter=2).fit(dX, dy)


def test_bad_input_leaves_the_model_as_it_was(client):
    X, y = _stream()
    dX, dy = _dask(X, y)
    model = ParameterMixing(GARegressor(eta=0.01), max_iter=2, tol=None).fit(dX, dy)
    fitted = pickle.dumps(model.estimator_)
    with pytest.raises(ValueError, match="eta to be a number"):
        model.set_params(estimator=GARegressor()).fit(dX, dy)
    with pytest.raises(ValueError, match="early_stopping=False"):
        model.set_params(estimator=GARegressor(eta=0.1, early_stopping=True)).fit(
            dX, dy)
    with pytest.raises(TypeError, match="CV estimator"):
        model.set_params(estimator=GARegressorCV()).fit(dX, dy)
    with pytest.raises(ValueError, match="diverged"):
        model.set_params(estimator=GARegressor(eta=10.0)).fit(dX, dy * 1e3)
    with pytest.raises(ValueError, match="rows"):
        model.set_params(estimator=GARegressor(eta=0.01)).fit(dX, dy[:100])
    assert pickle.dumps(model.estimator_) == fitted
    assert model.n_iter_ == 2


def test_sparse_target_survives_the_mixing(client):
    # HKW §V: y = tanh(u . x), u with 5 weights of +-1 among 200, x uniform on
    # {-1, 1}^200. EG± (U = ||u||_1) learns it with far less loss than GD; the
    # mix of 4 learners keeps that, on-line and on fresh rows. (Each at its
    # best rate of a grid in factors of 2 on one partition.)
    rng = np.random.default_rng(5)
    n, m = 200, 6000
    u = np.zeros(n)
    u[rng.choice(n, 5, replace=False)] = rng.choice([-1.0, 1.0], 5)
    X = rng.choice([-1.0, 1.0], size=(m + 2000, n))
    y = np.tanh(X @ u)
    dX, dy = _dask(X[:m], y[:m])
    losses = {}
    for name, params in {"gd": dict(eta=0.005),
                         "eg_pm": dict(psi="eg_pm", U=5.0, eta=0.05)}.items():
        model = ParameterMixing(GARegressor(phi="tanh", fit_intercept=False,
                                            **params), max_iter=3, tol=None,
                                n_learners=4).fit(dX, dy)
        held = model.estimator_.matching_activations(X[m:], "tanh")[:, 0]
        losses[name] = model.cumulative_loss_, np.mean(
            matching_loss(y[m:], activation=held, phi="tanh"))
    assert losses["eg_pm"][0] < losses["gd"][0] / 2
    assert losses["eg_pm"][1] < losses["gd"][1] / 2


def test_a_share_learned_in_runs_is_the_same(client):
    # A share whose partitions lie on several workers is learned run by run,
    # the model pickled from one worker to the next: the same terms, bit for bit.
    from sklearn_ga.dask._mixing import Run, learn

    X, y = _stream(m=2000)
    blocks = [(X[i:i + CHUNK], y[i:i + CHUNK], None) for i in range(0, 2000, CHUNK)]
    estimator = GARegressor(psi="eg_pm", U=3.0, eta=0.05, average=True)
    run = Run(estimator)
    whole = learn(run, blocks, 1.0, None, "parameters")
    model = pickle.loads(pickle.dumps(learn(run, blocks[:1], 1.0, None,
                                            "parameters", last=False)))
    model = pickle.loads(pickle.dumps(learn(run, blocks[1:3], 1.0, None,
                                            "parameters", model, last=False)))
    parts = learn(run, blocks[3:], 1.0, None, "parameters", model)
    for name in ("point", "intercept", "progress"):
        assert np.array_equal(whole[name], parts[name])
    for a, b in zip(whole["averages"], parts["averages"], strict=True):
        assert np.array_equal(a, b)
    assert whole["rows"] == parts["rows"] == 2000


def test_in_memory_data_are_one_partition_a_worker(client):
    X, y = _stream(m=2000)
    estimator = GARegressor(psi="eg_pm", U=3.0, eta=0.05)
    ours = ParameterMixing(estimator, max_iter=2, tol=None).fit(X, y)
    chunked = ParameterMixing(estimator, max_iter=2, tol=None).fit(
        da.from_array(X, chunks=(1000, -1)), da.from_array(y, chunks=1000))
    _same(ours.estimator_, chunked.estimator_)
    assert ours.n_learners_ == 2 and ours.score(X, y) > 0.9


def test_an_auto_scale_is_chosen_once_for_every_learner(client):
    # U="auto": the learners share the U that the estimator chooses from its
    # first rows (each choosing its own would mix parameters of other scales).
    X, y = _stream(seed=3)
    y = 4.0 * y
    mixed = ParameterMixing(GARegressor(psi="eg_pm", eta=0.01), max_iter=2,
                            tol=None).fit(*_dask(X, y))
    # (The first partition, of CHUNK rows, holds fewer than the 1000 it reads.)
    chosen = GARegressor(psi="eg_pm", eta=0.01).partial_fit(X[:CHUNK], y[:CHUNK]).U_
    assert mixed.estimator_.U == chosen != 1.0
    assert np.sum(np.abs(mixed.estimator_.coef_)) < chosen


def test_a_tree_of_mixing_tasks_sums_as_one_mix(client):
    # Twelve learners summed by one mixing task (a fan-in of 16), or by trees
    # of pairs and of fours: the groups of a power of two are nodes of the
    # binary tree of one mix, so the model is the same, bit for bit.
    X, y = _stream(m=6000)
    dX, dy = _dask(X, y)
    estimator = GARegressor(psi="eg_pm", U=3.0, eta=0.05, average=True)
    runs = [ParameterMixing(estimator, max_iter=2, tol=None, n_learners=12,
                            mix_fan_in=fan_in).fit(dX, dy) for fan_in in (16, 2, 4)]
    for run in runs[1:]:
        _same(run.estimator_, runs[0].estimator_)
        assert np.array_equal(run.loss_curve_, runs[0].loss_curve_)
    with pytest.raises(ValueError, match="power of two"):
        ParameterMixing(estimator, mix_fan_in=12).fit(dX, dy)


def _held(X, y, fraction):
    """Each CHUNK's rows split as ParameterMixing's early stopping splits a
    partition: its last floor(fraction * CHUNK) held out."""
    cut = CHUNK - int(fraction * CHUNK)
    rows = np.arange(len(X)) % CHUNK < cut
    return (X[rows], y[rows]), (X[~rows], y[~rows])


def test_early_stopping_on_the_last_rows_of_each_partition(client):
    X, y = _stream(m=4000)
    dX, dy = _dask(X, y)
    (X_train, y_train), (X_held, y_held) = _held(X, y, 0.2)
    # No mix improves the held-out R^2 by tol = 1: the passes stop after
    # n_iter_no_change mixes without improvement, as fit's epochs stop.
    model = ParameterMixing(GARegressor(psi="eg_pm", U=3.0, eta=0.05), max_iter=10,
                            tol=1.0, n_iter_no_change=2, early_stopping=True,
                            validation_fraction=0.2).fit(dX, dy)
    assert model.n_iter_ == 3 and model.validation_scores_.shape == (3,)
    assert model.estimator_.t_ == 3 * len(y_train)
    # Its model is that of the same passes over the training rows alone, and
    # each score is the mix's on the held-out rows.
    plain = ParameterMixing(GARegressor(psi="eg_pm", U=3.0, eta=0.05), max_iter=3,
                            tol=None).fit(da.from_array(X_train, chunks=(400, -1)),
                                          da.from_array(y_train, chunks=400))
    _same(model.estimator_, plain.estimator_)
    np.testing.assert_allclose(model.validation_scores_[-1],
                               plain.estimator_.score(X_held, y_held), rtol=1e-12)
    # Until max_iter: a score for every mix, and the warning of fit.
    with pytest.warns(ConvergenceWarning, match="validation score"):
        longer = ParameterMixing(GARegressor(eta=0.01), max_iter=3, tol=-1e9,
                                 early_stopping=True).fit(dX, dy)
    assert longer.n_iter_ == 3 and longer.validation_scores_.shape == (3,)
    assert np.all(np.diff(longer.validation_scores_) > -0.05)
    with pytest.raises(ValueError, match="holds out no row"):
        ParameterMixing(GARegressor(eta=0.01), early_stopping=True,
                        validation_fraction=0.001).fit(dX, dy)


def _mixed_once(dask_scheduler):
    """Whether a pass's mix is done (run on the scheduler)."""
    return any(str(key).startswith("mix_pass") and task.state == "memory"
               for key, task in dask_scheduler.tasks.items())


async def _die():
    """A worker's end, abrupt (run on the worker)."""
    import os

    os._exit(1)


def test_a_worker_lost_during_fit_changes_no_bit():
    # A worker killed while the passes run (its nanny restarts it): Dask runs
    # its tasks again elsewhere, from the graph, and the model is the same.
    import threading
    import time

    X, y = _stream(m=2000)
    dX, dy = _dask(X, y)
    estimator = GARegressor(psi="eg_pm", U=3.0, eta=0.05, average=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster, set_as_default=False) as other:
            def fit(results):
                with other.as_current():
                    results.append(ParameterMixing(
                        estimator, max_iter=10, tol=None, n_learners=2).fit(dX, dy))

            calm = []
            fit(calm)
            killed = []
            thread = threading.Thread(target=fit, args=(killed,))
            thread.start()
            while not other.run_on_scheduler(_mixed_once):
                time.sleep(0.005)
            victim = sorted(other.scheduler_info()["workers"])[0]
            other.run(_die, workers=[victim], wait=False)
            alive = thread.is_alive()
            thread.join()
    assert alive and victim not in cluster.scheduler.workers
    _same(killed[0].estimator_, calm[0].estimator_)
    assert np.array_equal(killed[0].loss_curve_, calm[0].loss_curve_)


def test_a_cluster_gone_is_a_clear_error():
    X, y = _stream(m=1000)
    model = ParameterMixing(GARegressor(eta=0.01), max_iter=1, tol=None)
    cluster = distributed.LocalCluster(n_workers=1, processes=False,
                                       dashboard_address=":0")
    other = distributed.Client(cluster, set_as_default=False)
    other.close()
    cluster.close()
    with other.as_current(), pytest.raises(RuntimeError, match="cluster is gone"):
        model.fit(*_dask(X, y))
    assert not hasattr(model, "estimator_")
