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
from river import (
    datasets,
    evaluate,
    linear_model,
    metrics,
    optim,
    preprocessing,
)

from sklearn_ga.river import GAClassifier, GARegressor


def curve(dataset, model, metric, step):
    """The metric after every ``step`` events of a progressive
    validation."""
    checkpoints = evaluate.iter_progressive_val_score(
        dataset, preprocessing.StandardScaler() | model, metric,
        step=step)
    name = metric.__class__.__name__
    points = [(c["Step"], c[name].get()) for c in checkpoints]
    return [t for t, _ in points], [value for _, value in points]


def plot_curves(models, dataset, metric, step, title, ylabel):
    """The progressive ``metric`` of each model on ``dataset``.

    The legend goes below the axes, where it hides no curve; the
    first curve is drawn wide and light, so that another one that
    coincides with it stays visible."""
    fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    styles = [{"linewidth": 5, "alpha": 0.4},
              {"linestyle": "--"}, {}]
    for (name, model), style in zip(models.items(), styles,
                                    strict=True):
        steps, values = curve(dataset, model, metric.clone(), step)
        ax.plot(steps, values, label=name, **style)
        print(f"{name}: {ylabel} {values[-1]:.4f}")
    ax.set(xlabel="events", ylabel=ylabel, title=title)
    fig.legend(loc="outside lower center")
    return ax


# %%
# Classification: Phishing
# ------------------------

river_logistic = linear_model.LogisticRegression(
    optimizer=optim.SGD(0.1), intercept_lr=0.1)
classifiers = {
    "River LogisticRegression(SGD(0.1), intercept_lr=0.1)":
        river_logistic,
    "GAClassifier(eta=0.1): GD": GAClassifier(eta=0.1),
    "GAClassifier(psi='eg_pm'): EG±, its defaults":
        GAClassifier(psi="eg_pm"),
}
plot_curves(classifiers, datasets.Phishing(), metrics.Accuracy(),
            25, "Phishing", "progressive accuracy")
plt.show()

# %%
# GD on the logistic loss is River's logistic regression at the same rates for the
# weights and the intercept: the same curve, event by event (the dashed curve runs
# inside the wide one). EG± keeps the l1 norm of its weights at most ``U``, which
# its defaults (``U="auto"``, ``eta="theory"``) double from 1 while the weights
# press on the ball.
#
# Regression: TrumpApproval
# -------------------------

eg_pm = GARegressor(psi="eg_pm")
regressors = {
    "River LinearRegression()": linear_model.LinearRegression(),
    "GARegressor(eta=0.1): implicit GD": GARegressor(eta=0.1),
    "GARegressor(psi='eg_pm'): EG±, its defaults": eg_pm,
}
ax = plot_curves(regressors, datasets.TrumpApproval(),
                 metrics.MAE(), 20, "TrumpApproval",
                 "progressive MAE")
ax.set_yscale("log")
plt.show()

# %%
# The learners also keep the papers' cumulative loss, the sum of the losses of the
# predictions made before each update (for ``phi="identity"`` half the squared
# error): its average is an honest estimate of the error on unseen events.

average = eg_pm.cumulative_loss_ / eg_pm.t_
print(f"EG±: {eg_pm.t_} trials, average on-line loss "
      f"{average:.4f}, U_ = {eg_pm.U_:g}")
