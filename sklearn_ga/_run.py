"""The learning run of a model: what it carries from one call to the next.

A :class:`Run` is owned by one model (an estimator's ``BaseGA._the_run``, a River
learner's; the River learners keep their counters and rate state in it) and holds the
compiled loop kept between calls, the rate object's state, the counters of the
trials seen, the sums of the averaged trials, the one-row path built on them, and
the lock that lets one call train at a time. Every path of a call — a batch's
epochs, one pass, one row (:mod:`sklearn_ga._one_row`), the CV grid's selected
configuration — reads and commits it here, and the fitted counters (``t_``,
``cumulative_loss_``, ``path_measure_``, ``n_iter_``) are read from it, so that a
copy, a pickle or a failed call (``_state.fit_context`` restores
:meth:`Run.snapshot`) has one object to get right.
"""

from ._state import TrainingLock

# The run's counters, by the fitted attribute that gives each out.
COUNTERS = {"t_": "t", "cumulative_loss_": "cumulative_loss",
            "path_measure_": "path", "n_iter_": "n_iter"}


class Run:
    """The state of one learning run.

    Attributes
    ----------
    kept : KeptLoop or None
        The compiled loop of the last call (:class:`~sklearn_ga._state.KeptLoop`),
        None before the first call and in a copy (which builds its own).
    rate_state : tuple or None
        The rate object's state after the last call (``Rates.state``), from which
        the next call's rates go on.
    t, cumulative_loss, initial_loss, path : int, float, float, float
        The trials seen, the sum of their on-line losses, the loss of Theta_1 on
        them (the reference of the runaway check) and the path measure; None
        before the first call.
    n_iter : int or None
        The epochs of the last call.
    averages : tuple or None
        The sums of the averaged trials while no loop holds them (a copy's, until
        its next call builds a loop).
    one_row : OneRowPath, False or None
        The one-row path of the current state: None until built, False where the
        state allows none (:mod:`sklearn_ga._one_row`).
    lock : TrainingLock
        One call trains the run at a time.
    """

    __slots__ = ("kept", "rate_state", "t", "cumulative_loss", "initial_loss", "path",
                 "n_iter", "averages", "one_row", "lock")

    # What a call may change, and a failed call puts back (not the lock).
    _STATE = __slots__[:-1]

    def __init__(self):
        self.kept = self.rate_state = self.averages = self.one_row = None
        self.t = self.cumulative_loss = self.path = self.n_iter = None
        self.initial_loss = 0.0
        self.lock = TrainingLock()

    def snapshot(self):
        """The run's state, for :meth:`restore` after a call that raises."""
        return tuple(getattr(self, name) for name in self._STATE)

    def restore(self, snapshot):
        for name, value in zip(self._STATE, snapshot, strict=True):
            setattr(self, name, value)

    def changed(self):
        """The model changed outside the one-row path (a call, a parameter or an
        assignment): its one-row path, built on the state before, is dropped."""
        self.one_row = None

    def __getstate__(self):
        # Neither the kept loop (the model pickles its terms) nor the one-row path
        # and the lock: a copy builds its own.
        return {name: getattr(self, name) for name in self._STATE
                if name not in ("kept", "one_row")}

    def __setstate__(self, state):
        self.__init__()
        for name, value in state.items():
            setattr(self, name, value)


class RunCounter:
    # A fitted counter (t_, cumulative_loss_, path_measure_, n_iter_): the run's.
    # (No docstring: autodoc would list it besides the Attributes sections.)

    def __set_name__(self, owner, name):
        self.name, self.field = name, COUNTERS[name]

    def __get__(self, model, owner=None):
        if model is None:
            return self
        run = model.__dict__.get("_run")
        value = None if run is None else getattr(run, self.field)
        if value is None:
            raise AttributeError(
                f"{type(model).__name__!r} object has no attribute {self.name!r}")
        return value

    def __set__(self, model, value):
        setattr(model._the_run(), self.field, value)

    def __delete__(self, model):
        raise AttributeError(f"{self.name} cannot be deleted; call fit to start over.")
