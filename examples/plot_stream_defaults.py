"""
A stream learned with the defaults, against River and scikit-learn's SGD
========================================================================

River's ``TrumpApproval`` data set (it ships with River) is a stream of 1001 days:
six pollsters' approval figures, and the target, Donald Trump's approval rating.
Each day is first predicted, then learned (test-then-train, or *progressive
validation*): the mean absolute error of those predictions estimates the error on
days not yet seen.

The inputs are standardized on-line, by a scaler that learns the mean and variance
of each feature as the days come, as a stream requires: its first rows are zeros,
its early rows small. ``GARegressor``'s default rate, ``eta="theory"``, follows
them: it is KW01 Theorem 3's rate for the rows seen so far, lowered before each
row that needs it. We compare it with River's default linear regression and with
scikit-learn's ``SGDRegressor`` (``partial_fit``, its defaults), all three on the
same scaled rows, one row per call.
"""

import matplotlib.pyplot as plt
import numpy as np
from river import datasets, linear_model, preprocessing
from sklearn.linear_model import SGDRegressor

from sklearn_ga import GARegressor

scaler = preprocessing.StandardScaler()
river_model = linear_model.LinearRegression()
models = {"GARegressor()": GARegressor(), "SGDRegressor()": SGDRegressor()}
errors = {name: [] for name in ["GARegressor()", "SGDRegressor()", "River"]}
keys = None
for x, y in datasets.TrumpApproval():
    keys = keys or list(x)
    scaled = scaler.transform_one(x)  # (statistics of the days before this one)
    row = np.array([[scaled[key] for key in keys]])
    for name, model in models.items():
        prediction = model.predict(row)[0] if hasattr(model, "coef_") else 0.0
        errors[name].append(abs(prediction - y))
    errors["River"].append(abs(river_model.predict_one(scaled) - y))
    scaler.learn_one(x)
    scaled = scaler.transform_one(x)
    row = np.array([[scaled[key] for key in keys]])
    for model in models.values():
        model.partial_fit(row, np.array([y]))
    river_model.learn_one(scaled, y)

fig, ax = plt.subplots(figsize=(7, 4))
for name, values in errors.items():
    mean = np.cumsum(values) / np.arange(1, len(values) + 1)
    ax.plot(mean, label=f"{name}: MAE {mean[-1]:.3f}")
ax.set_xlabel("days seen")
ax.set_ylabel("progressive mean absolute error")
ax.set_yscale("log")
ax.set_title("TrumpApproval, one day per call, on-line standardized inputs")
ax.legend()
fig.tight_layout()

# %%
# The default rate was lowered a few times, early in the stream, as the scaled
# rows grew from zeros to their usual size; it stayed a rate for which the
# relative loss bound holds, so nothing diverged:
ga = models["GARegressor()"]
print(f"eta_ = {ga.eta_:.4g}, lowered {ga.n_eta_changes_} times; "
      f"intercept_eta_ = {ga.intercept_eta_:.4g}")
for name, values in errors.items():
    print(f"{name}: progressive MAE {np.mean(values):.3f}")
