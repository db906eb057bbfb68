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

On standardized data we sweep ``eta``. We call a rate stable if its on-line loss
per trial stays below that of predicting 0 (0.5, the targets having unit variance),
and ``eta0`` the largest stable rate of the grid. Above ``eta0`` the explicit rule
blows up: its loss exceeds that of predicting 0 and soon reaches values such as
1e281 that are still finite; further up the estimator raises, as it detects only
non-finite values (we plot those rates as missing). The implicit rule keeps a
bounded on-line loss up to ``100 eta0`` and beyond, for gradient descent and for the
p-norm algorithm alike. The right panel follows the running on-line loss of the
implicit rule at ``100 eta0`` next to the explicit rule at its best rate.
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
ZERO_LOSS = 0.5 * np.mean(y**2)  # loss per trial of predicting 0: 0.5


def mean_online_loss(**params):
    """Cumulative on-line square loss per trial, or NaN if partial_fit raised."""
    try:
        model = GARegressor(**params).partial_fit(X, y)
    except ValueError:
        return np.nan
    return model.cumulative_loss_ / m


def largest_stable(losses):
    """The largest rate whose loss per trial is below that of predicting 0. A finite
    loss is not enough: partial_fit raises only on NaN or inf, and a run that has
    blown up can end at 1e281."""
    return etas[np.nan_to_num(losses, nan=np.inf) < ZERO_LOSS].max()


fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for psi, shade in [("identity", "C0"), ("pnorm", "C1")]:
    explicit = np.array([mean_online_loss(psi=psi, p=3.0, eta=eta) for eta in etas])
    implicit = np.array([mean_online_loss(psi=psi, p=3.0, eta=eta, update="implicit")
                         for eta in etas])
    eta0 = largest_stable(explicit)
    far = mean_online_loss(psi=psi, p=3.0, eta=100 * eta0, update="implicit")
    at = np.flatnonzero(etas == eta0)[0]
    above = ", ".join("raised" if np.isnan(loss) else f"{loss:.3g}"
                      for loss in explicit[at + 1:at + 3])
    print(f"psi={psi}: explicit stable up to eta0 = {eta0:.3g} (loss per trial "
          f"{explicit[at]:.3g}; at 2 and 4 eta0: {above}); implicit at 100 eta0: "
          f"{far:.3g}")
    left.loglog(etas, explicit, "o--", color=shade, label=f"{psi}, explicit")
    left.loglog(etas, implicit, "s-", color=shade, label=f"{psi}, implicit")
    left.axvline(eta0, color=shade, linewidth=0.5)
left.axhline(0.5, color="gray", linestyle=":", label="predicting 0")
left.set_ylim(5e-3, 1e2)  # above eta0 the explicit loss grows to 1e281 and more
left.set_xlabel("learning rate eta")
left.set_ylabel("on-line square loss per trial")
left.set_title("Diverged explicit runs are missing")
left.legend(fontsize=8)

losses = np.array([mean_online_loss(eta=eta) for eta in etas])
eta0, best = largest_stable(losses), etas[np.nanargmin(losses)]
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
