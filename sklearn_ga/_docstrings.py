"""Docstring parts written from the registries, so that the lists of choices in
the estimators' docs cannot drift from what they accept, and paragraphs that
several docstrings share: a docstring names a part by its token (``[psi
choices]``, ``[search attributes]``, ...) and :func:`fill_docstring` writes it in."""

import textwrap

from ._phi import CLASSIFICATION_PHI, PHI, REGRESSION_PHI
from ._psi import PSI


def _choices(names):
    return "{" + ", ".join(f'"{name}"' for name in names) + "}"


def _listing(parts, indent):
    """``parts`` joined in one paragraph, wrapped at 88 columns under ``indent``."""
    return textwrap.fill("; ".join(parts) + ".", width=88 - indent,
                         break_on_hyphens=False).replace(
        "\n", "\n" + " " * indent)


def _table(header, rows, indent):
    """An RST simple table of a header and (name, text) rows under ``indent``."""
    rows = [header, *rows]
    width = max(12, *(len(name) for name, _ in rows))
    rule = "=" * width + " " + "=" * max(len(text) for _, text in rows)
    lines = [f"{name:<{width}} {text}" for name, text in rows]
    return ("\n" + " " * indent).join([rule, lines[0], rule, *lines[1:], rule])


def _parts(indent):
    return {
        "[psi choices]": _choices(PSI),
        "[regression phi choices]": _choices(
            name for name in PHI if name in REGRESSION_PHI),
        "[one-output regression phi choices]": _choices(
            name for name in PHI if name in REGRESSION_PHI and not PHI[name].rowwise),
        "[classification phi choices]": _choices(
            name for name in PHI if name in CLASSIFICATION_PHI),
        "[all phi choices]": _choices(PHI),
        "[bregman psi choices]": _choices(
            name for name, entry in PSI.items() if entry.potential is not None),
        "[additive psi choices]": _choices(
            name for name, entry in PSI.items() if not entry.geodesic),
        "[psi descriptions]": _listing(
            [f'``"{entry.name}"``: {entry.description}' for entry in PSI.values()],
            indent),
        # b_{X,psi} of KW01 eq. (28), or why there is none, for the additive psi.
        "[input bound table]": _table(
            ("psi", "b_{X,psi}"),
            [(entry.name, entry.bound_text or f"none: {entry.no_input_bound}")
              for entry in PSI.values() if not entry.geodesic], indent),
        "[psi ranges]": _listing(
            [f'{entry.weight_range} for ``"{entry.name}"``'
             for entry in PSI.values()], indent),
    }


# Paragraphs of numpydoc that two estimators share (the plain ones, the CV ones),
# written once: a line that holds only the token takes the paragraph, at the
# token's indent.
BLOCKS = {
    "[run attributes]": """\
path_measure_ : float
    The path measure sum_t D(w_t, w_{t+1}) over all trials since :meth:`fit`,
    with D half the squared distance of a step (KMWW eq. 8) in the geometry of
    the update: the length of the geodesic step for ``psi="sphere"`` and
    ``"simplex"``, ``||Delta theta||_2`` for the other psi (explicit,
    implicit and natural updates); the intercepts' steps count as a
    coordinate of their own. The input of
    :func:`~sklearn_ga.theory.kmww_theorem6` and
    :func:`~sklearn_ga.theory.kmww_theorem8`. NaN with ``alpha > 0``, whose
    pull toward Theta_1 is not measured.
validation_scores_ : ndarray of shape (`n_iter_`,) or None
    The validation score after each epoch of the last :meth:`fit`, with
    ``early_stopping=True``; None otherwise, and after :meth:`partial_fit`.
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit, when X has string feature names.""",
    "[search grid parameters]": """\
etas : int or array-like of float, default=9
    Learning rates to try. An int ``q`` means ``np.logspace(-4, 0, q)``, for
    ``psi="eg_pm"`` divided by U^2 at each U (HKW Theorem 2's rate scales as
    1 / U^2, which the intercepts, gradient-descent weights, do not take: they
    learn at the rate given).
Us : array-like of float or "auto", default="auto"
    Scales to try: EG±'s (``psi="eg_pm"``) or the sphere's radius
    (``psi="sphere"``); ignored by the other ``psi``. ``"auto"``: for EG±,
    1/4, 1 and 4 times the ``U_`` that ``U="auto"`` of
    :class:`GARegressor` chooses from the first call's data; for the
    sphere, that radius alone (its weights keep the norm U).
p : float, default=2.0
    Exponent of ``psi="pnorm"``, >= 2.
fit_intercept : bool, default=True
    Whether to learn intercepts.""",
    "[search run parameters]": """\
n_jobs : int, default=None
    Number of threads that learn the grid, each a share of the configurations
    on the same chunks of rows (the compiled loops run without the GIL).
    ``None`` means 1 unless in a :func:`joblib.parallel_config` context;
    ``-1`` means all processors. The results do not depend on it.
max_iter : int, default=1000
    The most epochs of the finishing ``fit`` (see above); 1: no finishing.
tol : float or None, default=1e-3
    The finishing ``fit``'s ``tol`` (see :class:`GARegressor`).
random_state : int, RandomState instance or None, default=None
    Seed of the finishing ``fit``'s shuffling.""",
    "[search attributes]": """\
eta_, U_ : float
    The selected learning rate and scale (``U_`` is 1.0 unless psi is
    "eg_pm" or "sphere").
coef_, intercept_, theta_ : ndarray
    The selected configuration's weights, intercepts and parameters.
cumulative_loss_ : float
    The selected configuration's cumulative on-line matching loss.
t_ : int
    Number of trials seen.
n_iter_ : int
    1 for the grid's pass, plus the epochs of the finishing ``fit``.
cv_results_ : dict of ndarray
    ``params``, ``param_eta``, ``param_U``, ``progressive_loss`` (per
    configuration; ``inf`` if it diverged), ``mean_test_loss`` (the selection
    criterion; ``inf`` if the configuration diverged in a fold or in the pass
    over all the data) and ``rank_test_loss``.
best_index_ : int
    Index of the selected configuration in ``cv_results_``.
thetas_, intercepts_, progressive_loss_ : ndarray
    The state of every configuration, held by the estimator's grid for
    :meth:`partial_fit`: read-only views (``theta_`` and ``intercept_`` are
    rows of the first two until ``fit`` finishes the selected
    configuration), updated in place by later calls; assign new arrays to
    start from other parameters or losses.
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit, when X has string feature names.""",
}


def fill_docstring(cls):
    """Write the registries' parts into the docstrings of ``cls`` and of its
    methods (a class decorator); a token's indent is that of its line."""
    for owner in (cls, *vars(cls).values()):
        doc = getattr(owner, "__doc__", None)
        if not doc or "[" not in doc:
            continue
        lines = []
        for line in doc.split("\n"):
            indent = len(line) - len(line.lstrip())
            if line.strip() in BLOCKS:
                lines.extend(" " * indent + row if row else row
                             for row in BLOCKS[line.strip()].split("\n"))
                continue
            for token, text in _parts(indent).items():
                line = line.replace(token, text)
            lines.append(line)
        try:
            owner.__doc__ = "\n".join(lines)
        except (AttributeError, TypeError):  # (a property's or builtin's)
            pass
    return cls
