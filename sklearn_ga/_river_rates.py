"""The learning rates and the scale of the River learners (:mod:`sklearn_ga.river`):
a number, or ``eta="theory"``, KW01 Theorem 3's rate of the rows seen, lowered as
``partial_fit`` lowers it (:class:`~sklearn_ga._rates.TheoryRates`, the row
bounds of the kernel) when a row raises the bound; for EG±'s ``eta="auto"``, that
rate tuned by the loss so far (KW01 eq. 31); ``U`` given, or ``U="auto"``, doubled
while the weights press on the ball."""

import math
from math import log

import numpy as np
import scipy.sparse as sp

from ._base import PRESS
from ._kernel import canonical_order as _canonical
from ._kernel import tuned_rates
from ._psi import PSI
from ._rates import TheoryRates

# U="auto" checks whether the weights press on the ball after every
# max(PRESS_ROWS, n // PRESS_SHARE) rows (n features): O(1) coordinates a row,
# amortized.
PRESS_ROWS, PRESS_SHARE = 32, 8


class _Rates:
    """The rates of a River learner's trials (a mixin of ``_Learner``: its
    parameters, features, loop, one-row calls and dict rows)."""

    def _eta(self):
        """The rate in use: ``eta``; for ``eta="auto"``, "theory" where psi has a
        scale U (a number is a rate for one U: HKW Theorem 2's is 1 / (4 U^2 X^2
        Z), and ``U="auto"`` doubles U), else the class's ``_default_eta``."""
        if self.eta != "auto":
            return self.eta
        entry = PSI.get(self.psi)  # (None: refused by the parameters' checks)
        return "theory" if entry is not None and entry.scale_norm is not None \
            else self._default_eta

    def _start_tuning(self):
        """The state of eq. (31)'s rate (:meth:`_trial_rates`) of an empty model."""
        self._tuning = self.eta == "auto" and PSI[self.psi].doubling
        self._last_rates, self._phase_loss = (math.inf, math.inf), 0.0
        self._first_U, self._divergence_of = self.U_, (0, 0.0)

    def _trial_rates(self, base=None):
        """The rates of the next trial: the theory rates ``base`` (by default the
        loop's), for EG±'s ``eta="auto"`` tuned as KW01 eq. (31) tunes Theorem 3's
        rate to a comparator of loss at most K and divergence at most R.

        K is the loss of the trials so far (the comparator's is unknown; the
        learner's own bounds it in the self-confident way), R is EG±'s ln(2n),
        the relative entropy from the uniform start to any point of the ball in
        the units of its bound B = U^2 max ||x||_inf^2 (HKW §III; 2 ln(4n) from
        the start of a phase after a doubling, doc/user_guide/theory.rst), plus the
        intercept's block, ``b^2 eta / (2 eta_b)`` in those units, b* taken as
        the intercept's value (its largest |b| for several outputs), n and b
        those of the model as the row finds it (:meth:`_start_row`).
        With bc = 1 / (2 eta), eq. (31) is ``eta f``, ``f = 2 / (1 + sqrt(1 +
        2 eta K / R))``: 1 at K = 0, smaller where the loss keeps coming (rows
        that no linear model fits), and the rates stay no larger than the last
        trial's, so that they never rise (the condition of the bound,
        TheoryRates). A doubling of ``U_`` starts a new phase of the doubling
        scheme, a run of its own in its bound (doc/user_guide/theory.rst): K
        counts the loss since, and the rates may start again from the theory
        rate at the new U. Computed by the kernel's ``tuned_rates``, the
        formula that ``learn_many``'s compiled rows run too."""
        eta, intercept_eta = self._rates if base is None else base
        if not self._tuning:
            return eta, intercept_eta
        reach, b = self._row_reach
        self._pending = tuned_rates(eta, intercept_eta,
                                    self._run.cumulative_loss - self._phase_loss,
                                    reach, b, *self._last_rates)
        return self._pending

    def _tuning_of_rows(self, held=None):
        """The ``tuning`` of ``DictRows.learn`` and ``learn_rows`` (eq. 31's rate,
        :meth:`_trial_rates`, in the compiled rows) from the next row on: None
        for untuned rates; R of the first row of the call for ``held`` features
        (those held before a frame, at its first row; None: all), R of the
        others."""
        if not self._tuning:
            return None
        divergence = self._divergence()
        return (self._phase_loss, divergence if held is None
                else self._divergence(held), divergence, *self._last_rates)

    def _start_row(self, n=None):
        """Before a row's trial (eq. 31's rate): R's parts of the model as the row
        finds it, the bound on EG±'s divergence for the n features held (by
        default all) and the intercept's |b|."""
        b = self._intercept
        b = abs(b.item(0)) if b.shape[0] == 1 else float(np.max(np.abs(b)))
        self._row_reach = self._divergence(n), b

    def _divergence(self, n=None):
        """R's bound on EG±'s divergence to a comparator for the n features held
        (by default all)."""
        n = (len(self._features) if n is None else n) or 1
        if n != self._divergence_of[0]:
            # (After a doubling the phase starts from the weights the last one
            # left: its relative entropy to a comparator is at most 2 ln(4n),
            # theory.rst.)
            self._divergence_of = n, (2.0 * log(4 * n) if self.U_ > self._first_U
                                      else log(2 * n))
        return self._divergence_of[1]

    def _after_trial(self):
        """After a trial counted: keep the rates it ran at (eq. 31's rate), and check
        the weights' press on the ball (U="auto")."""
        if self._tuning:
            self._last_rates = self._pending
        if self._run.t >= self._next_check:
            self._press()

    def _theory(self, n=None):
        """eta="theory": KW01 Theorem 3's rate of the rows seen (the rate object of
        ``partial_fit``, continued from the rows before), the intercept's by
        ``intercept_eta="auto"`` (its share of the budget that of an average
        one of the n features held, or of its own bound; TheoryRates)."""
        n = max(1, len(self._features) if n is None else n)
        return self._config.rates(self._U(), n, state=self._run.rate_state)

    def _pair(self):
        """(eta, intercept_eta) of the next trial of a row that does not lower
        them."""
        if self._eta() == "theory":
            return self._theory().current()
        return float(self._eta()), float(self._eta())

    def _limits(self):
        """``(weight_limit, bound_limit, growth)`` of the one-row trials at the
        rates of :meth:`_pair`: a row of a larger weight, or whose bound times its
        weight is larger (``TheoryRates.one_row_limits``), takes the general path,
        which lowers the rate first."""
        if self._eta() != "theory":
            return math.inf, math.inf, 0.0
        limits = self._theory().one_row_limits()
        if limits is None:
            return -math.inf, -math.inf, 0.0
        return self._run.rate_state[1][1], *limits

    def _U(self):
        """The U in use: ``U``, or ``U_`` for ``U="auto"``."""
        return self.U_

    def _start_scale(self):
        """``U_`` of an empty model: ``U``, or 1 for ``U="auto"`` (a stream gives
        no first batch to fit a scale on; the doubling raises it)."""
        self.U_ = 1.0 if self.U == "auto" else float(self.U)
        self._next_check = PRESS_ROWS if self._doubles() else math.inf

    def _doubles(self):
        """Whether ``U_`` doubles: ``U="auto"`` with eta="theory" (a numeric eta
        is a rate for one U) for a psi of ``doubling`` (EG±)."""
        return (self.U == "auto" and self._eta() == "theory"
                and PSI[self.psi].doubling)

    def _press(self):
        """``U="auto"`` of a psi of ``doubling`` (EG±), every few rows: double
        ``U_`` if a row of the weights has an l1 norm of at least ``PRESS * U_``
        (the scikit-learn estimators' rule), keeping the weights (EG±: omega = U
        (w+ - w-) stays, the same mass added to omega+ and omega-; see
        doc/user_guide/theory.rst for the bound it keeps), and eta="theory"'s
        bounds rescaled to the new U."""
        n = len(self._features)
        self._next_check = self._run.t + max(PRESS_ROWS, n // PRESS_SHARE)
        if self._loop is None or not n:
            return
        weights, U = self._loop.weights(), self.U_
        if np.max(np.sum(np.abs(weights), axis=1)) < PRESS * U:
            return
        theta = np.full(self._theta.shape, self._theta_start)
        theta[:, :n] = PSI[self.psi].inverse(weights, 2.0 * U, float(self.p))
        self.U_ = 2.0 * U
        if self._tuning:
            self._last_rates, self._phase_loss = (math.inf, math.inf), \
                self._run.cumulative_loss
            self._divergence_of = (0, 0.0)  # (its bound from a phase's start)
        self._run.rate_state = TheoryRates.rescaled(self._run.rate_state, self.U_)
        self._theta, self._intercept = theta, self._intercept.copy()
        self._build(None)

    def _lowered(self, x, target, w, first=-1):
        """eta="theory": the dict rows' trial of a row that they did not take at
        the rates held, at the rates lowered for it (if it raises the bound or the
        weight S: what partial_fit does), the rates kept if it is taken. The sums
        of the trial, or None with the rates as they were."""
        old, calls = self._rates, self._calls  # (the theory rates, untuned)
        # (The bound reads the row's values only, summed in the order of their
        # columns, new ones after those held, as the trial will hold them.)
        features, n = self._features, len(self._features)
        fresh = {name: n + q for q, name in enumerate(
            _canonical(name for name in x if name not in features))}
        values = np.array([value for _, value in sorted(
            (features.get(name, fresh.get(name)), value) for name, value in x.items())],
            dtype=np.float64)
        X = sp.csr_array((values, np.arange(len(x), dtype=np.int32), [0, len(x)]),
                         shape=(1, len(x)))
        rates = self._theory(n + len(fresh))  # (n once the row is in: its columns)
        rates.prepare(X, np.reshape(target, (1, -1)), None if w == 1.0
                      else np.full(1, w))
        rates.start_pass()
        pair = rates.rates(np.zeros(1, np.intp), self._run.t)
        if pair == old:
            return None  # (the general path takes it, for another reason)
        self._loop.set_rates(*pair)
        B, S, _, _ = rates.pending
        limits = calls.bound_limit, calls.weight_limit
        calls.bound_limit, calls.weight_limit = B, S
        sums = self._rows.learn(x, self._features, target, *self._trial_rates(pair),
                                self._run.t,
                                self._run.cumulative_loss, self._run.initial_loss, w,
                                first)
        if type(sums) is not tuple:
            self._loop.set_rates(*old)
            calls.bound_limit, calls.weight_limit = limits
            return None
        self._commit(rates)
        return sums

    def _commit(self, rates):
        """Keep the rates of a trial taken at ``rates`` (eta="theory")."""
        rates.finish_pass()
        self._run.rate_state = rates.state()
        self._loop.set_rates(*rates.current())
        self._rates = self._loop.rates
        self._calls.weight_limit, self._calls.bound_limit, _ = self._limits()
