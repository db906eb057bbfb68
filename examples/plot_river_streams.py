"""
=====================================================
Progressive validation on River's streams
=====================================================

:mod:`sklearn_ga.river` makes the GA learners River estimators: they learn one dict
at a time and fit in River's pipelines and in ``evaluate.progressive_val_score``,
which predicts each event before learning it. Here they run on two streams that River
ships: ``Phishing`` (1250 web pages, 9 features, is it phishing?) and
``TrumpApproval`` (1001 days of approval polls, 6 features), each behind River's
on-line ``StandardScaler``, against River's own linear models.

The default ``GAClassifier`` takes exactly the steps of River's
``LogisticRegression`` (gradient descent on the logistic loss); EG± (``psi="eg_pm"``)
changes only how the parameters become weights. The regressor's default update is
the implicit rule of KW01 eq. (22), stable at any rate.
"""

import matplotlib.pyplot as plt
from river import datasets, evaluate, linear_model, metrics, optim, preprocessing

from sklearn_ga.river import GAClassifier, GARegressor


def curve(dataset, model, metric, step):
    """The metric after every ``step`` events of a progressive validation."""
    checkpoints = evaluate.iter_progressive_val_score(
        dataset, preprocessing.StandardScaler() | model, metric, step=step)
    points = [(c["Step"], c[metric.__class__.__name__].get()) for c in checkpoints]
    return [t for t, _ in points], [value for _, value in points]


# %%
# Classification: Phishing
# ------------------------

classifiers = {
    "River LogisticRegression(SGD(0.1), intercept_lr=0.1)":
        linear_model.LogisticRegression(optimizer=optim.SGD(0.1), intercept_lr=0.1),
    "GAClassifier(eta=0.1): GD": GAClassifier(eta=0.1),
    "GAClassifier(psi='eg_pm', U=5)": GAClassifier(psi="eg_pm", U=5.0),
}
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for name, model in classifiers.items():
    steps, accuracy = curve(datasets.Phishing(), model, metrics.Accuracy(), 25)
    left.plot(steps, accuracy, label=name)
    print(f"{name}: accuracy {accuracy[-1]:.4f}")
left.set(xlabel="events", ylabel="progressive accuracy", title="Phishing")
left.legend()

# %%
# GD on the logistic loss is River's logistic regression at the same rates for the
# weights and the intercept: the same curve, event by event. EG± keeps the l1 norm of
# its weights at most ``U``.
#
# Regression: TrumpApproval
# -------------------------

eg_pm = GARegressor(psi="eg_pm", U=40.0)
regressors = {
    "River LinearRegression()": linear_model.LinearRegression(),
    "GARegressor(eta=0.1): implicit GD": GARegressor(eta=0.1),
    "GARegressor(psi='eg_pm', U=40)": eg_pm,
}
for name, model in regressors.items():
    steps, error = curve(datasets.TrumpApproval(), model, metrics.MAE(), 20)
    right.plot(steps, error, label=name)
    print(f"{name}: MAE {error[-1]:.4f}")
right.set(xlabel="events", ylabel="progressive MAE", title="TrumpApproval",
          yscale="log")
right.legend()
fig.tight_layout()
plt.show()

# %%
# The learners also keep the papers' cumulative loss, the sum of the losses of the
# predictions made before each update (for ``phi="identity"`` half the squared
# error): its average is an honest estimate of the error on unseen events.

print(f"EG±: {eg_pm.t_} trials, average on-line loss "
      f"{eg_pm.cumulative_loss_ / eg_pm.t_:.4f}")
