"""Passes of the compiled trial loop over a batch: in chunks, so that Ctrl-C is
heard within a pass, with the rates of :mod:`sklearn_ga._rates`, and watched for
a loss that runs away while staying finite.

The loop runs without the GIL and returns to Python only at the end of a run; a
pass is therefore cut into chunks of rows (:class:`Chunks`) of about
CHUNK_SECONDS each, between which Python handles signals. Where a chunk ends does
not change what is learned. ``fit`` keeps the model of its last completed epoch
when interrupted (:class:`Interrupt`).
"""

import functools
import signal
import threading
import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import assert_all_finite

from ._codes import Status
from ._kernel import csr_row_sums, dense_row_sums
from ._phi import PHI
from ._psi import PSI
from ._validation import (
    UnsortedRows,
    checked_structure,
    index_arrays,
)

# The first chunk of a pass holds about this many entries times outputs (a few ms to
# some 60 ms, depending on psi and the options); the next ones are sized from the
# time it took to about CHUNK_SECONDS.
FIRST_CHUNK_WORK = 1 << 18
CHUNK_SECONDS = 0.05
# At most this many rows a chunk (its per-trial rates take 16 bytes a row).
CHUNK_ROWS = 1 << 18
# A CSR run of a lazy psi writes theta back at its end, a log per coordinate
# touched: chunks of at least this many times n entries amortize it.
CSR_CHUNK_SPAN = 8

# A run whose cumulative on-line loss exceeds this many times the loss of the
# model it started from (Theta_1) on the same trials is diverging: Theorem 3 with
# that model as the comparator (Delta = 0) bounds the ratio by 2 at its rate. The
# margin leaves room for larger rates and for a model changed by hand (theta_, U),
# and a loss that grows geometrically crosses it within a few dozen trials.
RUNAWAY_RATIO = 1e6

NO_RATES = np.empty((0, 2))
# The initial model's loss is summed over blocks of this many rows.
LOSS_ROWS = 1 << 16


class Interrupted(Exception):
    """Ctrl-C was pressed during a pass (see :class:`Interrupt`)."""


class Interrupt:
    """Ctrl-C deferred to the end of the running chunk.

    In the main thread, while the default handler of SIGINT is installed, the
    context replaces it by one that only records the request; the pass driver
    checks it between chunks, where the state of the loop is known. Elsewhere
    (another thread, or a handler of the user's) signals are left alone, and a
    KeyboardInterrupt is handled as any exception (the call leaves the model as
    it was). On exit the handler is put back.
    """

    def __init__(self, enabled=True):
        self.enabled, self.requested, self.previous = enabled, False, None

    def __enter__(self):
        if (self.enabled and threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.previous = signal.signal(signal.SIGINT, self._record)
        return self

    def _record(self, signum, frame):
        self.requested = True

    def __exit__(self, *exc_info):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None
        return False


class Chunks:
    """The sizes of the chunks of the passes of a call over X, for k outputs.

    ``rows`` is the size of the next chunk; :meth:`took` sizes the following one
    from the time a chunk took, so that a chunk takes about CHUNK_SECONDS
    whatever the cost of a trial (up to a hundredfold between the cheapest psi
    and the options). A CSR run of a lazy psi keeps at least CSR_CHUNK_SPAN n
    entries.
    """

    def __init__(self, X, k, lazy_csr):
        m, n = X.shape
        self.per_row = max(1.0, (X.nnz / max(m, 1) if sp.issparse(X) else n) * k)
        self.least = (max(1, int(CSR_CHUNK_SPAN * n * k / self.per_row))
                      if sp.issparse(X) and lazy_csr else 1)
        self.rows = max(self.least, int(min(FIRST_CHUNK_WORK / self.per_row,
                                            CHUNK_ROWS)))

    def took(self, rows, seconds):
        """A chunk of ``rows`` rows took ``seconds``: size the next one (at most
        four times larger)."""
        target = rows * CHUNK_SECONDS / max(seconds, 1e-6)
        self.rows = max(self.least, int(min(target, 4 * rows, CHUNK_ROWS)))


def run_pass(loop, run, order, rates, t, chunks, hold=False, interrupt=None,
             average=0):
    """One pass of ``loop`` over the rows ``order``, in ``chunks``.

    ``run`` is a :class:`TrialRunner`, ``rates`` a rate object (started and
    finished here: only a completed pass counts) and ``t`` the trials seen before
    the pass. An averaging loop averages from trial ``average`` on (counted since
    the reset, as SGD's ``average``; 0: none). Returns ``(status, trials, loss)`` as
    a run does; raises :class:`Interrupted` if ``interrupt`` was requested before
    the last chunk (the loop is then in the middle of the pass).
    """
    rates.start_pass()
    total, m, start = 0.0, order.shape[0], 0
    while True:
        part = order[start:start + chunks.rows]
        last = start + part.shape[0] >= m
        per_trial = rates.rates(part, t + start)
        if isinstance(per_trial, tuple):  # the same rates for the whole chunk
            if per_trial != loop.rates:
                loop.set_rates(*per_trial)
            per_trial = NO_RATES
        began = time.perf_counter() if not last else 0.0
        # (The chunk's trials not averaged yet: those before trial ``average``.)
        average_from = max(0, average - 1 - (t + start)) if average else 0
        status, trials, loss = run(loop, part, per_trial, hold or not last,
                                   average_from)
        total += loss
        if status != Status.OK:
            # (trials = the chunk's length: its end-of-run check failed.)
            rates.failed(per_trial[min(trials, part.shape[0] - 1)]
                         if per_trial.shape[0] else loop.rates)
            return status, start + trials, total
        if last:
            break
        chunks.took(part.shape[0], time.perf_counter() - began)
        start += part.shape[0]
        if interrupt is not None and interrupt.requested:
            raise Interrupted
    run.all_checked()
    rates.finish_pass()
    if loop.rates != rates.current():  # (after per-trial rates: those they ended at)
        loop.set_rates(*rates.current())
    return Status.OK, m, total


class TrialRunner:
    """``runner(loop, order, rates=NO_RATES, hold=False, average_from=0)``: one
    compiled run of ``loop`` over the rows ``order`` of a batch at the per-trial
    ``rates`` (an array of shape (len(order), 2); empty: the loop's constant rates),
    averaging from position ``average_from`` on (an averaging loop's).

    X is validated float64 or float32, C-contiguous or canonical CSR
    (``canonical_csr``): a run reads a float32 X's rows as float64 one at a time
    (``run_dense``, ``run_csr``), and Y the encoded
    (m, k) targets. With ``check_rows``, a CSR X is not checked yet:
    each run checks each row before reading it (``run_csr``'s check_rows) until
    :meth:`all_checked` says that every row has been. If a run fails, X is checked
    whole: a malformed X raises ValueError, an unsorted one ``UnsortedRows``. X is
    not scanned for NaN/inf beforehand (a pass over X): non-finite inputs make the
    activations non-finite at once, so a run that fails is checked here and
    reported as bad input rather than as divergence. With ``hold``, a CSR run that
    succeeds may leave theta held for the next (``run_csr``'s hold): the caller
    calls ``loop.release()`` before reading theta.
    """

    def __init__(self, X, Y, sample_weight, estimator_name=None, check_rows=False):
        self.X, self.Y, self.estimator_name = X, Y, estimator_name
        self.weights = (np.empty(0) if sample_weight is None
                        else np.ascontiguousarray(sample_weight, dtype=np.float64))
        self.unchecked = check_rows and sp.issparse(X)
        if sp.issparse(X):
            self.indices, self.indptr = index_arrays(X)

    def __call__(self, loop, order, rates=NO_RATES, hold=False, average_from=0):
        X = self.X
        if sp.issparse(X):
            status, trials, loss = loop.run_csr(
                X.data, self.indices, self.indptr, X.shape[1], self.Y, self.weights,
                order, self.unchecked, hold, rates, average_from)
        else:  # (float64 or float32 rows)
            status, trials, loss = loop.run_dense(X, self.Y, self.weights, order,
                                                  rates, average_from)
        if status != Status.OK and self.unchecked:
            checked_structure(X)  # (a malformed X, before any other error)
            if status == Status.UNREADABLE:
                raise UnsortedRows
        if status != Status.OK:
            with np.errstate(over="ignore", invalid="ignore"):  # (+inf - inf: NaN)
                assert_all_finite(X, input_name="X",
                                  estimator_name=self.estimator_name)
        return status, trials, loss

    def all_checked(self):
        """Every row has been read by a run that succeeded: X is well formed."""
        self.unchecked = False


def may_run_away(psi, phi):
    """Whether a run of (psi, phi) can diverge while its values stay finite: the
    residuals y_hat - y of a phi of bounded range are bounded, so each step moves
    theta by a bounded amount, and the weights grow at most linearly, but for
    exponential weights (EGU). A threshold phi (the Perceptron) is scale-free."""
    entry = PHI[phi]
    bounded_range = np.isfinite(entry.low) and np.isfinite(entry.high)
    return not entry.threshold and (not bounded_range
                                    or PSI[psi].growing_weights)


def runaway(cumulative_loss, initial_loss):
    """If a cumulative on-line loss is more than RUNAWAY_RATIO times the loss of
    the initial model on the same trials (see ``may_run_away``), what the
    divergence error says of it; else None."""
    if cumulative_loss > RUNAWAY_RATIO * initial_loss > 0:
        return (f"its cumulative on-line loss, {cumulative_loss:.3g}, is more than "
                f"{RUNAWAY_RATIO:g} times the {initial_loss:.3g} that its initial "
                "model would have had on the same trials: the weights are running "
                "away")
    return None


def initial_model_loss(X, Y, sample_weight, psi, phi, U, p):
    """The sample-weighted loss that the model at Theta_1 (intercept 0) would have
    on the rows of X, without learning: the reference of RUNAWAY_RATIO. Summed in
    blocks of LOSS_ROWS rows, so that its arrays of one value a row stay small
    beside X (a float32 X's rows take 4 bytes a feature)."""
    total = 0.0
    for start in range(0, X.shape[0], LOSS_ROWS):
        rows = slice(start, start + LOSS_ROWS)
        A = start_activations(X, psi, U, p, rows)
        with np.errstate(all="ignore"):
            losses = PHI[phi].sample_loss(Y[rows], np.broadcast_to(A, Y[rows].shape))
        total += float(np.sum(losses if sample_weight is None
                              else losses * sample_weight[rows]))
    return total


def count_initial_loss(loop, X, checked, psi, U, p):
    """If ``checked`` (the runaway check's), have the runs of ``loop`` on a dense X
    sum :func:`initial_model_loss` of their trials (``loop.start_loss``, from 0) in
    the pass that reads each row for its trial, instead of a pass over X of its
    own; returns whether they do (not for a CSR X, whose row sums cost a pass over
    its values only)."""
    loop.count_start = checked and not sp.issparse(X)
    if loop.count_start:
        start = _start_weights(psi, X.shape[1], U, p)
        loop.start_weight = 0.0 if start is None else float(start[0])
        loop.start_loss = 0.0
    return loop.count_start


def start_activations(X, psi, U, p, rows=slice(0, None)):
    """The activations psi(Theta_1) x of the rows ``rows`` (a slice) of X
    (intercept 0), as a column; 0.0 where psi(Theta_1) = 0. Theta_1 is constant and
    psi treats the coordinates alike, so psi(Theta_1) is one weight repeated: the
    activations are it times the rows' sums, which read a CSR X in order
    (X @ psi(Theta_1) gathers the weights of its columns from all n), in place (a
    slice of a CSR matrix is a copy)."""
    start = _start_weights(psi, X.shape[1], U, p)
    if start is None:
        return 0.0
    if sp.issparse(X):  # (float64 sums of float32 values too)
        stop = X.shape[0] if rows.stop is None else rows.stop
        sums = csr_row_sums(X.data, X.indptr, rows.start, stop)
    else:  # (float32 rows read as they are)
        sums = dense_row_sums(np.ascontiguousarray(X[rows]))
    return sums.reshape(-1, 1) * start[0]


@functools.lru_cache(maxsize=16)
def _start_weights(psi, n, U, p):
    """psi(Theta_1) of a row of n features, None where it is 0."""
    entry = PSI[psi]
    weights = entry.weights(np.full((1, n), entry.start), U, p)[0]
    weights.flags.writeable = False  # (shared by the calls)
    return weights if np.any(weights) else None
