"""The learning rates of the trials: a constant ``eta``, or KW01 Theorem 3's rate
following the data (``eta="theory"``), either of them scaled by SGD's schedule
``1 / t^power_t`` (``learning_rate="invscaling"``, :class:`InvScaling`).

A rate object tells the compiled loop the rates of a call's trials: for each
trial, a pair (rate of the weights, rate of the intercepts). The step of a trial of
sample weight s is ``s * rate * (y_hat - y) x`` for Theta and
``s * intercept_rate * (y_hat - y)`` for b, while its loss counts s times. The
engine drives a rate object through the passes of a call::

    rates.prepare(X, Y, sample_weight)      # once per call: the rows' quantities
    for each pass (fit's epochs; partial_fit's one pass):
        rates.start_pass()
        for each chunk ``order`` of the pass (row indices, in the order learned):
            per_trial = rates.rates(order, t)  # t: trials seen before the chunk
            ...run the chunk at those rates...
        rates.finish_pass()                 # only a completed pass counts
    rates.current()                         # (eta_, intercept_eta_) after them

``rates(order, t)`` returns either one pair ``(eta, intercept_eta)`` for every
trial of the chunk, or a float64 C array of shape (len(order), 2) whose row i holds
the rates of the trial that learns row ``order[i]``, the ``t + i + 1``-th trial
since the model was reset (fit's epochs shuffle ``order``: the rates are those of
the trial positions, not of the rows). A schedule of the trial count, such as
``eta / t**power_t`` (:class:`InvScaling`), returns arrays computed from ``t``. A
rate object that
keeps state across calls (as :class:`TheoryRates` keeps the largest bounds seen)
returns it from ``state()``, which the estimator stores and gives back to the
next call's object.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import assert_all_finite

from ._auto_scale import _outside_level
from ._guarantees import _representable
from ._kernel import csr_row_bounds, dense_row_bounds, invscaling_factors
from ._passes import start_activations
from ._phi import PHI
from ._psi import PSI
from ._validation import float64_rows

# The rates of a chunk of trials are computed this many trials at a time.
RATE_BLOCK = 8192
# The quantile of a call's row bounds below which its later passes bound no row's
# rate (TheoryRates): measured in benchmarks/bench_defaults.py.
ROW_QUANTILE = 0.9
# A fresh model whose predictions at Theta_1 exceed the largest target this many
# times warns that a rate following them cannot move it (TheoryRates).
START_RATIO = 100.0
# A fresh EGU or Burg model whose rule takes a row's bound at this many times its
# bound at the start's weights of 1 (the largest |y| to the rule's power) warns
# that the model barely learns at that rate (TheoryRates): on 8 standardized
# Gaussian inputs, Burg's R^2 fell 0.04 below GD's at |y| = 30 (ratio 900), EGU's
# 0.08 at |y| = 1000, and neither by more than 0.03 at a ratio below 400.
GROWTH_RATIO = 500.0


class Rates:
    """Constant rates: ``eta`` for the weights and ``intercept_eta`` for the
    intercepts (the base class of the rate objects)."""

    n_changes = 0
    # The rates of the trial at which a run failed (``failed``), for its error.
    failure = None

    def __init__(self, eta, intercept_eta):
        self.pair = float(eta), float(intercept_eta)

    def prepare(self, X, Y, sample_weight):
        """Read what the rates of this call's rows depend on (before any pass)."""

    def start_pass(self):
        """A pass begins; its chunks follow in order."""

    def rates(self, order, t):
        """The rates of the trials of ``order`` (see the module docstring)."""
        return self.pair

    def finish_pass(self):
        """The pass completed: what it changed counts from now on."""

    def current(self):
        """``(eta, intercept_eta)``: the rates of the next trial without a new row
        (the constant rates a trial loop is built with)."""
        return self.pair

    def state(self):
        """What the next call's rate object continues from (None: nothing)."""
        return None

    def failed(self, pair):
        """A run failed at a trial of rates ``pair``: its error names them."""
        self.failure = tuple(float(rate) for rate in pair)


def row_bounds(entry, X, Y, U, p, growth):
    """The bound of each row of X (targets Y; see :class:`TheoryRates`), a new
    array, computed by the kernel's ``_row_bound``: the one computation that the
    one-row calls make too."""
    Y = np.asarray(Y, dtype=np.float64)
    if sp.issparse(X):
        return csr_row_bounds(X.data, X.indptr.astype(np.int64, copy=False),
                              X.shape[1], Y, entry.code, U, p, growth)
    if X.dtype != np.float64:  # (float32 rows, read a block at a time)
        return np.concatenate([
            dense_row_bounds(block, Y[start:stop], entry.code, U, p, growth)
            for start, stop, block in float64_rows(X)])
    return dense_row_bounds(X, Y, entry.code, U, p, growth)


def _running_max(values, order, start):
    """The running maximum of ``values[order]``, from ``start`` on."""
    running = values[order]
    np.maximum(running, start, out=running)
    return np.maximum.accumulate(running, out=running)


def transfer_constants(phi, loss, Y, start=0.0):
    """c of the default rate: c_phi of KW01 eq. (29) (a float), or one value per
    row of the targets Y (an array) where it depends on them.

    phi = exp has no finite c_phi: the ratio of eq. (29) is about y_hat near the fit
    (phi' = y_hat there), so c is the row's largest target or prediction of the
    model at Theta_1 (activations ``start``), at least 1 (its square for the square
    loss, whose curvature is about y_hat^2 there). phi = sign
    has no matching loss in the sense of eq. (2): c = 1, the constant of tanh, the
    smooth transfer whose sign the Perceptron predicts.
    """
    c = PHI[phi].c
    if c is None:
        return 1.0
    if np.isfinite(c):
        return float(c)
    with np.errstate(over="ignore"):  # (an infinite c is reported as a rate of 0)
        first = PHI[phi].transfer(np.broadcast_to(start, Y.shape)).max(axis=1)
    largest = np.maximum(np.maximum(Y.max(axis=1), first), 1.0)
    return largest**2 if loss == "square" else largest


class TheoryRates(Rates):
    """KW01 Theorem 3's rate for the rows seen so far (``eta="theory"``).

    Each row x of sample weight s has a bound B = s x^T Dpsi x (the per-row
    quantity of eq. 28, ``Parameterization.row_bounds``) and the intercept one of
    S = s (it is a weight on the constant input 1, updated by gradient descent).
    For EGU and Burg, whose x^T Dpsi x = sum_j w_j^k x_j^2 grows with the
    weights w (k = ``weight_power``: 1, 2), B is ||x||^2 times the k-th power of
    the row's largest target |y| (at least 1), the size of weights that fit it
    from inputs of size 1 (a rule, not a bound: weights far larger can still
    diverge, which the divergence error reports); twice that power with
    ``update="natural"``, whose step Dpsi x in theta changes the activation by
    x^T Dpsi^2 x (KMWW eq. 5). Before a trial, B
    and S are the largest over the rows seen, this one included, and c that of
    :func:`transfer_constants`; then, as the intercept's block of the potential is
    separate (its Hessian is block diagonal), any rates with
    ``c (eta B + eta_b S) <= 1/2`` keep the per-trial inequality of Theorem 3's
    proof, and

    * ``intercept_eta="eta"``: ``eta = eta_b = 1 / (2c (B + S))``, Theorem 3's
      rate with b = B + S;
    * ``"auto"``: the intercept learns as one more feature on the scale of the
      others: its block gets the share ``L = max(B / n, S)`` of the budget, that
      of an average one of the n features when it exceeds its own, so that
      ``eta = 1 / (2c (B + L))`` and ``eta_b = (L / S) eta``; once B >= n S,
      ``eta_b = 1 / (2c (n + 1) S)``. For gradient descent on standardized
      inputs B / n is about 1, and this is about "eta"; for EG±, whose
      B = U^2 max ||x||_inf^2 grows with U^2, the weights' rate would leave the
      intercept far from an uncentred target's mean;
    * a number: ``eta = 1 / (2cB)`` and that constant intercept rate;
    * no intercept: ``eta = 1 / (2cB)``.

    Since B, S and c only grow, the rates never rise (but for the first row that
    bounds anything: before it, no step can move the parameters, and 1 / (2c)
    stands in). With non-increasing rates, the sum of Theorem 3's per-trial
    inequalities, bounded by parts, gives bound (30) with the final b and c and
    Delta_psi(Theta_1, Theta*) replaced by the largest divergence
    Delta_psi(Theta_t, Theta*) along the run: bound (30) itself when the first
    trial already holds the largest bound.

    A call's first pass (partial_fit's only one) runs at these rates. Its later
    passes (``fit``'s epochs after the first) learn rows the call has seen
    whole, which no adversary chooses any more: there the B of each trial is
    ``max(B_row, B_q)``, its own row's bound or the ``ROW_QUANTILE`` quantile
    B_q of the call's row bounds, whichever is larger (S and c the largest seen:
    a row's own S would free its intercept step from its sample weight), for a
    psi whose B is a bound (not EGU's or Burg's rule) and whose fit may average
    away the larger noise of larger rates (not a geodesic psi's: a mean of
    points of the sphere leaves it). Each
    trial still keeps the per-trial inequality of Theorem 3's proof, and as its
    rate is ``rho_t eta`` with ``eta`` the rate at B_q and
    ``rho_t = B_q / max(B_row, B_q) <= 1``, the sum of those inequalities is
    bound (30) at b = B_q for the loss of the pass weighted by rho_t (rows whose
    bound exceeds B_q count less): rare large values, which set the worst-case
    b, then no longer set every row's rate. ``current()`` stays Theorem 3's
    rate for the rows seen, which a later partial_fit continues at.
    """

    def __init__(self, psi, phi, U, p, loss, fit_intercept, intercept_eta,
                 n_features, state=None, estimator_name=None, update="explicit"):
        self.entry, self.U, self.p = PSI[psi], float(U), float(p)
        # (The power of the largest target in an EGU or Burg row's bound.)
        self.natural = update == "natural"
        self.growth = self.entry.weight_power * (2 if self.natural else 1)
        self.n_features = n_features
        self.phi, self.loss, self.estimator_name = phi, loss, estimator_name
        self.fit_intercept, self.rule = fit_intercept, intercept_eta
        self.keys = (psi, self.U, self.p, self.growth), (phi, loss)
        # The largest (B, S, c) of the rows seen, and the number of changes, while
        # psi, U, p (for B and S) and phi, loss (for c) stay those they were seen
        # with; else from scratch.
        self.pair_of = (None, None)  # (maxima, their rates), the last computed
        if state is not None and state[0] == (self.keys, self.rule,
                                              self.fit_intercept):
            _, self.committed, self.pair_of = state
        else:
            floor = float(np.max(transfer_constants(phi, loss, np.zeros((1, 1)))))
            B = S = 0.0
            c, changes = floor, 0
            if state is not None:
                ((b_key, c_key), _, _), (B, S, c, changes), _ = state
                if b_key != self.keys[0]:
                    B = S = 0.0
                if c_key != self.keys[1]:
                    c = floor
            self.committed = (B, S, c, changes)
        self.pending = self.committed
        self.passes, self.row_rates = 0, None
        self.fresh = state is None

    def _check_start(self, start, Y):
        """Warn where phi's c follows the predictions of the model at Theta_1
        (exp: :func:`transfer_constants`) and they are far above the targets: the
        rate is then so small that the model barely leaves its start."""
        with np.errstate(over="ignore"):
            first = float(np.max(PHI[self.phi].transfer(start)))
        top = max(float(np.max(Y)), 1.0)
        if first > START_RATIO * top:
            weight = float(self.entry.weights(np.full((1, 1), self.entry.start),
                                              self.U, self.p)[0, 0])
            warnings.warn(
                f"eta='theory' with phi={self.phi!r}: the model at its start "
                f"(psi={self.entry.name!r}, every weight {weight:.3g}) predicts up "
                f"to {first:.3g}, far above the largest target {top:.3g}, and the "
                "rate's c follows its predictions (KW01 eq. (29) has no finite c "
                f"for {self.phi}): at such a rate the model "
                "barely moves from its start. Use psi='identity' or 'eg_pm' "
                "(weights that start at 0), or a numeric eta.",
                UserWarning, stacklevel=_outside_level())

    def _check_growth(self, Y):
        """Warn where the rule of EGU's or Burg's row bound (weights of the size
        of the largest target s, to the power k: ``growth``) exceeds the bound
        at the start's weights of 1 more than GROWTH_RATIO times: the rate is
        then s^k times below what the start allows, and fit stops (by tol)
        while the model is still far from the data."""
        top = max(float(np.max(np.abs(Y))), 1.0)
        if top**self.growth > GROWTH_RATIO:
            warnings.warn(
                f"eta='theory' with psi={self.entry.name!r}: the default rate takes "
                f"the weights at the size of the largest target ({top:.3g}), and "
                "the model starts at weights of 1, where that rate is "
                f"{top**self.growth:.3g} times below what their bound allows (the "
                f"bound's rule grows as |y|^{self.growth:g}): expect a model far "
                "from the data. Scale the targets (e.g. "
                "sklearn.compose.TransformedTargetRegressor with "
                "transformer=StandardScaler()), use psi='identity' or 'eg_pm', or "
                "pass a numeric eta.",
                UserWarning, stacklevel=_outside_level())

    def prepare(self, X, Y, sample_weight):
        if self.natural and self.entry.no_natural_rate is not None:
            raise ValueError(
                f"eta='theory' is not available for psi={self.entry.name!r} with "
                f"update='natural': {self.entry.no_natural_rate}. Use "
                "update='explicit' or 'implicit', or pass a numeric eta."
            )
        B = row_bounds(self.entry, X, Y, self.U, self.p,
                       self.growth if self.entry.growing_weights else 0.0)
        if sample_weight is not None:
            B *= sample_weight
        largest = float(B.max())  # (NaN or inf if any is)
        if not np.isfinite(largest):
            # X is read here before the loop, which would report NaN or inf in it.
            assert_all_finite(X, input_name="X", estimator_name=self.estimator_name)
            scaled = ("inputs (times U)" if "U" in self.entry.hyperparameters
                      else "inputs")
            raise ValueError(
                f"eta='theory' is not available: b_(X,psi) of KW01 eq. (28) "
                f"overflowed for psi={self.entry.name!r}: it grows with the square "
                f"of the {scaled} (and with the sample weights), and they are too "
                "large. Scale the inputs (e.g. with StandardScaler or "
                "MaxAbsScaler), or use a numeric eta."
            )
        S = 1.0 if sample_weight is None else sample_weight
        start = (start_activations(X, self.entry.name, self.U, self.p)
                 if not np.isfinite(PHI[self.phi].c or 0.0) else 0.0)
        c = transfer_constants(self.phi, self.loss, Y, start)
        if self.fresh and not np.isscalar(start):
            self._check_start(start, Y)
        if self.fresh and self.entry.growing_weights:
            self._check_growth(Y)
        self.rows = B, S, c
        self.largest = (largest, S if sample_weight is None else float(S.max()),
                        c if isinstance(c, float) else float(c.max()))
        self.passes, self.row_rates = 0, None

    def start_pass(self):
        self.pending = self.committed
        self.passes += 1

    def _seen_rates(self):
        """The rates of the rows of the call in its later passes (see the class
        docstring), a (rows, 2) array computed on the second pass's first chunk."""
        if self.row_rates is None:
            B = self.rows[0]
            bounded = np.maximum(B, np.quantile(B, ROW_QUANTILE))
            self.row_rates = np.column_stack(self._formula(bounded,
                                                           *self.committed[1:3]))
        return self.row_rates

    def rates(self, order, t):
        if self.passes > 1 and not (self.entry.growing_weights or self.entry.geodesic):
            return self._seen_rates()[order]  # (a new array: the schedule scales it)
        B0, S0, c0, changes = self.pending
        if (self.largest[0] <= B0 and self.largest[1] <= S0
                and self.largest[2] <= c0):
            return self._pair(B0, S0, c0)  # (no row of the batch raises a bound)
        out = np.empty((order.shape[0], 2))
        previous = np.array(self._pair(B0, S0, c0))
        maxima = B0, S0, c0
        for start in range(0, order.shape[0], RATE_BLOCK):  # (small temporaries)
            rows = order[start:start + RATE_BLOCK]
            B, S, c = (_running_max(values, rows, top) if isinstance(values,
                                                                     np.ndarray)
                       else max(values, top)
                       for values, top in zip(self.rows, maxima, strict=True))
            block = out[start:start + RATE_BLOCK]
            block[:, 0], block[:, 1] = self._formula(B, S, c)
            maxima = float(B[-1]), float(np.max(S)), float(np.max(c))
            # The trials whose rates differ from the trial's before (lower ones).
            changes += int(np.any(block[0] != previous))
            changes += int(np.count_nonzero(np.any(block[1:] != block[:-1], axis=1)))
            previous = block[-1]
        self.pending = (*maxima, changes)
        return self._pair(*maxima) if order.shape[0] == 1 else out

    def finish_pass(self):
        self.committed = self.pending

    def _pair(self, B, S, c):
        """The rates at the largest bounds (B, S, c), as floats."""
        if self.pair_of[0] != (B, S, c):
            eta, eta_b = self._formula(np.array([B]), S, c)
            self.pair_of = (B, S, c), (float(eta[0]), float(eta_b[0]))
        return self.pair_of[1]

    def _formula(self, B, S, c):
        """(eta, eta_b) for the running maxima B (an array), S and c (arrays or
        floats), elementwise (see the class docstring): new arrays, with few
        temporaries (B may be as long as a batch)."""
        ratio = None
        if self.fit_intercept and self.rule in ("auto", "eta"):
            S = np.asarray(S, dtype=np.float64)
            ratio = (np.maximum(B / self.n_features, S) if self.rule == "auto"
                     else np.array(np.broadcast_to(S, B.shape)))  # L
            total = B + ratio
            # L / S; 1 where S = 0 (no row of nonzero weight yet).
            np.divide(ratio, S, out=ratio, where=S > 0)
            ratio[np.broadcast_to(S <= 0, B.shape)] = 1.0
        else:
            total = B.copy()
        total[total <= 0] = 1.0  # (no row bounds a step yet: 1 / (2c) stands in)
        with np.errstate(over="ignore"):  # (an overflow is reported below)
            total *= c
            eta = np.divide(0.5, total, out=total)
        if not (np.all(np.isfinite(eta)) and np.all(eta > 0)):
            # theory's error for a rate that over- or underflows.
            bad = eta[~(np.isfinite(eta) & (eta > 0))][0]
            _representable("eta='theory' is not available: KW01 Theorem 3",
                           "learning rate", bad, positive=True)
        if ratio is None:
            return eta, np.full_like(eta, float(self.rule) if self.fit_intercept
                                     else 0.0)
        ratio *= eta
        return eta, ratio

    def current(self):
        return self._pair(*self.committed[:3])

    def one_row_limits(self):
        """``(bound_limit, growth)`` of one-row trials at the rates of
        :meth:`current` (``OneRow``): a row whose bound times its weight exceeds
        ``bound_limit`` lowers the rate, which a general call computes. None where
        any row may change the rates: S below 1 (a row of weight 1 raises it), c
        following the rows (phi = exp), no rate (update="natural" of a psi
        without one)."""
        B, S, _, _ = self.committed
        c = PHI[self.phi].c
        if (S < 1.0 or (c is not None and not np.isfinite(c))
                or (self.natural and self.entry.no_natural_rate is not None)):
            return None
        return B, float(self.growth) if self.entry.growing_weights else 0.0

    @property
    def n_changes(self):
        return self.committed[3]

    def state(self):
        self.current()  # (the pair of the committed maxima, kept with them)
        return (self.keys, self.rule, self.fit_intercept), self.committed, self.pair_of

    @staticmethod
    def rescaled(state, U):
        """``state`` with the rows seen bounded at a new U of a psi whose bound is
        U^2 max ||x||_inf^2 (EG±, HKW §III), as U="auto" doubles U; None stays."""
        if state is None:
            return None
        ((psi, old, p, growth), c_key), rule, fit_intercept = state[0]
        B, S, c, changes = state[1]
        return ((((psi, float(U), p, growth), c_key), rule, fit_intercept),
                (B * (U / old) ** 2, S, c, changes), (None, None))


class InvScaling(Rates):
    """``learning_rate="invscaling"``: the rates of the rate object ``base``
    (constant, or the theory rate following the data), each trial's divided by
    t^power_t, t its number since the model was reset (SGD's ``eta0 / t^power_t``,
    for the weights, the intercepts and the penalty's pull alike).

    ``current()``, ``n_changes`` and ``state()`` are the base's: ``eta_`` is the
    rate that the schedule scales.
    """

    def __init__(self, base, power_t):
        self.base, self.power_t = base, float(power_t)

    def prepare(self, X, Y, sample_weight):
        self.base.prepare(X, Y, sample_weight)

    def start_pass(self):
        self.base.start_pass()

    def rates(self, order, t):
        scale = invscaling_factors(t, order.shape[0], self.power_t)
        base = self.base.rates(order, t)
        if isinstance(base, tuple):
            return np.multiply.outer(scale, np.array(base))
        base *= scale[:, None]  # (the base's arrays are new)
        return base

    def finish_pass(self):
        self.base.finish_pass()

    def current(self):
        return self.base.current()

    @property
    def n_changes(self):
        return self.base.n_changes

    def state(self):
        return self.base.state()
