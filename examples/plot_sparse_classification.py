"""
==================================================
On-line classification with few relevant features
==================================================

The same contrast as in regression holds for classifiers: with many features of
which few matter, the multiplicative EG± update learns from far fewer examples than
gradient descent (here, logistic regression trained by SGD).

Labels are drawn from a logistic model on 5 of 1000 binary features. We stream the
training examples in batches through ``partial_fit`` and measure, after each batch,
the accuracy and log loss on a held-out test set. ``GAClassifier(psi="identity",
phi="logistic")`` is exactly :class:`~sklearn.linear_model.SGDClassifier` with
``loss="log_loss"``, no penalty and a constant rate; ``psi="eg_pm"`` changes only the
parameterization.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import accuracy_score, log_loss

from sklearn_ga import GAClassifier

rng = np.random.RandomState(0)
n_train, n_test, n_features = 4000, 2000, 1000
u = np.zeros(n_features)
u[rng.choice(n_features, 5, replace=False)] = rng.choice([-1.5, 1.5], 5)


def sample(m):
    X = rng.choice([-1.0, 1.0], size=(m, n_features))
    return X, (rng.rand(m) < 1 / (1 + np.exp(-X @ u))).astype(int)


X_tune, y_tune = sample(n_train)
X_train, y_train = sample(n_train)
X_test, y_test = sample(n_test)

# %%
# Learning curves
# ---------------
# Each learner's rate is chosen among multiples of its theoretical rate
# (``eta="theory"``) by the smallest on-line loss ``cumulative_loss_`` on a separate
# tuning stream; EG± uses the l1 norm of the target as its scale ``U``.


def tuned_rate(params, factors=(0.25, 0.5, 1, 2, 4)):
    theory = GAClassifier(phi="logistic", **params)
    theory.partial_fit(X_tune[:1], y_tune[:1], classes=[0, 1])
    losses = {f: GAClassifier(phi="logistic", eta=f * theory.eta_, **params)
              .partial_fit(X_tune, y_tune, classes=[0, 1]).cumulative_loss_
              for f in factors}
    return min(losses, key=losses.get) * theory.eta_


learners = {
    "GD (psi='identity')": dict(psi="identity"),
    "EG± (psi='eg_pm', U=7.5)": dict(psi="eg_pm", U=7.5),
}
curves = {}
for name, params in learners.items():
    model = GAClassifier(phi="logistic", eta=tuned_rate(params), **params)
    seen, accuracy, loss = [], [], []
    for start in range(0, n_train, 100):
        model.partial_fit(X_train[start:start + 100], y_train[start:start + 100],
                          classes=[0, 1])
        seen.append(model.t_)
        accuracy.append(accuracy_score(y_test, model.predict(X_test)))
        loss.append(log_loss(y_test, model.predict_proba(X_test)))
    curves[name] = seen, accuracy, loss
    print(f"{name}: eta={model.eta_:.3g}")

# %%
# EG± reaches the accuracy of the true model after a few hundred examples and
# matches it in about half of the later batches; gradient descent is still far from
# it after the whole stream. EG±'s curve stays jagged: with noisy labels and a
# constant rate an on-line learner never stops moving (a smaller ``eta`` trades
# speed for stability), so a single batch can dip, and we print the mean and the
# best of the last ten batches (the last 1000 examples). The dotted lines show the
# best possible: the true model's probabilities.
p_true = 1 / (1 + np.exp(-X_test @ u))
bayes = accuracy_score(y_test, p_true > 0.5), log_loss(y_test, p_true)
print(f"true model: test accuracy {bayes[0]:.4f}, test log loss {bayes[1]:.3f}")
for name, (_, accuracy, loss) in curves.items():
    print(f"{name}, last 10 batches: test accuracy mean {np.mean(accuracy[-10:]):.4f}, "
          f"best {max(accuracy[-10:]):.4f}; test log loss mean "
          f"{np.mean(loss[-10:]):.3f}, best {min(loss[-10:]):.3f}")

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for name, (seen, accuracy, loss) in curves.items():
    axes[0].plot(seen, accuracy, label=name)
    axes[1].plot(seen, loss, label=name)
for ax, best, label in zip(axes, bayes, ["test accuracy", "test log loss"],
                           strict=True):
    ax.axhline(best, color="k", ls=":", label="true model")
    ax.set_xlabel("training examples seen")
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
axes[1].legend()
fig.tight_layout()
plt.show()
