"""
=====================================================
Implicit updates stay stable where explicit ones blow
=====================================================

The GA update ``theta <- theta - eta (y_hat - y) x`` (KW01 eq. 23) approximates the
minimizer of ``Delta_psi(theta, theta~) + eta L(y, phi(psi(theta~) x))`` by taking
the residual at the *old* parameters. ``update="implicit"`` solves the exact
condition of KW01 eq. (22), with the residual at the *new* parameters. For gradient
descent on the square loss the solution is
``theta - eta (y_hat - y) x / (1 + eta ||x||^2)``: the step can never overshoot the
example, whatever ``eta``.

On standardized data we sweep ``eta``. The explicit rule diverges above some
``eta0`` (the estimator raises; we plot those rates as missing); the implicit rule
keeps a bounded on-line loss up to ``100 eta0`` and beyond, for gradient descent and
for the p-norm algorithm alike. The right panel follows the running on-line loss of
the implicit rule at ``100 eta0`` next to the explicit rule at its best rate.
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_ga import GARegressor

rng = np.random.default_rng(0)
m, n = 2000, 10
X = rng.standard_normal((m, n))
y = X @ rng.normal(size=n) + 0.3 * rng.standard_normal(m)
y = (y - y.mean()) / y.std()

etas = 0.01 * 2.0 ** np.arange(15)


def mean_online_loss(**params):
    """Cumulative on-line square loss per trial, or NaN if the run diverged."""
    try:
        model = GARegressor(**params).partial_fit(X, y)
    except ValueError:
        return np.nan
    return model.cumulative_loss_ / m


fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for psi, shade in [("identity", "C0"), ("pnorm", "C1")]:
    explicit = np.array([mean_online_loss(psi=psi, p=3.0, eta=eta) for eta in etas])
    implicit = np.array([mean_online_loss(psi=psi, p=3.0, eta=eta, update="implicit")
                         for eta in etas])
    eta0 = etas[np.isfinite(explicit)].max()
    far = mean_online_loss(psi=psi, p=3.0, eta=100 * eta0, update="implicit")
    print(f"psi={psi}: explicit diverges above eta0 = {eta0:.3g} (loss per trial "
          f"there {explicit[etas == eta0][0]:.3g}); implicit at 100 eta0: {far:.3g}")
    left.loglog(etas, explicit, "o--", color=shade, label=f"{psi}, explicit")
    left.loglog(etas, implicit, "s-", color=shade, label=f"{psi}, implicit")
    left.axvline(eta0, color=shade, linewidth=0.5)
left.axhline(0.5, color="gray", linestyle=":", label="predicting 0")
left.set_ylim(5e-3, 1e2)  # near eta0 the explicit loss is astronomically large
left.set_xlabel("learning rate eta")
left.set_ylabel("on-line square loss per trial")
left.set_title("Diverged explicit runs are missing")
left.legend(fontsize=8)

losses = np.array([mean_online_loss(eta=eta) for eta in etas])
eta0, best = etas[np.isfinite(losses)].max(), etas[np.nanargmin(losses)]
for label, params in [(f"explicit, its best eta = {best:.3g}", {"eta": best}),
                      (f"implicit, 100 eta0 = {100 * eta0:.3g}",
                       {"eta": 100 * eta0, "update": "implicit"})]:
    model, running = GARegressor(**params), []
    for rows in np.array_split(np.arange(m), 100):
        model.partial_fit(X[rows], y[rows])
        running.append(model.cumulative_loss_ / model.t_)
    right.semilogy(np.linspace(m / 100, m, 100), running, label=label)
right.set_xlabel("trials")
right.set_ylabel("running on-line loss per trial")
right.set_title("Gradient descent")
right.legend(fontsize=8)
fig.tight_layout()
plt.show()
