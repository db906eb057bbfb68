"""
=====================================================
Tuning eta and U: one lock-step pass vs GridSearchCV
=====================================================

:class:`~sklearn_ga.GARegressorCV` learns the whole grid of learning rates ``eta`` and
EG± scales ``U`` in one pass over the data and selects by *progressive validation*:
the cumulative on-line matching loss, each prediction made before its example is
learned (the criterion HKW §V tune by). ``GridSearchCV`` fits every configuration
once per fold and scores on held-out folds.

Both search the same grid on a sparse target (3 relevant features of 500). We print
the chosen values, the losses and the time each search took, and plot the
progressive loss over the grid.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV

from sklearn_ga import GARegressor, GARegressorCV

rng = np.random.default_rng(0)
X = rng.choice([-1.0, 1.0], size=(4000, 500))
y = np.tanh(X[:, 0] - X[:, 1] + 0.5 * X[:, 2] + 0.05 * rng.normal(size=4000))

etas = np.logspace(-3, 0, 10)
Us = [1.0, 3.0, 10.0]

started = time.perf_counter()
search_cv = GARegressorCV(psi="eg_pm", phi="tanh", etas=etas, Us=Us).fit(X, y)
time_cv = time.perf_counter() - started

started = time.perf_counter()
grid = GridSearchCV(
    GARegressor(psi="eg_pm", phi="tanh", max_iter=1, tol=None, shuffle=False),
    {"eta": etas, "U": Us}, cv=5, error_score=np.nan,
).fit(X, y)
time_grid = time.perf_counter() - started

print(f"GARegressorCV: eta={search_cv.eta_:.3g}, U={search_cv.U_:g}, "
      f"progressive loss {search_cv.cumulative_loss_:.1f}, {time_cv:.2f} s")
print(f"GridSearchCV : eta={grid.best_params_['eta']:.3g}, "
      f"U={grid.best_params_['U']:g}, held-out R^2 {grid.best_score_:.3f}, "
      f"{time_grid:.2f} s ({time_grid / time_cv:.0f}x longer)")

# %%
# The progressive loss over the grid: too small a rate learns slowly, too large a
# rate overshoots (or diverges: infinite loss, not drawn). U below the target's
# l1 norm (2.5) cannot represent it at all.
losses = search_cv.cv_results_["progressive_loss"].reshape(len(Us), len(etas))
fig, ax = plt.subplots(figsize=(6, 4))
for U, row in zip(Us, losses, strict=True):
    ax.loglog(etas, np.where(np.isfinite(row), row, np.nan), marker="o",
              label=f"U = {U:g}")
ax.axvline(search_cv.eta_, color="grey", linestyle=":", label="selected eta")
ax.set_xlabel("eta")
ax.set_ylabel("cumulative on-line matching loss")
ax.set_title("Progressive validation of EG± on a sparse target")
ax.legend()
fig.tight_layout()
plt.show()
