"""
EG± on an uncentred target: scikit-learn's diabetes data
=========================================================

The diabetes data (it ships with scikit-learn) has ten standardized features and a
target, a measure of disease progression, of mean 152: far from 0, where every
learner's intercept starts. EG± needs ``U``, a bound on the l1 norm of the weights:
we take that of a ridge fit.

Theorem 3's rate for EG± scales like ``1 / U^2``; an intercept learning at that
rate (``intercept_eta="eta"``, the algorithm of the papers) stays near 0, and the
model is worse than predicting the mean. The default, ``intercept_eta="auto"``,
gives the intercept the share of the rate's budget of one more feature, and EG±
does as well as gradient descent and ridge regression.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_ga import GARegressor

X, y = load_diabetes(return_X_y=True)
U = np.abs(make_pipeline(StandardScaler(), Ridge()).fit(X, y)[-1].coef_).sum()
folds = KFold(5, shuffle=True, random_state=0)
candidates = {
    "ridge": Ridge(),
    "GD": GARegressor(random_state=0),
    f"EG± (U = {U:.0f})": GARegressor(psi="eg_pm", U=U, random_state=0),
    "EG±, intercept at\nthe weights' rate": GARegressor(
        psi="eg_pm", U=U, intercept_eta="eta", random_state=0),
}
scores = {name: cross_val_score(make_pipeline(StandardScaler(), model), X, y,
                                cv=folds).mean()
          for name, model in candidates.items()}
for name, score in scores.items():
    print(f"{name.replace(chr(10), ' ')}: cross-validated R^2 {score:.3f}")

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.barh(list(scores), [max(score, -1.0) for score in scores.values()],
        color=["grey", "C0", "C1", "C3"])
ax.axvline(0, color="black", linewidth=0.8)
ax.set_xlabel("cross-validated R² (clipped at -1)")
ax.set_title("Diabetes, raw target (mean 152), standardized inputs")
fig.tight_layout()
