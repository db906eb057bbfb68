"""The configuration of a learning run: the validated parameters, resolved once.

:class:`Configuration` is what every path of a run (``fit``, ``partial_fit``, the
one-row calls, the CV grid's configurations, the River learners) reads instead of
the estimator's parameter strings: the ψ and φ entries of the registries, the
ψ whose compiled loop runs, the kernel codes of ``update`` and ``loss``, the
activation bounds of ``Y``. It is the one door through which ``psi`` and ``eta``
reach the compiled loop (:meth:`Configuration.trial_loop`) and the one place that
builds a run's rate object (:meth:`Configuration.rates`).
"""

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ._codes import LossCode, UpdateCode
from ._kernel import TrialLoop
from ._phi import PHI, TransferFunction
from ._psi import PSI, Parameterization
from ._rates import InvScaling, Rates, TheoryRates

# The parameters a configuration is built from, with the value a learner that has
# no such parameter (River's) runs with.
SETTINGS = {"psi": "identity", "phi": "identity", "eta": 0.01,
            "intercept_eta": "eta", "U": 1.0, "p": 2.0, "fit_intercept": True,
            "update": "explicit", "loss": "matching", "Y": None, "alpha": 0.0,
            "learning_rate": "constant", "power_t": 0.25}


@dataclass(frozen=True, eq=False)
class Configuration:
    """The settings of a run, checked for combinations the papers do not define.

    Build it with :meth:`of` (from an estimator's validated parameters) or
    :meth:`build`. ``settings`` holds the parameters as given, in the order of
    ``SETTINGS``; the other fields are resolved from them.
    """

    name: str
    settings: tuple
    psi: Parameterization
    loop_psi: Parameterization  # (the psi whose loop runs: pnorm at p = 2 is GD)
    phi: TransferFunction
    update_code: int
    loss_code: int
    clip: tuple = field(default=(-np.inf, np.inf))

    @classmethod
    def of(cls, estimator):
        """The configuration of ``estimator``'s parameters (validated already)."""
        return cls.build(type(estimator).__name__, **{
            name: getattr(estimator, name, default)
            for name, default in SETTINGS.items()})

    @classmethod
    def build(cls, name, **given):
        """The configuration of parameters ``given`` (others at ``SETTINGS``) for
        an estimator called ``name`` in messages.

        Raises ValueError for combinations the papers do not define.
        """
        values = {**SETTINGS, **given}
        s = SimpleNamespace(**values)
        psi, phi = PSI[s.psi], PHI[s.phi]
        if s.update != "explicit" and psi.geodesic:
            raise ValueError(
                f"psi={s.psi!r} moves the weights along geodesics (KMWW eq. 10), "
                f"its own update rule; update={s.update!r} applies to the additive "
                "psi. Use update='explicit' with this psi.")
        if s.update == "implicit" and (s.loss != "matching" or phi.threshold):
            raise ValueError(
                f"{name}(update='implicit') solves KW01 eq. (22), the minimizer of "
                "eq. (24) for the matching loss of a continuous increasing phi; it is "
                f"not available with phi={s.phi!r} and loss={s.loss!r}. Use "
                "update='explicit' or 'natural', or loss='matching' with another phi.")
        loop_psi = PSI[psi.same_as(float(s.p)) or s.psi]
        if s.update == "natural" and loop_psi.no_natural is not None:
            raise ValueError(
                "update='natural' needs the Jacobian of psi (KMWW eq. 5), which "
                f"{loop_psi.no_natural}")
        if s.loss == "square" and phi.threshold:
            raise ValueError(
                f"loss='square' with phi={s.phi!r} never updates: the derivative "
                "of a threshold is 0. Use loss='matching' (the Perceptron) or "
                "phi='tanh'.")
        if s.alpha > 0 and psi.start != 0.0 and not psi.geodesic:
            raise ValueError(
                f"alpha={s.alpha!r} pulls the parameters toward 0 (Theta scaled by "
                f"1 - eta alpha), which is not the start Theta_1 = {psi.start!r} of "
                f"psi={s.psi!r}. Use alpha=0.")
        if s.alpha > 0 and psi.geodesic:
            raise ValueError(
                f"alpha={s.alpha!r} pulls the parameters toward their start by the "
                "additive step eta alpha (Theta - Theta_1), which psi="
                f"{s.psi!r}, moving along geodesics, does not take. Use alpha=0, "
                "or an additive psi.")
        clip = (-np.inf, np.inf)
        if s.Y is not None:
            if phi.rowwise or phi.threshold:
                raise ValueError(
                    f"Y clips each prediction to [-Y, Y] (GA^Y, KW01 §4), which "
                    f"phi={s.phi!r} does not allow (its predictions are "
                    f"{phi.range_text()}). Use Y=None.")
            clip = phi.activation_bounds(float(s.Y))
        return cls(name, tuple(values.values()), psi, loop_psi, phi,
                   UpdateCode["UPDATE_" + s.update.upper()],
                   LossCode["LOSS_" + s.loss.upper()], clip)

    def __getattr__(self, name):
        # The parameters as given: config.eta, config.psi_name, ...
        index = _INDEX.get(name.removesuffix("_name"))
        if index is None:
            raise AttributeError(name)
        return self.settings[index]

    def __eq__(self, other):
        # (The same parameters resolve to the same configuration.)
        return (isinstance(other, Configuration) and self.name == other.name
                and self.settings == other.settings)

    def __hash__(self):
        return hash((self.name, self.settings))

    def __reduce__(self):
        # (Pickled as its parameters: a copy resolves them in its own registries.)
        return Configuration.restored, (self.name, self.settings)

    @classmethod
    def restored(cls, name, settings):
        """The configuration of ``settings`` (those of a pickled one)."""
        # (Not strict: settings added since a pickle was made take their defaults.)
        return cls.build(name, **dict(zip(SETTINGS, settings, strict=False)))

    @property
    def clips(self):
        """Whether ``Y`` clips the predictions (GA^Y)."""
        return self.Y is not None

    def key(self, U, averaging):
        """What a trial loop is built from besides its parameters: a loop kept for
        one key is continued only by a run of the same key."""
        return self.settings, float(U), bool(averaging)

    @property
    def lazy_csr(self):
        """Whether a CSR run of this psi writes theta back at its end (see
        :class:`~sklearn_ga._passes.Chunks`)."""
        return not self.loop_psi.blocks

    def initial_parameters(self, shape):
        """Theta_1: zeros, or the start of a geodesic psi (uniform weights)."""
        return np.full(shape, self.psi.start)

    def intercept_rate(self, eta):
        """The intercept's constant rate beside a numeric ``eta``: ``eta`` itself
        (the algorithm of the papers, and SGD's), or ``intercept_eta`` if it is a
        number."""
        rule = self.intercept_eta
        return eta if rule in ("auto", "eta") else float(rule)

    def trial_loop(self, theta, intercept, eta, U, *, terms=None, intercept_eta=None,
                   averages=None, average=False):
        """The compiled loop over parameters (theta, intercept), updated in place,
        at the constant rates ``eta`` and ``intercept_eta`` (by default
        :meth:`intercept_rate`) where a run is given no rates of its own; an
        averaging one continues from ``averages`` (``TrialLoop.averages``)."""
        if intercept_eta is None:
            intercept_eta = self.intercept_rate(eta)
        return TrialLoop(self.loop_psi.code, self.phi.code, theta, intercept, eta,
                         float(U), float(self.p), bool(self.fit_intercept),
                         self.update_code, self.loss_code, *self.clip, terms,
                         alpha=float(self.alpha), intercept_eta=intercept_eta,
                         averages=averages, average=bool(average))

    def rates(self, U, n_features, state=None):
        """The rate object of a call (:mod:`sklearn_ga._rates`): constant for a
        numeric ``eta``; for "theory", KW01 Theorem 3's rate following the rows,
        continued from ``state`` (a last call's ``Rates.state``); either scaled by
        the schedule of ``learning_rate="invscaling"``."""
        if self.eta == "theory":
            rates = TheoryRates(self.psi_name, self.phi_name, U, self.p, self.loss,
                                self.fit_intercept, self.intercept_eta, n_features,
                                state=state, estimator_name=self.name,
                                update=self.update)
        else:
            rates = Rates(self.eta, self.intercept_rate(float(self.eta)))
        if self.learning_rate == "invscaling":
            return InvScaling(rates, self.power_t)
        return rates

    def rate_text(self, rates):
        """The rates in use, or those of the trial that failed (``Rates.failed``)."""
        eta, intercept_eta = rates.failure or rates.current()
        text = f"eta={eta:.6g}" if self.eta != "theory" else f"eta='theory': {eta:.6g}"
        if self.fit_intercept and intercept_eta != eta:
            text += f", intercept_eta={intercept_eta:.6g}"
        if rates.failure is not None:
            text += " at that trial"
        elif isinstance(rates, InvScaling):
            text += f", each divided by t^{rates.power_t:g}"
        return text

    def divergence(self, trial, rates,
                   cause="the parameters or the predictions stopped being finite"):
        """The error of a run that diverged at ``trial``, at the rates of a rate
        object (or a numeric eta)."""
        advice = ("scale the inputs (e.g. with StandardScaler), or use a numeric "
                  "eta smaller than this one" if self.eta == "theory" else
                  "use a smaller eta (a trial's step is eta times its sample "
                  "weight), or scale the inputs (e.g. with StandardScaler)")
        rate = (self.rate_text(rates) if isinstance(rates, Rates)
                else f"eta={rates:.6g}")
        return ValueError(
            f"{self.name} diverged at trial {trial} ({rate}, psi={self.psi_name!r}, "
            f"phi={self.phi_name!r}): {cause}. To fix it, {advice}; the model was "
            "left as it was before this call.")


_INDEX = {name: i for i, name in enumerate(SETTINGS)}
