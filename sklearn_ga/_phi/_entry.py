"""What every transfer function phi is: the facts the package asks about it, the
formulas each phi's class defines (see the package docstring), and the checks of
targets against its range."""

from dataclasses import dataclass

import numpy as np

from .._codes import PhiCode

# Softmax targets are rows of the simplex up to this error in their sums: float32
# probabilities sum to 1 only to about 1e-7.
SIMPLEX_TOLERANCE = 1e-6


def log_of(y):
    """ln y, -inf at 0 without a warning (the inverse of exp and softmax)."""
    with np.errstate(divide="ignore"):
        return np.log(y)


@dataclass(frozen=True, kw_only=True)
class TransferFunction:
    """A transfer function phi with its potential and matching loss.

    A phi is a subclass that defines its formulas as methods, over activations A
    and targets Y of shape (m, k):

    * ``transfer(A)``: the predictions phi(a);
    * ``potential(A)``: P_phi of each entry (for softmax, of each row), with
      phi = grad P_phi (KW01 eq. 2);
    * ``loss(Y, A)``: the matching loss L_phi(y, phi(a)) of each entry (for
      softmax, of each row), computed from the activations (KW01 eq. 16), exact
      at the edges of the range where phi(a) saturates;
    * ``prediction_loss(Y, Y_hat)``: the same loss from the predictions (None for
      sign, whose predictions do not determine the loss);
    * ``inverse(Y)``: an activation a with phi(a) = y (for softmax, the one with
      ``a = ln y``; None for sign);
    * ``probability(A)``: the classifier's probabilities from activations, of
      each output (one-vs-rest, normalized by the classifier), or of each row for
      a rowwise phi; None when phi gives none;
    * ``log_probability(A)``: the log of ``probability`` where it has a more
      accurate form (softmax), else None.

    Attributes
    ----------
    name : str
        Constructor string (``phi=name``).
    code : PhiCode
        Kernel dispatch code.
    low, high : float
        Range of the targets.
    closed : bool
        Whether the end points belong to the range (arctan's do not).
    regression, classification : bool
        Which estimators accept it.
    c : float or None
        c_phi of KW01 eq. (29): ``sup ||y - y_hat||^2 / (2 L_phi(y, y_hat))``
        (``inf`` when unbounded, ``None`` for sign, which has no matching loss in
        the sense of eq. 2).
    rowwise : bool
        Whether phi acts on whole rows (softmax): its targets are rows of the
        probability simplex, one output per class, and its loss one value per row.
    threshold : bool
        Whether phi is a threshold (sign): its derivative is 0, so there is no
        implicit update (KW01 eq. 22), no square loss to descend, no clipping.
    """

    name: str
    code: PhiCode
    low: float
    high: float
    closed: bool = True
    regression: bool
    classification: bool
    c: float | None
    rowwise: bool = False
    threshold: bool = False

    # The formulas a phi may lack (see the class docstring).
    prediction_loss = None
    inverse = None
    probability = None
    log_probability = None

    def sample_loss(self, Y, A):
        """Matching loss summed over outputs: one value per sample."""
        return np.sum(self.loss(Y, A), axis=1)

    def activation_bounds(self, Y):
        """[low, high] for activations whose predictions phi(a) lie in [-Y, Y].

        Clipping predictions to [-Y, Y] (GA^Y, KW01 §4) clips the activations of a
        coordinate-wise increasing phi to this interval.
        """
        low = self.inverse(np.array(-Y)) if -Y > self.low else -np.inf
        high = self.inverse(np.array(Y)) if Y < self.high else np.inf
        return float(low), float(high)

    def range_text(self):
        if self.rowwise:
            return "rows of the probability simplex (non-negative, summing to 1)"
        left, right = ("[", "]") if self.closed else ("(", ")")
        return f"{left}{self.low:.6g}, {self.high:.6g}{right}"

    def range_violation(self, values):
        """None if all values lie in the range of phi (softmax: along the last
        axis), else what is wrong with them, for an error message."""
        if self.rowwise:
            columns = values.shape[-1] if values.ndim >= 1 else 0
            if columns < 2:
                return f"has {columns} column(s), not one per class (at least 2)"
            if np.any(values < 0):
                return f"has negative values (down to {values.min():.6g})"
            sums = values.sum(axis=-1).ravel()
            worst = sums[np.argmax(np.abs(sums - 1.0))]
            if abs(worst - 1.0) > SIMPLEX_TOLERANCE:
                return (f"rows must sum to 1 within {SIMPLEX_TOLERANCE:g}, but a row "
                        f"sums to {worst:.6g}")
            return None
        return None if np.all(self.inside(values)) else (
            f"has values in [{values.min():.6g}, {values.max():.6g}]")

    def inside(self, values):
        """Elementwise, whether values (an array, or one number) lie in the range of a
        coordinate-wise phi (NaN does not)."""
        if self.closed:
            return (values >= self.low) & (values <= self.high)
        return (values > self.low) & (values < self.high)

    def in_range(self, values):
        """Whether all values lie in the range of phi (softmax: along the last axis)."""
        return self.range_violation(values) is None

    def check_targets(self, Y):
        """Raise ValueError if targets Y (m, k) lie outside the range of phi."""
        violation = self.range_violation(Y)
        if violation is not None:
            raise ValueError(
                f"phi={self.name!r} predicts values in {self.range_text()}, but y "
                f"{violation}. Rescale y into that range or choose another phi "
                "(phi='identity' accepts any real target)."
            )
