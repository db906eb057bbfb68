"""Where the time of a one-row call goes: cProfile of test-then-train.

``python benchmarks/profile_online.py [rows]`` times a one-row ``predict`` then
``partial_fit`` of each row (n = 20, float64 arrays) against River's ``predict_one``
then ``learn_one`` of the same rows as dicts, in this one process (CPU time, best of
3, alternating), then profiles GA's loop and prints its 25 most expensive functions,
by their own time and with their callees.

``python benchmarks/profile_online.py [rows] dicts [psi]`` does the same for
``sklearn_ga.river.GAClassifier(psi=psi)`` (its defaults; psi="identity" by
default) against River's ``LogisticRegression()`` on the sparse dict stream of
``bench_online.py``'s row 9 (20 keys a row, a vocabulary growing to 50,000 names).
The compiled calls show as the Python lines that make them; ``perf record`` (or
callgrind) on the same command shows inside them.
"""

import cProfile
import io
import pstats
import sys
import time

import numpy as np
from river.linear_model import LinearRegression
from river.optim import SGD

from sklearn_ga import GARegressor
from sklearn_ga import river as ga_river

ETA, N = 0.01, 20


def loops(m):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, N))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(m)
    rows = [(X[i:i + 1], y[i:i + 1]) for i in range(m)]
    dicts = list(zip([dict(enumerate(row)) for row in X.tolist()], y.tolist(),
                     strict=True))

    def ga():
        model = GARegressor(eta=ETA).partial_fit(X[:1], y[:1])
        for X_row, y_row in rows:
            model.predict(X_row)
            model.partial_fit(X_row, y_row)

    def river():
        # (River's squared loss has the gradient 2 (y_hat - y): the same steps.)
        model = LinearRegression(optimizer=SGD(ETA / 2), intercept_lr=ETA / 2)
        for x, target in dicts:
            model.predict_one(x)
            model.learn_one(x, target)

    return ga, river


def dict_loops(m, psi):
    from bench_online import vocabulary_stream
    from river.linear_model import LogisticRegression

    stream = vocabulary_stream(m)

    def run(model):
        for x, label in stream:
            model.predict_one(x)
            model.learn_one(x, label)

    return (lambda: run(ga_river.GAClassifier(psi=psi)),
            lambda: run(LogisticRegression()))


def main(m, psi=None):
    ga, river = loops(m) if psi is None else dict_loops(m, psi)
    best = [np.inf, np.inf]
    for _ in range(3):
        for index, run in enumerate((ga, river)):
            start = time.process_time()
            run()
            best[index] = min(best[index], time.process_time() - start)
    rows = f"n = {N}" if psi is None else f"dicts, psi={psi}"
    print(f"{m} rows, {rows}: GA {best[0] / m * 1e6:.2f} us, River "
          f"{best[1] / m * 1e6:.2f} us per row (CPU time); ratio "
          f"{best[0] / best[1]:.2f}")
    profile = cProfile.Profile(time.process_time)
    profile.runcall(ga)
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    arguments = sys.argv[1:]
    dicts = arguments[1:2] == ["dicts"]
    main(int(arguments[0]) if arguments else 100_000,
         (arguments[2] if len(arguments) > 2 else "identity") if dicts else None)
