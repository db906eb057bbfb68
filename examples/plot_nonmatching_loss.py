"""
==========================================================
Why matching losses: logistic neuron, square vs log loss
==========================================================

A single logistic neuron ``y_hat = 1 / (1 + exp(-w . x))`` can be trained on-line
with the gradient of its *matching* loss, the relative entropy, whose step is
``eta (y_hat - y) x`` (KW01 Figure 5), or with the gradient of the square loss,
``eta (y_hat - y) y_hat (1 - y_hat) x`` (the GA_L algorithm of KW01 eq. 35;
``loss="square"``). The square loss of a logistic neuron is not convex in ``w`` and
can have exponentially many local minima (KW01 §1): where the neuron saturates on
the wrong side, ``y_hat (1 - y_hat)`` is tiny and so is the step.

The hard sequence: 1000 trials whose labels follow the *reversed* concept push the
weights far into the wrong saturated region, then 2000 trials follow the true
concept ``y = [x_1 - x_2 + x_3 > 0]``. We count the mistakes each learner makes
after the switch, for a few learning rates, and plot them along the trials: the
matching loss recovers within a few dozen trials, the square loss keeps erring for
hundreds.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit

from sklearn_ga import GARegressor

rng = np.random.default_rng(0)
n_features, n_reversed, n_true = 20, 1000, 2000
w_star = np.zeros(n_features)
w_star[:3] = [1.0, -1.0, 1.0]
X = rng.choice([-1.0, 1.0], size=(n_reversed + n_true, n_features))
y = (X @ w_star > 0).astype(float)
y[:n_reversed] = 1.0 - y[:n_reversed]  # the adversarial prefix


def online_predictions(model):
    """Predict each example before learning it (the on-line protocol)."""
    predictions = np.empty(len(y))
    for t in range(len(y)):
        predictions[t] = expit(model.coef_ @ X[t]) if t else 0.5
        model.partial_fit(X[t:t + 1], y[t:t + 1])
    return predictions


etas = [0.3, 1.0, 3.0]
mistakes = {}
print(f"mistakes in the {n_true} trials after the switch")
print(f"{'eta':>6} {'matching loss':>14} {'square loss':>12}")
for eta in etas:
    for loss in ["matching", "square"]:
        model = GARegressor(phi="logistic", eta=eta, loss=loss, fit_intercept=False)
        wrong = (online_predictions(model) > 0.5) != (y > 0.5)
        mistakes[eta, loss] = np.cumsum(wrong[n_reversed:])
    print(f"{eta:6.1f} {mistakes[eta, 'matching'][-1]:14d} "
          f"{mistakes[eta, 'square'][-1]:12d}")

fig, ax = plt.subplots(figsize=(6.5, 4))
for eta, shade in zip(etas, ["C0", "C1", "C2"], strict=True):
    ax.plot(mistakes[eta, "matching"], color=shade, label=f"matching, eta={eta}")
    ax.plot(mistakes[eta, "square"], color=shade, linestyle="--",
            label=f"square, eta={eta}")
ax.set_xlabel("trials after the switch to the true concept")
ax.set_ylabel("cumulative mistakes")
ax.set_title("Logistic neuron after 1000 adversarial trials")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
