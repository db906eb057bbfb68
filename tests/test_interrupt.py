"""Ctrl-C within a pass: the loop returns to Python between chunks of rows, so that
SIGINT is heard within a fraction of a second; fit keeps the model of its last
completed epoch, or raises KeyboardInterrupt with the model as it was."""

import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from sklearn_ga import GARegressor

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = textwrap.dedent("""
    import signal, sys, threading, time, warnings
    import numpy as np
    from sklearn_ga import GARegressor


    def announce_the_handler():
        # fit hears Ctrl-C through a handler of its own from its first epoch on.
        while signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            time.sleep(0.001)
        print("LISTENING", flush=True)

    m, max_iter = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(m, 50))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=m)
    params = dict(psi="pnorm", p=3.5, max_iter=max_iter, tol=None, random_state=0)
    model = GARegressor(verbose=1, **params)
    threading.Thread(target=announce_the_handler, daemon=True).start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, y)
            outcome = "returned"
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
    print("DONE", time.monotonic(), outcome, flush=True)
    print("WARNING", *[str(w.message) for w in caught], flush=True)
    if outcome == "returned":
        n_iter = model.n_iter_
        again = GARegressor(**{**params, "max_iter": n_iter}).fit(X, y)
        same = np.array_equal(model.coef_, again.coef_) and (
            model.t_ == again.t_ == n_iter * m)
        print("KEPT", n_iter, same, np.all(np.isfinite(model.predict(X))), flush=True)
    else:
        print("KEPT", hasattr(model, "theta_"), flush=True)
""")


def interrupt(m, max_iter, when):
    """Run CHILD, send SIGINT once ``when(line)`` holds for a line it printed;
    return the seconds from the signal to fit's end and the lines printed after."""
    child = subprocess.Popen([sys.executable, "-u", "-c", CHILD, str(m), str(max_iter)],
                             stdout=subprocess.PIPE, text=True)
    try:
        for line in child.stdout:
            if when(line):
                break
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        lines = {}
        for line in child.stdout:
            key, _, rest = line.strip().partition(" ")
            lines.setdefault(key, rest)
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    return float(lines["DONE"].split()[0]) - sent, lines


def test_ctrl_c_after_some_epochs_keeps_the_last_completed_one():
    # The signal arrives in the middle of an epoch of several chunks.
    latency, lines = interrupt(20_000, 1000, lambda line: line.startswith("-- Epoch 2"))
    assert latency < 0.5
    assert lines["DONE"].split()[1] == "returned"
    n_iter, same, finite = lines["KEPT"].split()
    assert int(n_iter) >= 2 and same == "True" and finite == "True"
    assert f"last completed epoch, {n_iter} " in lines["WARNING"]


def test_ctrl_c_in_the_first_epoch_leaves_the_model_as_it_was():
    # One epoch of about a second: the signal comes as soon as it has begun.
    latency, lines = interrupt(100_000, 1, lambda line: line.startswith("LISTENING"))
    assert latency < 0.5
    assert lines["DONE"].split()[1] == "KeyboardInterrupt"
    assert lines["KEPT"] == "False"
    assert "as it was before the call" in lines["WARNING"]


def test_verbose_prints_each_epoch(capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    GARegressor(max_iter=3, tol=None, verbose=1).fit(X, X[:, 0] + 5)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    # (The handler of SIGINT that fit installs for its epochs is put back.)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    for epoch, line in enumerate(lines, start=1):
        assert line.startswith(f"-- Epoch {epoch}: ")
        for part in (" s, loss ", " per trial, eta='theory': ", "intercept_eta=",
                     f"trials seen {100 * epoch}"):
            assert part in line
