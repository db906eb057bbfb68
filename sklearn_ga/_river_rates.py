"""The learning rates of the River learners (:mod:`sklearn_ga.river`): a number,
or ``eta="theory"``, KW01 Theorem 3's rate of the rows seen, lowered as
``partial_fit`` lowers it (:class:`~sklearn_ga._rates.TheoryRates`, the row
bounds of the kernel) when a row raises the bound."""

import math

import numpy as np
import scipy.sparse as sp

from ._kernel import canonical_order as _canonical
from ._rates import TheoryRates


class _Rates:
    """The rates of a River learner's trials (a mixin of ``_Learner``: its
    parameters, features, loop, one-row calls and dict rows)."""

    def _theory(self, n=0):
        """eta="theory": KW01 Theorem 3's rate of the rows seen (the rate object of
        ``partial_fit``, continued from the rows before), the intercept's rate
        equal to the weights' (``intercept_eta="eta"``, which the number of
        features, growing on a stream, does not change)."""
        return TheoryRates(self.psi, self.phi, self._U(), self.p, self.loss,
                           self.fit_intercept, "eta", n, state=self._rate_state,
                           estimator_name=type(self).__name__, update=self.update)

    def _pair(self):
        """(eta, intercept_eta) of the next trial of a row that does not lower
        them."""
        if self.eta == "theory":
            return self._theory().current()
        return float(self.eta), float(self.eta)

    def _limits(self):
        """``(weight_limit, bound_limit, growth)`` of the one-row trials at the
        rates of :meth:`_pair`: a row of a larger weight, or whose bound times its
        weight is larger (``TheoryRates.one_row_limits``), takes the general path,
        which lowers the rate first."""
        if self.eta != "theory":
            return math.inf, math.inf, 0.0
        limits = self._theory().one_row_limits()
        if limits is None:
            return -math.inf, -math.inf, 0.0
        return self._rate_state[1][1], *limits

    def _U(self):
        return float(self.U)

    def _lowered(self, x, target, w, first=-1):
        """eta="theory": the dict rows' trial of a row that they did not take at
        the rates held, at the rates lowered for it (if it raises the bound or the
        weight S: what partial_fit does), the rates kept if it is taken. The sums
        of the trial, or None with the rates as they were."""
        old, calls = self._rates, self._calls
        # (The bound reads the row's values only, summed in the order of their
        # columns, new ones after those held, as the trial will hold them.)
        features, n = self._features, len(self._features)
        fresh = {name: n + q for q, name in enumerate(
            _canonical(name for name in x if name not in features))}
        values = np.array([value for _, value in sorted(
            (features.get(name, fresh.get(name)), value) for name, value in x.items())])
        X = sp.csr_array((values, np.arange(len(x), dtype=np.int32), [0, len(x)]),
                         shape=(1, len(x)))
        rates = self._theory(len(self._features))
        rates.prepare(X, np.reshape(target, (1, -1)), None if w == 1.0
                      else np.full(1, w))
        rates.start_pass()
        pair = rates.rates(np.zeros(1, np.intp), self.t_)
        if pair == old:
            return None  # (the general path takes it, for another reason)
        self._loop.set_rates(*pair)
        B, S, _, _ = rates.pending
        limits = calls.bound_limit, calls.weight_limit
        calls.bound_limit, calls.weight_limit = B, S
        sums = self._rows.learn(x, self._features, target, *pair, self.t_,
                                self.cumulative_loss_, self._initial_loss_sum, w,
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
        self._rate_state = rates.state()
        self._loop.set_rates(*rates.current())
        self._rates = self._loop.rates
        self._calls.weight_limit, self._calls.bound_limit, _ = self._limits()
