"""GARegressorCV / GAClassifierCV: one lock-step pass equals separate on-line runs."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

from sklearn_ga import (
    PHI,
    GAClassifier,
    GAClassifierCV,
    GARegressor,
    GARegressorCV,
    _grid,
)

ETAS = [0.003, 0.03, 0.3, 3.0]
US = [0.5, 2.0, 8.0]


def sparse_target(m=700, n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 0.0, 1.0], size=(m, n), p=[0.4, 0.2, 0.4])
    return X, np.tanh(1.5 * X[:, 0] - X[:, 3] + 0.1 * rng.normal(size=m))


def assert_results_table(search, etas, Us=(1.0,)):
    """cv_results_ lists the grid (U varying slowest) in its parameter columns, and
    ranks mean_test_loss: 1 for the least (best_index_), ties in grid order."""
    results = search.cv_results_
    grid = [{"eta": float(eta), "U": float(U)} for U in Us for eta in etas]
    assert results["params"] == grid
    assert results["param_eta"].tolist() == [config["eta"] for config in grid]
    assert results["param_U"].tolist() == [config["U"] for config in grid]
    losses = results["mean_test_loss"]
    expected = [1 + sum(other < loss or (other == loss and j < i)
                        for j, other in enumerate(losses))
                for i, loss in enumerate(losses)]
    assert results["rank_test_loss"].tolist() == expected
    assert results["rank_test_loss"][search.best_index_] == 1
    assert losses[search.best_index_] == np.min(losses)


def separate(estimator_class, config, X, y, **fit_params):
    model = estimator_class(**config)
    return model.partial_fit(X, y, **fit_params)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm", "pnorm"])
def test_regressor_grid_equals_separate_runs(psi, sparse):
    X, y = sparse_target()
    Xin = sp.csr_matrix(X) if sparse else X
    search = GARegressorCV(max_iter=1, psi=psi, phi="tanh", etas=ETAS, Us=US,
                           p=3.0).fit(Xin, y)
    results = search.cv_results_
    assert_results_table(search, ETAS, US if psi == "eg_pm" else (1.0,))
    for params, loss in zip(results["params"], results["progressive_loss"],
                            strict=True):
        config = {"psi": psi, "phi": "tanh", "p": 3.0, **params}
        try:
            model = separate(GARegressor, config, Xin, y)
        except ValueError as error:  # a diverging configuration is reported as inf
            assert "diverged" in str(error) and loss == np.inf
            continue
        np.testing.assert_allclose(loss, model.cumulative_loss_, rtol=1e-9)
    best = results["params"][search.best_index_]
    assert results["progressive_loss"][search.best_index_] == np.min(
        results["progressive_loss"])
    assert (search.eta_, search.U_) == (best["eta"], best["U"])
    model = separate(GARegressor, {"psi": psi, "phi": "tanh", "p": 3.0, **best}, Xin, y)
    np.testing.assert_allclose(search.coef_, model.coef_, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(search.intercept_, model.intercept_, rtol=1e-9)
    np.testing.assert_allclose(search.predict(X), model.predict(X), rtol=1e-9)
    assert search.cumulative_loss_ == results["progressive_loss"][search.best_index_]
    assert search.t_ == X.shape[0] and search.n_iter_ == 1


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("task", ["regressor", "classifier"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_threads_give_the_results_of_one_thread(psi, task, sparse, monkeypatch):
    # Dense chunks of 16 rows and threads meeting after every 3 chunks: the shares
    # of the regressor's threads change after a configuration diverges (eta = 3
    # overshoots on rows of 30 +-1).
    monkeypatch.setattr(_grid, "CHUNK_BYTES", 16 * 8 * 30)
    monkeypatch.setattr(_grid, "WINDOW_CHUNKS", 3)
    X, y = sparse_target()
    Xin = sp.csr_matrix(X) if sparse else X
    if task == "regressor":
        estimator, target = GARegressorCV(max_iter=1, psi=psi), y
    else:  # three classes, coordinate-wise (learned output by output on CSR rows)
        estimator = GAClassifierCV(max_iter=1, psi=psi)
        target = np.digitize(y, [-0.3, 0.3])
    estimator.set_params(etas=ETAS, Us=US[:2])
    one = clone(estimator).set_params(n_jobs=None).fit(Xin, target)
    assert np.isfinite(one.progressive_loss_).sum() >= 3
    assert np.isinf(one.progressive_loss_).any() == (task == "regressor")
    for n_jobs in (2, -1):
        many = clone(estimator).set_params(n_jobs=n_jobs).fit(Xin, target)
        for name in ("param_eta", "param_U", "progressive_loss", "mean_test_loss",
                     "rank_test_loss"):
            np.testing.assert_array_equal(many.cv_results_[name],
                                          one.cv_results_[name])
        finite = np.isfinite(one.progressive_loss_)
        np.testing.assert_array_equal(many.thetas_[finite], one.thetas_[finite])
        np.testing.assert_array_equal(many.coef_, one.coef_)
        np.testing.assert_array_equal(many.intercept_, one.intercept_)
    folds = clone(estimator).set_params(cv=3)
    np.testing.assert_array_equal(
        clone(folds).set_params(n_jobs=2).fit(Xin, target).cv_results_[
            "mean_test_loss"], folds.fit(Xin, target).cv_results_["mean_test_loss"])


@pytest.fixture
def block_calls(monkeypatch):
    """The configurations of each call of the blocks' loop (block_run)."""
    calls = []

    def spy(*args, **kwargs):
        calls.append(np.array(args[7]))
        return block_run(*args, **kwargs)

    block_run = _grid.block_run
    monkeypatch.setattr(_grid, "block_run", spy)
    return calls


@pytest.mark.parametrize("task, phi", [("regressor", "identity"), ("regressor", "tanh"),
                                       ("regressor", "arctan"),
                                       ("classifier", "logistic"),
                                       ("classifier", "softmax")])
def test_gradient_descent_in_blocks_equals_the_on_line_loop(task, phi, block_calls):
    # Rows learned in blocks (their activations corrected by the Gram matrix) give
    # the models of the row-by-row loop up to rounding; the grid of a threshold phi
    # keeps the loop (its exact ties a = 0 would move).
    X, y = sparse_target(m=300, n=40)
    weights = np.random.default_rng(3).uniform(0.0, 2.0, size=y.shape[0])
    if task == "regressor":
        estimator, target, single = GARegressorCV(max_iter=1, phi=phi), y, GARegressor
        target = y if phi == "identity" else 0.9 * np.tanh(y)
    else:  # three classes: three outputs
        estimator = GAClassifierCV(max_iter=1, phi=phi)
        target = np.digitize(y, [-0.3, 0.3])
        single = GAClassifier
    etas = [1e-4, 1e-3, 0.01, 0.03]
    search = estimator.set_params(etas=etas).fit(X, target, sample_weight=weights)
    assert len(block_calls) == 1 and list(block_calls[0]) == [0, 1, 2, 3]
    for g, eta in enumerate(etas):
        model = single(phi=phi, eta=eta).partial_fit(
            X, target, sample_weight=weights,
            **({} if task == "regressor" else {"classes": [0, 1, 2]}))
        np.testing.assert_allclose(search.progressive_loss_[g], model.cumulative_loss_,
                                   rtol=1e-12)
        np.testing.assert_allclose(search.thetas_[g], model.theta_, rtol=1e-12,
                                   atol=1e-15 * np.abs(model.theta_).max())
        np.testing.assert_allclose(search.intercepts_[g], model.intercept_,
                                   rtol=1e-12, atol=1e-15)
    if task == "regressor":
        # A next batch continues every configuration where the blocks left it.
        search.partial_fit(X[:50], target[:50])
        model.partial_fit(X[:50], target[:50])
        np.testing.assert_allclose(search.thetas_[-1], model.theta_, rtol=1e-12,
                                   atol=1e-15 * np.abs(model.theta_).max())
        assert len(block_calls) == 2


def test_a_threshold_phi_and_few_weight_vectors_keep_the_loop(block_calls):
    X, y = sparse_target(m=100)
    GAClassifierCV(max_iter=1, phi="sign", etas=ETAS).fit(X, y > 0)
    # 3 weight vectors: fewer than BLOCK_COLUMNS
    GARegressorCV(max_iter=1, etas=ETAS[:3]).fit(X, y)
    GARegressorCV(max_iter=1, etas=ETAS).fit(sp.csr_matrix(X), y)
    assert block_calls == []
    GARegressorCV(max_iter=1, etas=ETAS).fit(X, y)
    assert len(block_calls) == 1


def test_non_finite_inputs_in_blocks_are_an_input_error(block_calls):
    X, y = sparse_target(m=100)
    X[60, 3] = np.inf
    search = GARegressorCV(max_iter=1, etas=ETAS).partial_fit(X[:50], y[:50])
    before = search.thetas_.copy()
    with pytest.raises(ValueError, match="Input X contains infinity"):
        search.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(search.thetas_, before)
    assert len(block_calls) == 2


def test_eg_pm_search_finds_a_scale_that_reaches_the_target():
    X, y = sparse_target()  # the target's l1 norm is 2.5
    search = GARegressorCV(max_iter=1, psi="eg_pm", phi="tanh", etas=ETAS,
                           Us=US).fit(X, y)
    assert search.U_ >= 2.0
    assert set(np.argsort(-np.abs(search.coef_))[:2]) == {0, 3}


@pytest.mark.parametrize("phi", ["logistic", "softmax", "sign"])
def test_classifier_grid_equals_separate_runs(phi):
    X, y = sparse_target(seed=1)
    labels = np.digitize(y, [-0.3, 0.3])  # three classes
    search = GAClassifierCV(max_iter=1, psi="eg_pm", phi=phi, etas=ETAS,
                            Us=US).fit(X, labels)
    assert_results_table(search, ETAS, US)
    for params, loss in zip(search.cv_results_["params"],
                            search.cv_results_["progressive_loss"], strict=True):
        model = separate(GAClassifier, {"psi": "eg_pm", "phi": phi, **params}, X,
                         labels, classes=[0, 1, 2])
        np.testing.assert_allclose(loss, model.cumulative_loss_, rtol=1e-9)
    best = search.cv_results_["params"][search.best_index_]
    model = separate(GAClassifier, {"psi": "eg_pm", "phi": phi, **best}, X, labels,
                     classes=[0, 1, 2])
    np.testing.assert_allclose(search.coef_, model.coef_, rtol=1e-9, atol=1e-14)
    np.testing.assert_array_equal(search.predict(X), model.predict(X))


def test_partial_fit_continues_the_whole_grid():
    # Stable configurations only: batch boundaries may round the weights' normalizer
    # differently by an ulp, which a near-divergent rate (eta U^2 >> 1) amplifies.
    X, y = sparse_target()
    grid = {"etas": ETAS[:3], "Us": US[:2]}
    whole = GARegressorCV(max_iter=1, psi="eg_pm", phi="tanh", **grid).fit(X, y)
    stream = GARegressorCV(max_iter=1, psi="eg_pm", phi="tanh", **grid)
    for rows in np.array_split(np.arange(X.shape[0]), 7):
        stream.partial_fit(X[rows], y[rows])
    np.testing.assert_allclose(stream.cv_results_["progressive_loss"],
                               whole.cv_results_["progressive_loss"], rtol=1e-12)
    np.testing.assert_allclose(stream.coef_, whole.coef_, rtol=1e-12)
    assert stream.t_ == X.shape[0]


def test_every_configuration_diverging_is_an_error():
    X, y = sparse_target()
    search = GARegressorCV(max_iter=1, etas=[1e3, 1e4])
    with pytest.raises(ValueError, match="every configuration diverged"):
        search.fit(100 * X, y)
    assert not hasattr(search, "coef_")


def test_kfold_never_selects_a_configuration_whose_final_pass_diverged():
    # The returned model is the one-pass model on all the data: the folds may not
    # see the rows on which a configuration diverges (here the last ones, never in
    # a training fold of TimeSeriesSplit), and it must not be returned.
    from sklearn.model_selection import TimeSeriesSplit

    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 5)) / np.sqrt(5)
    X[-100:] *= 1000.0
    y = X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0])
    cv = TimeSeriesSplit(n_splits=2, test_size=100)
    search = GARegressorCV(max_iter=1, etas=[1e-6, 0.1], cv=cv).fit(X, y)
    assert search.eta_ == 1e-6 and np.isfinite(search.coef_).all()
    assert np.isinf(search.cv_results_["mean_test_loss"][1])
    assert_results_table(search, [1e-6, 0.1])
    with pytest.raises(ValueError, match="every configuration diverged"):
        GARegressorCV(max_iter=1, etas=[0.1, 1.0], cv=cv).fit(X, y)


def test_kfold_selects_the_least_held_out_loss():
    X, y = sparse_target(m=400)
    folds = KFold(3)
    search = GARegressorCV(max_iter=1, psi="eg_pm", phi="tanh", etas=ETAS[:3], Us=US,
                           cv=folds).fit(X, y)
    expected = []
    for params in search.cv_results_["params"]:
        losses = []
        for train, test in folds.split(X):
            model = GARegressor(psi="eg_pm", phi="tanh", **params)
            model.partial_fit(X[train], y[train])
            losses.append(np.mean(PHI["tanh"].loss(y[test], model._activations(
                X[test])[:, 0])))
        expected.append(np.mean(losses))
    np.testing.assert_allclose(search.cv_results_["mean_test_loss"], expected,
                               rtol=1e-9)
    assert search.best_index_ == int(np.argmin(expected))
    assert_results_table(search, ETAS[:3], US)
    # k-fold selection needs the whole data set: no partial_fit (hasattr is False,
    # as scikit-learn's checks and meta-estimators expect).
    assert not hasattr(search, "partial_fit")
    assert hasattr(GARegressorCV(max_iter=1), "partial_fit")


def test_kfold_of_a_classifier_is_stratified():
    # Sorted labels: unstratified folds would each hold out a class never learned.
    X, y = sparse_target(m=300, seed=2)
    labels = np.digitize(y, [-0.3, 0.3])
    order = np.argsort(labels, kind="stable")
    X, labels = X[order], labels[order]
    grid = {"phi": "softmax", "etas": ETAS[:3]}
    by_int = GAClassifierCV(max_iter=1, cv=3, **grid).fit(X, labels)
    by_splitter = GAClassifierCV(max_iter=1, cv=StratifiedKFold(3),
                                 **grid).fit(X, labels)
    folds = list(StratifiedKFold(3).split(X, labels))
    by_folds = GAClassifierCV(max_iter=1, cv=folds, **grid).fit(X, labels)
    for search in (by_int, by_splitter):
        np.testing.assert_allclose(search.cv_results_["mean_test_loss"],
                                   by_folds.cv_results_["mean_test_loss"], rtol=1e-12)
    unstratified = GAClassifierCV(max_iter=1, cv=KFold(3), **grid).fit(X, labels)
    assert not np.allclose(unstratified.cv_results_["mean_test_loss"],
                           by_folds.cv_results_["mean_test_loss"])


def test_kfold_passes_groups_to_the_splitter():
    X, y = sparse_target(m=300)
    groups = np.repeat(np.arange(6), 50)
    grid = {"psi": "eg_pm", "phi": "tanh", "etas": ETAS[:3], "Us": US[:2]}
    by_groups = GARegressorCV(max_iter=1, cv=GroupKFold(3), **grid).fit(
        X, y, groups=groups)
    folds = list(GroupKFold(3).split(X, y, groups))
    by_folds = GARegressorCV(max_iter=1, cv=folds, **grid).fit(X, y)
    np.testing.assert_allclose(by_groups.cv_results_["mean_test_loss"],
                               by_folds.cv_results_["mean_test_loss"], rtol=1e-12)
    with pytest.raises(ValueError, match="groups"):
        GARegressorCV(max_iter=1, cv=GroupKFold(3), **grid).fit(X, y)


@pytest.mark.parametrize("cv", [None, 3])
def test_zero_weight_samples_do_not_change_the_selection(cv):
    # Weight 0 means absent: changing those targets changes no loss of the grid.
    X, y = sparse_target(m=300)
    weights = np.ones(y.shape[0])
    weights[::10] = 0.0
    changed = y.copy()
    changed[::10] = -changed[::10]
    grid = {"psi": "eg_pm", "phi": "tanh", "etas": ETAS[:3], "Us": US[:2], "cv": cv}
    a = GARegressorCV(max_iter=1, **grid).fit(X, y, sample_weight=weights)
    b = GARegressorCV(max_iter=1, **grid).fit(X, changed, sample_weight=weights)
    np.testing.assert_allclose(a.cv_results_["mean_test_loss"],
                               b.cv_results_["mean_test_loss"], rtol=1e-12)
    if cv is not None:
        # The held-out loss is the weighted mean over each fold's test rows.
        kept = weights > 0
        c = GARegressorCV(max_iter=1, **{**grid, "cv": [
            (train, test[kept[test]]) for train, test in KFold(3).split(X)]})
        c.fit(X, y, sample_weight=weights)
        np.testing.assert_allclose(a.cv_results_["mean_test_loss"],
                                   c.cv_results_["mean_test_loss"], rtol=1e-12)


def test_invalid_grids_are_rejected():
    X, y = sparse_target(m=50)
    with pytest.raises(ValueError, match="etas must hold positive"):
        GARegressorCV(max_iter=1, etas=[0.1, -1.0]).fit(X, y)
    with pytest.raises(ValueError, match="Us must hold positive"):
        GARegressorCV(max_iter=1, psi="eg_pm", Us=[]).fit(X, y)
    with pytest.raises(ValueError, match="classes must be passed"):
        GAClassifierCV(max_iter=1).partial_fit(X, y > 0)


def test_kfold_needs_held_out_weight():
    X, y = sparse_target(m=60)
    weights = np.ones(60)
    weights[:20] = 0.0
    folds = [(np.arange(20, 60), np.arange(20))]  # only zero-weight rows held out
    search = GARegressorCV(max_iter=1, etas=ETAS[:2], cv=folds)
    with pytest.raises(ValueError, match="zero total sample weight"):
        search.fit(X, y, sample_weight=weights)
    assert not hasattr(search, "coef_")


def stream_batches(m, parts=5):
    return np.array_split(np.arange(m), parts)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("psi", ["softmax", "eg_pm", "pnorm"])
def test_partial_fit_continues_every_configuration_as_its_own_model(psi, sparse):
    # Each configuration keeps its compiled loop between calls, terms and
    # normalizers included, as GARegressor does: bit for bit the same stream.
    X, y = sparse_target()
    form = sp.csr_matrix if sparse else np.asarray
    grid = {"psi": psi, "phi": "tanh", "p": 3.0}
    search = GARegressorCV(max_iter=1, etas=ETAS[:3], Us=US[:2], **grid)
    models = [GARegressor(**grid, **params) for params in
              GARegressorCV(max_iter=1, etas=ETAS[:3], Us=US[:2], **grid).fit(
                  X[:5], y[:5]).cv_results_["params"]]
    for rows in stream_batches(X.shape[0]):
        search.partial_fit(form(X[rows]), y[rows])
        for model in models:
            model.partial_fit(form(X[rows]), y[rows])
    for g, model in enumerate(models):
        np.testing.assert_array_equal(search.thetas_[g], model.theta_)
        assert search.progressive_loss_[g] == model.cumulative_loss_
    best = models[search.best_index_]
    np.testing.assert_array_equal(search.coef_, best.coef_)
    np.testing.assert_array_equal(search.predict(form(X)), best.predict(form(X)))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("failure", ["nan", "all-diverge"])
def test_a_failed_partial_fit_of_the_grid_changes_nothing(failure, sparse):
    # The failing batch runs trials on every configuration's loop before it fails:
    # each loop is put back, so that the search then learns as a twin that never
    # saw the batch.
    X, y = sparse_target()
    form = sp.csr_matrix if sparse else np.asarray
    # (GD's steps overshoot once eta ||x||^2 > 2: every rate diverges on 1000 x.)
    psi, phi = ("eg_pm", "tanh") if failure == "nan" else ("identity", "identity")
    grid = {"psi": psi, "phi": phi, "etas": ETAS[:3], "Us": US[:2]}
    search = GARegressorCV(max_iter=1, **grid).partial_fit(form(X[:300]), y[:300])
    twin = GARegressorCV(max_iter=1, **grid).partial_fit(form(X[:300]), y[:300])
    before = {name: np.array(getattr(search, name)) for name in
              ("thetas_", "intercepts_", "progressive_loss_", "coef_", "theta_")}
    if failure == "nan":
        bad_X = X[300:400].copy()
        bad_X[-1, 0] = np.nan
    else:
        bad_X = 1000.0 * X[300:400]
    with pytest.raises(ValueError, match="NaN" if failure == "nan" else "diverged"):
        search.partial_fit(form(bad_X), y[300:400])
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(search, name), value)
    for rows in (np.arange(400, 550), np.arange(550, 700)):
        search.partial_fit(form(X[rows]), y[rows])
        twin.partial_fit(form(X[rows]), y[rows])
    np.testing.assert_array_equal(search.thetas_, twin.thetas_)
    np.testing.assert_array_equal(search.progressive_loss_, twin.progressive_loss_)
    np.testing.assert_array_equal(search.coef_, twin.coef_)


@pytest.mark.parametrize("duplicate", [copy.deepcopy,
                                       lambda m: pickle.loads(pickle.dumps(m))])
def test_copies_of_a_search_continue_exactly_and_apart(duplicate):
    X, y = sparse_target()
    X = sp.csr_matrix(X)
    search = GAClassifierCV(max_iter=1, psi="eg_pm", phi="softmax", etas=ETAS[:3],
                            Us=US[:2])
    labels = np.digitize(y, [-0.3, 0.3])
    search.partial_fit(X[:300], labels[:300], classes=[0, 1, 2])
    other = duplicate(search)
    assert other.thetas_ is not search.thetas_
    other.partial_fit(X[300:], labels[300:])
    assert not np.array_equal(other.thetas_, search.thetas_)
    search.partial_fit(X[300:], labels[300:])
    np.testing.assert_array_equal(other.thetas_, search.thetas_)
    np.testing.assert_array_equal(other.predict_proba(X), search.predict_proba(X))
    assert other.best_index_ == search.best_index_


def test_the_grid_parameters_are_read_only_and_can_be_replaced():
    X, y = sparse_target()
    grid = {"psi": "eg_pm", "phi": "tanh", "etas": ETAS[:3], "Us": US[:2]}
    search = GARegressorCV(max_iter=1, **grid).partial_fit(X[:300], y[:300])
    for name in ("thetas_", "intercepts_", "theta_", "intercept_"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(search, name).flat[0] = 1.0
    # Parameters assigned by hand are learned from (loops are built on them), as a
    # search whose first batch set them would.
    start = GARegressorCV(max_iter=1, **grid).partial_fit(X[:1], y[:1])
    search.thetas_ = start.thetas_.copy()
    search.intercepts_ = start.intercepts_.copy()
    search.progressive_loss_ = start.progressive_loss_.copy()
    search.partial_fit(X[300:], y[300:])
    start.partial_fit(X[300:], y[300:])
    np.testing.assert_allclose(search.thetas_, start.thetas_, rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(search.coef_, start.coef_, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("task", ["regressor", "classifier"])
@pytest.mark.parametrize("psi", ["identity", "eg_pm"])
def test_fit_finishes_the_selected_configuration_as_fit_does(psi, task):
    # The model predicted with is the plain estimator's fit at the selected eta, U
    # and intercept rate (the same code: bit for bit); the grid's one pass stays.
    X, y = sparse_target()
    if task == "regressor":
        search_class, plain_class, target = GARegressorCV, GARegressor, y
    else:
        search_class, plain_class, target = GAClassifierCV, GAClassifier, y > 0
    search = search_class(psi=psi, etas=ETAS[:3], random_state=0).fit(X, target)
    one_pass = search_class(psi=psi, etas=ETAS[:3], max_iter=1).fit(X, target)
    plain = plain_class(psi=psi, eta=search.eta_, U=search.U_,
                        intercept_eta=search.intercept_eta_,
                        random_state=0).fit(X, target)
    np.testing.assert_array_equal(search.coef_, plain.coef_)
    np.testing.assert_array_equal(search.intercept_, plain.intercept_)
    np.testing.assert_array_equal(search.predict(X), plain.predict(X))
    assert search.n_iter_ == 1 + plain.n_iter_ > 2 and one_pass.n_iter_ == 1
    np.testing.assert_array_equal(search.thetas_, one_pass.thetas_)
    best = search.cv_results_["params"][search.best_index_]
    classes = {} if task == "regressor" else {"classes": [False, True]}
    np.testing.assert_array_equal(one_pass.coef_, separate(
        plain_class, {"psi": psi, **best}, X, target, **classes).coef_)
    # A copy predicts as the finished model; partial_fit continues the grid.
    copy = pickle.loads(pickle.dumps(search))
    np.testing.assert_array_equal(copy.predict(X), search.predict(X))
    assert not copy.coef_.flags.writeable
    for model in (copy, one_pass):
        model.partial_fit(X[:50], target[:50])
    np.testing.assert_array_equal(copy.coef_, one_pass.coef_)
    np.testing.assert_array_equal(copy.thetas_, one_pass.thetas_)


def test_every_fitted_array_of_the_grid_is_read_only():
    X, y = sparse_target()
    search = GARegressorCV(max_iter=1, psi="eg_pm", etas=ETAS[:2]).fit(X, y)
    arrays = [search.progressive_loss_, search.thetas_, search.intercepts_,
              search.coef_, search.intercept_,
              *(value for value in search.cv_results_.values()
                if isinstance(value, np.ndarray))]
    for array in arrays:
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 0.0
    before = search.progressive_loss_.copy()
    search.partial_fit(X[:10], y[:10])  # (a new array, continued from the old)
    assert np.all(search.progressive_loss_ >= before)


def test_the_default_us_surround_the_automatic_u():
    X, y = sparse_target()
    search = GARegressorCV(max_iter=1, psi="eg_pm").fit(X, y)
    U = GARegressor(psi="eg_pm", eta=0.1).partial_fit(X, y).U_
    np.testing.assert_allclose(np.unique(search.cv_results_["param_U"]),
                               [U / 4, U, 4 * U], rtol=1e-12)
    # An int etas is in units of U^-2 for EG± (HKW Theorem 2's rate).
    units = [config["eta"] * config["U"] ** 2
             for config in search.cv_results_["params"]]
    np.testing.assert_allclose(units, np.tile(np.logspace(-4, 0, 9), 3), rtol=1e-12)


def test_the_sphere_searches_its_automatic_radius_or_the_given_ones():
    # The sphere's weights keep the norm U: the grid takes the radius U="auto"
    # chooses (at U = 1 it could not fit diabetes-like targets at all), or Us.
    X, y = sparse_target()
    search = GARegressorCV(max_iter=1, psi="sphere").fit(X, y)
    U = GARegressor(psi="sphere", eta=0.1).partial_fit(X, y).U_
    assert abs(U - 1.0) > 0.1  # (not the 1 it took before)
    np.testing.assert_array_equal(np.unique(search.cv_results_["param_U"]), [U])
    np.testing.assert_allclose(np.linalg.norm(search.coef_), U, rtol=1e-12)
    given = GARegressorCV(max_iter=1, psi="sphere", Us=[0.5, 2.0]).fit(X, y)
    np.testing.assert_array_equal(np.unique(given.cv_results_["param_U"]), [0.5, 2.0])


def test_eg_pm_learns_an_uncentred_target_at_a_hand_set_u():
    # The diabetes progression (mean 152) at the U of a ridge fit: the intercept
    # learns at the grid's rate for gradient descent, not at EG±'s eta.
    from sklearn.datasets import load_diabetes
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    order = np.random.default_rng(0).permutation(y.shape[0])
    search = GARegressorCV(psi="eg_pm", Us=[144.0], random_state=0).fit(
        X[order], y[order])
    assert search.score(X, y) > 0.45
