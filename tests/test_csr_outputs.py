"""The CSR paths of several outputs learn exactly what the dense path and single-
output models learn: outputs learned one after another (whole-row psi), and outputs
held innermost (theta transposed for psi = identity with many entries per column),
including their failures, their epochs and reads from other threads.
"""

import threading

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn_ga._kernel import TrialLoop
from test_sparse_dense import (
    _assert_same_model,
    _eta,
    _wide_csr,
)

from sklearn_ga import PHI, PSI, GAClassifier, GARegressor


@pytest.mark.parametrize("psi", PSI)
def test_csr_outputs_learned_one_after_another_equal_single_output_models(psi):
    # With a coordinate-wise phi the outputs do not interact, and a CSR run learns
    # them one after another (as SGDClassifier's one-vs-rest does): each must take
    # exactly the steps of a model of that output alone (its recomputes, its lazy
    # theta written back), and those of the dense path. 40 columns, so that the
    # rows are recomputed in each pass (every 32 n touched coordinates).
    X = _wide_csr(600, 40, 8, seed=7)
    rng = np.random.default_rng(8)
    Y = np.tanh(X[:, :3].toarray() @ rng.normal(size=(3, 3)) + rng.normal(size=3))
    weights = rng.uniform(0.5, 2.0, size=X.shape[0])
    params = dict(psi=psi, phi="tanh", eta=_eta(psi, "tanh") * 2, U=3.0, p=3.5,
                  max_iter=3, tol=None, random_state=0)
    model = GARegressor(**params).fit(X, Y, sample_weight=weights)
    for j in range(3):
        alone = GARegressor(**params).fit(X, Y[:, j], sample_weight=weights)
        np.testing.assert_array_equal(model.theta_[j], alone.theta_[0])
        np.testing.assert_array_equal(model.intercept_[j], alone.intercept_[0])
    _assert_same_model(GARegressor(**params).fit(X.toarray(), Y, sample_weight=weights),
                       model)
    assert np.abs(model.theta_ - model.theta_[:, :1]).max() > 0.01  # it learned
    labels = np.digitize(Y[:, 0], [-0.5, 0.0, 0.5])
    params = dict(psi=psi, eta=_eta(psi, "logistic"), U=3.0, p=3.5)
    classes = np.arange(4)
    classifier = GAClassifier(**params).partial_fit(X, labels, classes=classes)
    dense = GAClassifier(**params).partial_fit(X.toarray(), labels, classes=classes)
    _assert_same_model(dense, classifier)


@pytest.mark.parametrize("p", [24.5, 25.0])
def test_pnorm_weights_follow_theta_that_outgrows_its_shift_on_csr(p):
    # pnorm measures theta in units of the shift (max |theta|); targets that grow
    # 400-fold drive theta past it, by the factor e^(30 / p) that ends a term's range,
    # again and again. The CSR terms must still give psi(theta_) and the steps of the
    # dense path, which computes every term afresh at each trial. Two outputs, each
    # learned as a state of its own.
    X = _wide_csr(3000, 200, 10, seed=11)
    rng = np.random.default_rng(12)
    growth = np.exp(np.arange(X.shape[0]) / 500)[:, None]
    Y = growth * (X[:, :10].toarray() @ rng.normal(size=(10, 2)))
    params = dict(psi="pnorm", eta=0.05, p=p)
    early = GARegressor(**params).partial_fit(X[:300], Y[:300])
    model = GARegressor(**params).partial_fit(X, Y)
    assert np.all(np.abs(model.theta_).max(axis=1)
                  > 50 * np.abs(early.theta_).max(axis=1))
    expected = PSI["pnorm"].weights(model.theta_, 1.0, p)
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-12,
                               atol=1e-14 * np.abs(expected).max())
    _assert_same_model(GARegressor(**params).partial_fit(X.toarray(), Y), model)


def test_pnorm_recomputes_a_wide_sparse_row_block_by_block():
    # A row of over 4096 parameters is recomputed in blocks of 512, those all 0
    # without a power (5000 leaves a short last block): at the first trial, and
    # after every 32 n touched coordinates (here during epoch 67, when over half
    # the columns have never occurred). coef_ must stay psi(theta_).
    X = _wide_csr(400, 5000, 6, seed=13)
    y = np.asarray(X[:, ::50].sum(axis=1)).ravel()
    p = 2 * np.log(X.shape[1])
    model = GARegressor(psi="pnorm", eta=0.03, p=p, max_iter=70, tol=None,
                        random_state=0, average=False)
    model.fit(X, y)
    assert 1000 < np.count_nonzero(model.theta_) < 2000
    expected = PSI["pnorm"].weights(model.theta_, 1.0, p)[0]
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-12,
                               atol=1e-14 * np.abs(expected).max())


@pytest.mark.usefixtures("without_runaway_check")
def test_csr_outputs_learned_apart_report_the_first_trial_that_diverged():
    # Output 1's large targets overflow its activation trials before output 0's do:
    # the error names the first trial that failed in any output, and a failed
    # partial_fit leaves the model as it was.
    X = sp.csr_matrix(np.ones((60, 4)))
    Y = np.c_[np.ones(60), np.full(60, 1e250)]
    params = dict(eta=1e20, fit_intercept=False)

    def failing_trial(y):
        with pytest.raises(ValueError, match=r"diverged at trial (\d+) ") as error:
            GARegressor(**params).partial_fit(X, y)
        return int(error.value.args[0].split("diverged at trial ")[1].split()[0])

    first, second = failing_trial(Y[:, 0]), failing_trial(Y[:, 1])
    assert second < first
    assert failing_trial(Y) == second
    model = GARegressor(**params).partial_fit(X[:2], Y[:2] * 1e-250)
    before = model.theta_.copy(), model.intercept_.copy(), model.cumulative_loss_
    with pytest.raises(ValueError, match="diverged"):
        model.partial_fit(X, Y)
    np.testing.assert_array_equal(model.theta_, before[0])
    assert model.cumulative_loss_ == before[2]


def _multi_output_models(**params):
    """GAClassifiers whose outputs a softmax phi couples or a logistic phi leaves
    apart, and a softmax GARegressor, with their targets for inputs of m rows."""
    params = dict(eta=0.3, random_state=0, **params)
    models = (GAClassifier(phi="softmax", **params),
              GAClassifier(phi="logistic", **params),
              GARegressor(phi="softmax", **params))

    def targets(m):
        rng = np.random.default_rng(9)
        labels = rng.integers(0, 4, size=m)
        return labels, labels, rng.dirichlet(np.ones(3), size=m)

    return models, targets


def test_csr_outputs_held_innermost_learn_the_row_major_model():
    # A CSR run of several outputs of psi = identity with enough entries per column
    # (52 here) holds theta transposed, each column's outputs side by side. The
    # same rows among 4000 empty columns (fewer entries than columns) run row by
    # row (logistic outputs one after another): the models must be the same, bit
    # for bit (fit's shuffled, weighted epochs, then partial_fit).
    X = _wide_csr(300, 40, 7, seed=10)
    wide = sp.hstack([X, sp.csr_matrix((300, 4000))], format="csr")
    assert X.nnz >= X.shape[1] and wide.nnz < wide.shape[1]
    weights = np.random.default_rng(11).uniform(0.5, 2.0, size=300)
    # Epochs that stop on tol too: the first to stop writes theta back.
    models = (_multi_output_models(max_iter=3, tol=None)[0]
              + _multi_output_models(max_iter=50, n_iter_no_change=2)[0])
    _, targets = _multi_output_models()
    for model, y in zip(models, 2 * targets(300), strict=True):
        held = clone(model).fit(X, y, sample_weight=weights)
        rows = clone(model).fit(wide, y, sample_weight=weights)
        assert held.n_iter_ == rows.n_iter_ > 1
        held.partial_fit(X, y)
        rows.partial_fit(wide, y)
        np.testing.assert_array_equal(held.theta_, rows.theta_[:, :40])
        assert not rows.theta_[:, 40:].any()
        np.testing.assert_array_equal(held.intercept_, rows.intercept_)
        # (Outputs learned apart sum their losses output by output.)
        assert held.cumulative_loss_ == pytest.approx(rows.cumulative_loss_,
                                                      rel=1e-13)
        assert np.abs(held.theta_).max() > 0.1  # it learned
        _assert_same_model(clone(model).fit(X.toarray(), y, sample_weight=weights)
                           .partial_fit(X.toarray(), y), held)


def test_csr_outputs_held_innermost_fail_without_a_trace():
    # Rows that overflow the activations late in such a run: the error names the
    # first trial that failed, and the model keeps the parameters it had (they were
    # transposed back, then restored).
    X = _wide_csr(300, 40, 8, seed=12)
    models, targets = _multi_output_models(fit_intercept=False)
    for model, y in zip(models, targets(300), strict=True):
        classes = {"classes": np.arange(4)} if is_classifier(model) else {}
        model.partial_fit(X[:20], y[:20], **classes)
        before = model.theta_.copy(), model.intercept_.copy(), model.cumulative_loss_
        bad = X.copy()
        bad.data[bad.indptr[250]:bad.indptr[260]] = 1e200
        # A large row moves its theta by about 1e200 (a softmax residual is at most
        # 1): the activation of the next large row sharing a column overflows.
        seen, first = set(), None
        for r in range(250, 260):
            columns = set(bad.indices[bad.indptr[r]:bad.indptr[r + 1]])
            if first is None and columns & seen:
                first = r
            seen |= columns
        with pytest.raises(ValueError, match=f"diverged at trial {20 + first + 1} "):
            model.partial_fit(bad, y)
        np.testing.assert_array_equal(model.theta_, before[0])
        np.testing.assert_array_equal(model.intercept_, before[1])
        assert model.cumulative_loss_ == before[2]


@pytest.mark.usefixtures("without_runaway_check")
def test_csr_outputs_held_innermost_across_epochs_fail_without_a_trace():
    # A warm-started fit whose epochs hold theta transposed (three outputs of GD,
    # learned together from four entries per column) diverges in a later epoch
    # (eta ||x||^2 > 2): the error names the trial the row-major run names, and
    # the model keeps the parameters of its last fit.
    X = _wide_csr(300, 40, 7, seed=13)
    Y = X @ np.random.default_rng(14).normal(size=(40, 3))
    wide = sp.hstack([X, sp.csr_matrix((300, 4000))], format="csr")
    trials = []
    for data in (X, wide):
        model = GARegressor(eta=1.5, max_iter=1, tol=None, shuffle=False,
                            warm_start=True).fit(data, Y)
        before = model.theta_.copy(), model.intercept_.copy(), model.t_
        model.set_params(max_iter=30)
        with pytest.raises(ValueError, match=r"diverged at trial (\d+) ") as error:
            model.fit(data, Y)
        trials.append(int(error.value.args[0].split("trial ")[1].split()[0]))
        np.testing.assert_array_equal(model.theta_, before[0])
        np.testing.assert_array_equal(model.intercept_, before[1])
        assert model.t_ == before[2]
    assert trials[0] == trials[1] > 2 * 300  # (not in the first epochs)


def test_a_loop_holding_theta_innermost_writes_it_back_before_any_other_use():
    # run_csr(hold=True) may leave theta transposed for the next CSR run. The
    # weights are read from it as they are; every other method of the loop first
    # writes it back: it then saves, restores and updates the parameters a loop
    # that never held them has.
    X = _wide_csr(60, 10, 4, seed=15)
    Y = np.random.default_rng(16).dirichlet(np.ones(3), size=60)
    order, none = np.arange(60), np.empty(0)

    def run(hold, then):
        theta = np.zeros((3, 10))
        loop = TrialLoop(PSI["identity"].code, PHI["softmax"].code, theta, np.zeros(3),
                         0.3, 1.0, 2.0, True)
        loop.save()
        loop.run_csr(X.data, X.indices, X.indptr, 10, Y, none, order, False, hold)
        return then(loop), theta

    def save_run_restore(loop):
        loop.save()
        loop.run_dense(X.toarray(), Y, none, order)
        loop.restore()

    for then in (lambda loop: (loop.weights(), loop.release())[0],
                 lambda loop: (loop.weights([7, 1, 3]), loop.release())[0],
                 lambda loop: loop.terms()[2],
                 lambda loop: loop.run_dense(X.toarray(), Y, none, order),
                 save_run_restore,
                 lambda loop: (loop.restore(), loop.weights())[1]):
        (held, held_theta), (plain, plain_theta) = run(True, then), run(False, then)
        np.testing.assert_array_equal(held_theta, plain_theta)
        np.testing.assert_array_equal(held, plain)
    assert np.abs(run(False, lambda loop: None)[1]).max() > 0.1  # (the run learned)


def test_predictions_from_another_thread_leave_a_run_holding_theta_alone():
    # A thread that predicts while partial_fit runs (its loop's GIL released) reads
    # the weights from the transposed copy the run holds, without writing it back
    # or freeing it: the model learns what it learns alone.
    X = _wide_csr(4000, 2000, 20, seed=20)
    y = np.random.default_rng(21).integers(0, 20, 4000)

    def model():
        return GAClassifier(phi="softmax", eta=0.1, random_state=0).partial_fit(
            X[:10], y[:10], classes=np.arange(20))

    alone = model().partial_fit(X, y)
    watched, done, predictions, errors = model(), threading.Event(), [], []

    def predict():
        while not done.is_set():
            try:
                predictions.append(watched.predict(X[:1])[0])
            except Exception as error:  # (raised in this thread, asserted below)
                errors.append(error)

    reader = threading.Thread(target=predict)
    reader.start()
    try:
        watched.partial_fit(X, y)
    finally:
        done.set()
        reader.join()
    assert not errors
    assert len(predictions) > 0
    np.testing.assert_array_equal(watched.theta_, alone.theta_)
    np.testing.assert_array_equal(watched.intercept_, alone.intercept_)
