"""What every parameterization psi is: the facts the package asks about it, and
the formulas each psi's class defines (see the package docstring)."""

from dataclasses import dataclass

import numpy as np

from .._codes import PsiCode


@dataclass(frozen=True, kw_only=True)
class Parameterization:
    """A parameterization function psi of the GA algorithm: Omega = psi(Theta),
    row by row.

    A psi is a subclass that defines its formulas as methods, each taking the
    hyperparameters ``U`` and ``p`` (read or not), over rows of ``theta``:

    * ``weights(theta, U, p)``: psi of each row;
    * ``potential(theta, U, p)``: P_psi of each row (psi = grad P_psi; for EG±,
      grad P_psi = psi / U); None for the geodesic psi, which are no gradients of
      a potential;
    * ``divergence(theta_tilde, theta, U, p)``: Delta_psi(theta_tilde, theta) of
      KW01 eq. (19) for each pair of rows (None for the geodesic psi);
    * ``inverse(omega, U, p)``: parameters theta with psi(theta) = omega for each
      row (finite), e.g. for weights given as a start (``coef_init``); raises
      ValueError saying what the range of psi is when omega lies outside it;
    * ``row_bounds(X, U, p)``: for each row x of X (dense or CSR), the bound that
      the default learning rate takes: x^T Dpsi(theta) x at its sup over theta
      (KW01 eq. 28), or where there is none a stand-in (see each psi). The
      compiled ``_row_bound`` (``_src/psi.pxi``) computes the same for the
      rates; these are its reference;
    * ``input_bound(X, U, p)``: b_{X,psi} of eq. (28), the largest row bound
      (a max over rows, so that it can be taken block by block); None where no
      bound follows from X alone (``no_input_bound`` says why);
    * ``same_as(p)``: the name of the psi this one equals at this ``p``, whose
      compiled loop then runs (the same model, at its speed), or None.

    Attributes
    ----------
    name : str
        Constructor string (``psi=name``).
    code : PsiCode
        Kernel dispatch code.
    description : str
        One line for docs and error messages.
    weight_range : str
        Where the weights lie, as the docs say it (``coef_init`` must lie there).
    hyperparameters : tuple of str
        Estimator parameters the formulas read (``"U"``, ``"p"``).
    constrained : bool
        Whether the weights live in a restricted set (simplex, l1 ball, positive
        orthant), so some targets cannot be fitted well.
    no_input_bound : str or None
        Why no b_{X,psi} follows from X, for error messages; None when
        ``input_bound`` is given.
    bound_text : str or None
        b_{X,psi} as the docs write it (``theory.input_bound``'s table), for a psi
        with ``input_bound``; None for the others, whose row says why there is none.
    growing_weights : bool
        Whether the weights are unbounded and x^T Dpsi x grows with them (EGU,
        Burg): the default rate takes its bound at weights of the size of the
        targets, and a run can diverge while its residuals stay bounded.
    weight_power : int
        The power of the weights in x^T Dpsi x where they grow: 1 for EGU
        (sum_j w_j x_j^2), 2 for Burg (sum_j w_j^2 x_j^2).
    no_natural_rate : str or None
        Why the default rate is not available with ``update="natural"``, for the
        error message; None when it is.
    geodesic : bool
        Whether the update moves the weights along geodesics of a manifold (KMWW
        eq. 10) rather than by the additive step of KW01 eq. (23).
    start : float
        Every parameter starts at this value (uniform weights on the manifold for
        the geodesic psi; -1, weights one, for burg).
    no_natural : str or None
        Why ``update="natural"`` (KMWW eq. 5) is not available for this psi, for
        the error message; None when it is.
    grid_U : bool
        Whether the CV estimators search ``U`` along with ``eta``.
    blocks : bool
        Whether the weights are the parameters (gradient descent), so that the CV
        estimators learn dense rows in blocks whose activations and updates are
        products of the rows with every configuration's weights (``block_run``).
    scale_norm : float or None
        The norm of each row of weights that ``U`` bounds (1: EG±'s l1 ball; 2:
        the sphere's radius), which ``U="auto"`` takes of a ridge fit; None for
        the psi that ignore ``U``.
    scale_fixed : bool
        Whether every row of weights has the norm ``U`` (the sphere's radius)
        rather than at most ``U``: ``U="auto"`` then takes the norm of the ridge
        fit that predicts best (its penalty chosen by cross-validation), since the
        weights must keep a radius above it on directions of noise.
    doubling : bool
        Whether ``U="auto"`` doubles ``U`` when the weights press on the ball,
        keeping them (EG±: the same mass added to omega+ and omega-).
    """

    name: str
    code: PsiCode
    description: str
    weight_range: str
    hyperparameters: tuple = ()
    constrained: bool
    no_input_bound: str | None = None
    bound_text: str | None = None
    growing_weights: bool = False
    weight_power: int = 1
    no_natural_rate: str | None = None
    geodesic: bool = False
    start: float = 0.0
    no_natural: str | None = None
    grid_U: bool = False
    blocks: bool = False
    scale_norm: float | None = None
    scale_fixed: bool = False
    doubling: bool = False

    # The geodesic psi have neither (their subclasses leave them None).
    potential = None
    divergence = None

    def __post_init__(self):
        if (self.input_bound is None) == (self.no_input_bound is None):
            raise TypeError(f"psi={self.name!r}: give exactly one of input_bound and "
                            "no_input_bound.")
        if (self.input_bound is None) != (self.bound_text is None):
            raise TypeError(f"psi={self.name!r}: a psi with input_bound says its "
                            "formula in bound_text (and only such a psi).")

    def input_bound(self, X, U, p):
        return float(np.max(self.row_bounds(X, U, p)))

    def same_as(self, p):
        return None


class Unbounded:
    """Mixin of the psi for which no b_{X,psi} follows from X alone."""

    input_bound = None
