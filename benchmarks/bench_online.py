"""Goals 5-6: the cost of partial_fit calls.

5. One-row partial_fit on a fitted model (n = 100): the time of a call is almost all
   per-call overhead (validation, set-up), compared with SGDRegressor.partial_fit's;
   the same for GAClassifier (binary labels) against SGDClassifier. Information
   rows: the same on CSR rows of 10^6 features, where anything a call does in O(n)
   would show (GA keeps its compiled loop between calls and builds coef_ only when
   it is read); and a one-row predict before each call, the test-then-train loop
   of an evaluation on a stream (dense, and CSR at 10^6 features, where that
   predict builds coef_ in O(n)).
   And CSR batches of 1000 rows (2^18 features, 50 nonzeros per row), as in
   scikit-learn's out-of-core text classification, for every psi: the per-call
   work on the batch's coordinates (recorded beforehand, theta written back after)
   shows there.
   GARegressorCV's one-row call with 6 configurations against one GARegressor's
   (goal: at most 6 times), dense and CSR (2^18 features, 50 nonzeros per row).
6. A stream of n = 100 rows learned in batches of 1000 through partial_fit, against
   River's LinearRegression.learn_one on the same rows (as dicts, River's format,
   made before timing) taking the same steps: throughput ratio. River's squared loss
   has the gradient 2 (y_hat - y), so its rate lr steps by 2 lr (y_hat - y) x, GA's
   step with eta = 2 lr; River runs with lr = eta / 2 for its weights and intercept.
8. Streaming one event at a time, n = 20: test-then-train of the scikit-learn API
   (a one-row predict, then partial_fit of the row, a float64 ndarray) against
   River's LinearRegression (predict_one, then learn_one of the dict), taking the
   same steps; and sklearn_ga.river.GAClassifier against River's
   LogisticRegression (the same steps too) in evaluate.progressive_val_score, per
   row net of the evaluation's own cost (the time of a learner that does nothing),
   with the whole evaluation's ratio for information.
9. A sparse stream of dicts, as text, one-hot or hashed features give: 20 keys a row
   from a vocabulary that grows to 50,000 names over the stream (new names on
   most rows), test-then-train (predict_one, then learn_one) of
   sklearn_ga.river.GAClassifier with its defaults, GD (psi="identity") and EG+-
   (psi="eg_pm": eta="theory", U doubled from 1 as the weights need), against
   River's LogisticRegression, per row; the rows' accuracy beside.
"""

import numpy as np
from _timing import best_times, header, one_row_calls, report, rows, sparse_data
from river import evaluate, metrics
from river.base import Classifier
from river.linear_model import LinearRegression, LogisticRegression
from river.optim import SGD as RiverSGD
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier, SGDRegressor

from sklearn_ga import PSI, GAClassifier, GARegressor, GARegressorCV
from sklearn_ga import river as ga_river

ETA = 0.01


def data(m, n=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    return X, X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(m)


def stream_ga(X, y, batch=1000):
    model = GARegressor(eta=ETA)
    for start in range(0, X.shape[0], batch):
        model.partial_fit(X[start:start + batch], y[start:start + batch])


def batch_calls(X, y, estimator, batch=1000):
    """A function streaming X through ``estimator.partial_fit`` in batches (sliced
    beforehand), from a fresh copy of it each time."""
    batches = [(X[s:s + batch], y[s:s + batch]) for s in range(0, X.shape[0], batch)]

    def run():
        model = clone(estimator)
        for X_batch, y_batch in batches:
            model.partial_fit(X_batch, y_batch)

    return run


def stream_river(dicts, y):
    # River's gradient of the squared loss is 2 (y_hat - y), for the weights and the
    # intercept alike: half of GA's rate gives GA's steps.
    model = LinearRegression(optimizer=RiverSGD(ETA / 2), intercept_lr=ETA / 2)
    for x, target in zip(dicts, y, strict=True):
        model.learn_one(x, target)


def test_then_train(X, y, model):
    """One-row predict, then partial_fit, of each row of X (sliced beforehand), on a
    copy of a model fitted on the first row."""
    model = clone(model).partial_fit(X[:1], y[:1])
    rows = [(X[i:i + 1], y[i:i + 1]) for i in range(X.shape[0])]

    def run():
        for X_row, y_row in rows:
            model.predict(X_row)
            model.partial_fit(X_row, y_row)

    return run


def test_then_train_river(dicts, y, model):
    targets = y.tolist()

    def run():
        for x, target in zip(dicts, targets, strict=True):
            model.predict_one(x)
            model.learn_one(x, target)

    return run


class Nothing(Classifier):
    """A classifier that predicts False and learns nothing: the cost of the
    evaluation around a learner's calls."""

    def learn_one(self, x, y):
        pass

    def predict_proba_one(self, x):
        return {False: 1.0}


def evaluation(stream, model):
    def run():
        evaluate.progressive_val_score(stream, model.clone(), metrics.Accuracy())

    return run


def vocabulary_stream(m, vocabulary=50_000, keys=20, seed=0):
    """m rows of ``keys`` features drawn from the first names of a vocabulary that
    grows linearly to ``vocabulary`` names over the stream, labelled by a hidden
    linear model."""
    rng = np.random.default_rng(seed)
    truth = rng.standard_normal(vocabulary)
    stream = []
    for t in range(m):
        columns = rng.choice(max(keys, vocabulary * (t + 1) // m), keys,
                             replace=False)
        values = rng.random(keys)
        stream.append(({f"w{c}": v for c, v in zip(columns.tolist(), values.tolist(),
                                                    strict=True)},
                       bool(truth[columns] @ values > 0)))
    return stream


def test_then_train_fresh(stream, make, accuracy):
    """Test-then-train of a fresh ``make()`` on the stream; its accuracy is kept in
    ``accuracy`` (a list), for the row's name."""

    def run():
        model, right = make(), 0
        for x, label in stream:
            right += model.predict_one(x) == label
            model.learn_one(x, label)
        accuracy[:] = [right / len(stream)]

    return run


def sparse_streaming_cases():
    stream = vocabulary_stream(rows(20_000))
    m, river = len(stream), []
    learners = [("GD", ga_river.GAClassifier),
                ("EG+-", lambda: ga_river.GAClassifier(psi="eg_pm"))]
    accuracies = [[] for _ in learners]
    *ga, river_time = best_times(
        *[test_then_train_fresh(stream, make, accuracy)
          for (_, make), accuracy in zip(learners, accuracies, strict=True)],
        test_then_train_fresh(stream, LogisticRegression, river), repeat=3)
    for (name, _), time, accuracy in zip(learners, ga, accuracies, strict=True):
        report(f"9. sklearn_ga.river {name} on a sparse dict stream, 20 keys a row, "
               f"vocabulary growing to 50,000 (accuracy {accuracy[0]:.3f} vs "
               f"{river[0]:.3f})", time / m, river_time / m,
               "River LogisticRegression", 1)


def streaming_cases():
    X, y = data(rows(20_000), n=20)
    dicts = [dict(enumerate(row)) for row in X.tolist()]
    ga, river = best_times(
        test_then_train(X, y, GARegressor(eta=ETA)),
        test_then_train_river(dicts, y, LinearRegression(
            optimizer=RiverSGD(ETA / 2), intercept_lr=ETA / 2)))
    m = X.shape[0]
    report("8. one-row predict + partial_fit, n=20", ga / m, river / m,
           "River predict_one + learn_one", 1)
    # The defaults: the rate follows the rows (a row that would lower it takes the
    # general path), and the runaway check watches each call.
    ga, river = best_times(
        test_then_train(X, y, GARegressor()),
        test_then_train_river(dicts, y, LinearRegression()))
    report("one-row predict + partial_fit, n=20, default parameters", ga / m,
           river / m, "River LinearRegression()", None)
    stream = list(zip(dicts, (y > 0).tolist(), strict=True))
    ga, river, nothing = best_times(
        evaluation(stream, ga_river.GAClassifier()),
        evaluation(stream, LogisticRegression()), evaluation(stream, Nothing()))
    report("8. sklearn_ga.river in progressive_val_score, n=20, net of evaluation",
           (ga - nothing) / m, (river - nothing) / m, "River LogisticRegression",
           0.5)
    report("sklearn_ga.river in progressive_val_score, n=20, whole evaluation",
           ga / m, river / m, "River LogisticRegression", None)


def cases():
    X, y = data(2000)
    calls = 1000
    ga, sgd = best_times(
        one_row_calls(X, y, GARegressor(eta=ETA), calls),
        one_row_calls(X, y, SGDRegressor(
            penalty=None, learning_rate="constant", eta0=ETA), calls),
    )
    report("5. one-row partial_fit call, n=100", ga / calls, sgd / calls,
           "SGDRegressor", 0.3)
    labels = (y > 0).astype(int)
    ga, sgd = best_times(
        one_row_calls(X, labels, GAClassifier(eta=ETA), calls, classes=[0, 1]),
        one_row_calls(X, labels, SGDClassifier(
            loss="log_loss", penalty=None, learning_rate="constant", eta0=ETA), calls,
            classes=[0, 1]),
    )
    report("5. one-row partial_fit call, classifier, n=100", ga / calls, sgd / calls,
           "SGDClassifier", 0.3)

    # GARegressorCV's one-row call, 6 configurations: every configuration's trial
    # in one compiled call; goal: at most the configurations' number of one
    # GARegressor's call (dense n = 100, and CSR rows of 2^18 features).
    etas = np.logspace(-4, -1, 6)
    X_csr, y_csr = sparse_data(1001, 2**18, 50)
    for rows_name, X_rows, y_rows in (("n=100", X, y),
                                      ("CSR n=2^18, 50 nnz/row", X_csr, y_csr)):
        for psi in ("identity", "eg_pm"):
            one, search = best_times(
                one_row_calls(X_rows, y_rows, GARegressor(psi=psi, eta=ETA), calls),
                one_row_calls(X_rows, y_rows, GARegressorCV(
                    psi=psi, etas=etas, Us=[1.0], max_iter=1), calls))
            report(f"41. GARegressorCV one-row call, 6 configurations, psi={psi}, "
                   f"{rows_name}", search / calls, one / calls,
                   "GARegressor one-row call", 6)

    # Information (no goal): test-then-train, a predict before each call.
    ga, sgd = best_times(
        one_row_calls(X, y, GARegressor(eta=ETA), calls, predict=True),
        one_row_calls(X, y, SGDRegressor(
            penalty=None, learning_rate="constant", eta0=ETA), calls, predict=True),
    )
    report("one-row predict + partial_fit, n=100", ga / calls, sgd / calls,
           "SGDRegressor", None)

    # Information (no goal): with 10^6 features any O(n) work per call shows.
    X, y = sparse_data(101, 10**6, 50)
    for psi in ("identity", "eg_pm"):
        ga, sgd = best_times(
            one_row_calls(X, y, GARegressor(psi=psi, eta=ETA), 100),
            one_row_calls(X, y, SGDRegressor(
                penalty=None, learning_rate="constant", eta0=ETA), 100),
        )
        report(f"one-row CSR partial_fit call, psi={psi}, n=10^6, 50 nnz/row",
               ga / 100, sgd / 100, "SGDRegressor", None)
    # Test-then-train there: the first read of coef_ after a call (by predict) is
    # O(n), as is every SGD call.
    ga, sgd = best_times(
        one_row_calls(X, y, GARegressor(psi="eg_pm", eta=ETA), 100, predict=True),
        one_row_calls(X, y, SGDRegressor(
            penalty=None, learning_rate="constant", eta0=ETA), 100, predict=True),
    )
    report("one-row CSR predict + partial_fit, psi=eg_pm, n=10^6, 50 nnz/row",
           ga / 100, sgd / 100, "SGDRegressor", None)

    # Information (no goal): CSR batches of 1000 rows, every psi.
    X, y = sparse_data(rows(50_000), 2**18, 50)
    calls = X.shape[0] // 1000
    *ga, sgd = best_times(
        *[batch_calls(X, y, GARegressor(psi=psi, eta=ETA)) for psi in PSI],
        batch_calls(X, y, SGDRegressor(
            penalty=None, learning_rate="constant", eta0=ETA)),
        repeat=3,
    )
    for psi, ga_time in zip(PSI, ga, strict=True):
        report(f"1000-row CSR partial_fit call, psi={psi}, n=2^18, 50 nnz/row",
               ga_time / calls, sgd / calls, "SGDRegressor", None)

    X, y = data(rows(20_000))
    dicts = [dict(enumerate(row)) for row in X.tolist()]
    # River takes about half a second per pass at scale 1: fewer repeats.
    ga, river = best_times(lambda: stream_ga(X, y), lambda: stream_river(dicts, y),
                           repeat=2)
    report(f"6. stream {X.shape[0]}x100, batches of 1000", ga, river,
           "River learn_one", 50, higher_is_better=True)
    streaming_cases()
    sparse_streaming_cases()


if __name__ == "__main__":
    header()
    cases()
