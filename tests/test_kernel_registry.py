"""The compiled loop computes the registries' formulas, and only for known codes.

Each psi and phi is written twice: in NumPy (the registries, which ``coef_`` and
``sklearn_ga.losses`` use) and in the compiled loop (its weights, and the losses it
sums into ``cumulative_loss_``). These tests hold the two to rounding at ordinary
points and at the edges: saturated predictions, targets a few ulp inside the range,
parameters whose exponentials or powers would overflow unshifted.
"""

import numpy as np
import pytest
from sklearn_ga._kernel import TrialLoop

from sklearn_ga import PHI, PSI
from sklearn_ga._codes import LossCode, PhiCode, PsiCode, Status, UpdateCode
from sklearn_ga.losses import matching_loss

HALF_PI = np.pi / 2
BELOW_ONE = np.nextafter(1.0, 0.0)
ULP_AT_ONE = 2.0**-52

# (target, activation) rows of one trial; softmax's are rows of the simplex.
LOSS_CASES = {
    "identity": [(0.3, -2.0), (1e8, -1e8), (1.0, 1.0 + 2.0**-30), (-5.5, 0.25)],
    "logistic": [
        (0.3, 0.7), (1.0, -3.0), (0.0, 2.5),  # ordinary
        (1.0, -40.0), (0.0, 40.0), (0.0, 800.0), (1.0, -3e9),  # saturated, wrong way
        (1.0, 40.0), (0.0, -30.0),  # saturated, right way
        (BELOW_ONE, 40.0), (1.0 - 3 * ULP_AT_ONE, -20.0), (4e-323, 5.0),  # edges
    ],
    "tanh": [
        (0.5, 0.3), (-0.2, -1.5), (-1.0, 20.0), (1.0, -400.0), (1.0, 20.0),
        (BELOW_ONE, 15.0), (-BELOW_ONE, -3.0), (1.0 - 3 * ULP_AT_ONE, 2.0),
    ],
    "arctan": [
        (0.2, -1.0), (-0.7, 0.4), (1.5, 30.0), (1.5, -30.0),
        (-1.5707963267, -3e9), (-1.5707963267, 3e9), (1.5707963267, 2e10),
        (np.nextafter(HALF_PI, 0.0), 1e12), (-np.nextafter(HALF_PI, 0.0), 5.0),
        (0.0, 1e300), (1.0, 1e-300),
    ],
    "exp": [
        (2.0, 0.5), (0.0, -3.0), (0.0, 5.0), (1e-300, 3.0), (5e-324, -700.0),
        (100.0, np.log(100.0) + 1e-6), (1e10, 1.0), (3.0, 600.0),
    ],
    "softmax": [
        ([1.0, 0.0, 0.0], [2.0, -1.0, 0.5]),
        ([0.2, 0.3, 0.5], [1e3, -1e3, 0.0]),
        ([1.0, 0.0], [-40.0, 40.0]),
        ([0.0, 1.0, 0.0], [0.0, 800.0, -800.0]),
        ([BELOW_ONE, ULP_AT_ONE / 2, 0.0], [3.0, -2.0, 1e5]),
        ([0.5, 0.5], [1e10, 1e10 + 1.0]),
    ],
    "sign": [(1.0, -2.0), (-1.0, 0.5), (1.0, 3.0), (-1.0, -1e300), (1.0, 0.0)],
}


def one_trial(psi, phi, theta, intercept, x, y, U=1.0, p=2.0):
    """The loop's loss of one trial at eta = 0 (nothing moves), and the loop."""
    loop = TrialLoop(psi, phi, theta, intercept, 0.0, U, p, False)
    status, trials, loss = loop.run_dense(
        np.atleast_2d(x), np.atleast_2d(y), np.empty(0), np.zeros(1, np.intp)
    )
    assert (status, trials) == (Status.OK, 1)
    return loss, loop


def test_every_phi_has_cases():
    assert set(LOSS_CASES) == set(PHI)


@pytest.mark.parametrize(
    "phi, y, a",
    [(phi, y, a) for phi, cases in LOSS_CASES.items() for y, a in cases],
)
def test_loop_loss_is_matching_loss(phi, y, a):
    # The activation is the intercept alone (theta = 0): exactly a.
    y, a = np.atleast_1d(y).astype(float), np.atleast_1d(a).astype(float)
    k = a.size
    loss, _ = one_trial(PsiCode.PSI_IDENTITY, PHI[phi].code, np.zeros((k, 1)),
                        a.copy(), [[1.0]], y)
    expected = matching_loss(y[None, :], activation=a[None, :], phi=phi)[0]
    assert np.isfinite(expected)
    np.testing.assert_allclose(loss, expected, rtol=1e-12, atol=1e-300)


THETAS = {
    "ordinary": np.array([[0.5, -1.25, 2.0, 0.0], [3.0, 3.0, -0.5, 1e-3]]),
    "large": np.array([[700.0, -650.0, 12.0, 699.0], [-1e4, 3e3, -1e4, 0.25]]),
    "tiny": np.array([[1e-200, -3e-250, 5e-300, 0.0], [2e-310, 1e-320, 0.0, 0.0]]),
    "uniform": np.full((2, 4), -3.0),
}
# psi=exp has no normalizer: its weights e^theta overflow where theta does.
EXP_LIMIT = 700.0


@pytest.mark.parametrize(
    "psi, p",
    [(psi, 2.0) for psi in PSI] + [("pnorm", 3.0), ("pnorm", 24.95)],
)
@pytest.mark.parametrize("case", list(THETAS))
def test_loop_weights_are_registry_weights(psi, p, case):
    theta = THETAS[case].copy()
    if psi == "exp":
        theta = np.clip(theta, -EXP_LIMIT, EXP_LIMIT)
    if psi == "burg":  # (its parameters are negative)
        theta = -np.abs(theta) - 1e-300
    U = 2.5
    loop = TrialLoop(PSI[psi].code, PhiCode.PHI_IDENTITY, theta.copy(), np.zeros(2),
                     0.0, U, p, False)
    expected = PSI[psi].weights(theta, U, p)
    np.testing.assert_allclose(loop.weights(), expected, rtol=1e-12,
                               atol=1e-12 * np.max(np.abs(expected)))


def test_loop_prediction_uses_registry_weights():
    # One trial's activation is psi(theta) . x + b with the weights above.
    theta = THETAS["ordinary"].copy()
    x = np.array([[0.5, -2.0, 1.0, 3.0]])
    expected = PSI["softmax"].weights(theta, 1.0, 2.0) @ x[0] + [0.1, -0.2]
    loss, _ = one_trial(PsiCode.PSI_SOFTMAX, PhiCode.PHI_IDENTITY, theta,
                        np.array([0.1, -0.2]), x, [[0.0, 0.0]])
    np.testing.assert_allclose(loss, 0.5 * np.sum(expected**2), rtol=1e-13)


@pytest.mark.parametrize(
    "codes, name",
    [
        ((max(PsiCode) + 1, PhiCode.PHI_IDENTITY, UpdateCode.UPDATE_EXPLICIT,
          LossCode.LOSS_MATCHING), "psi"),
        ((-1, PhiCode.PHI_IDENTITY, UpdateCode.UPDATE_EXPLICIT, LossCode.LOSS_MATCHING),
         "psi"),
        ((PsiCode.PSI_EXP, max(PhiCode) + 1, UpdateCode.UPDATE_EXPLICIT,
          LossCode.LOSS_MATCHING), "phi"),
        ((PsiCode.PSI_EXP, PhiCode.PHI_TANH, max(UpdateCode) + 1,
          LossCode.LOSS_MATCHING), "update"),
        ((PsiCode.PSI_EXP, PhiCode.PHI_TANH, UpdateCode.UPDATE_NATURAL,
          max(LossCode) + 1), "loss"),
    ],
)
def test_unknown_codes_are_rejected(codes, name):
    psi, phi, update, loss = codes
    theta = np.zeros((1, 3))
    with pytest.raises(ValueError, match=f"unknown {name} code"):
        TrialLoop(psi, phi, theta, np.zeros(1), 0.1, 1.0, 2.0, True,
                  update=update, loss=loss)


@pytest.mark.parametrize("psi", list(PsiCode))
@pytest.mark.parametrize("phi", list(PhiCode))
def test_every_known_code_pair_is_accepted(psi, phi):
    k = 2 if phi == PhiCode.PHI_SOFTMAX else 1
    TrialLoop(psi, phi, np.ones((k, 3)), np.zeros(k), 0.1, 1.0, 3.0, True)
