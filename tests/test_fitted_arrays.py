"""Every fitted array is read-only: what a model learned changes only through its
methods. Writing into theta_, a CV grid's progressive_loss_ (which steers the next
selection) or classes_ would change the model behind its state's back."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression

from sklearn_ga import GAClassifier, GAClassifierCV, GARegressor, GARegressorCV

X_REG, Y_REG = make_regression(60, 5, random_state=0)
X_CLS, Y_CLS = make_classification(60, 5, random_state=0)

ESTIMATORS = [
    (GARegressor(), X_REG, Y_REG),
    (GARegressor(psi="eg_pm", average=True), X_REG, Y_REG),
    (GAClassifier(), X_CLS, Y_CLS),
    (GAClassifier(phi="softmax", psi="softmax"), X_CLS, Y_CLS),
    (GARegressorCV(), X_REG, Y_REG),
    (GAClassifierCV(), X_CLS, Y_CLS),
]


def fitted_arrays(model):
    """The model's public fitted attributes that are arrays, by name."""
    names = [name for name in dir(model) if name.endswith("_")
             and not name.startswith("_") and hasattr(model, name)]
    return {name: getattr(model, name) for name in names
            if isinstance(getattr(model, name), np.ndarray)}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("how", ["fit", "partial_fit"])
@pytest.mark.parametrize(("model", "X", "y"), ESTIMATORS,
                         ids=[repr(case[0]) for case in ESTIMATORS])
def test_fitted_arrays_are_read_only(model, X, y, how, sparse):
    X = sp.csr_matrix(X) if sparse else X
    if how == "fit":
        model.fit(X, y)
    else:
        extra = {"classes": np.unique(y)} if hasattr(model, "predict_proba") or (
            "Classifier" in type(model).__name__) else {}
        model.partial_fit(X, y, **extra).partial_fit(X, y)
    arrays = fitted_arrays(model)
    assert {"coef_", "intercept_"} <= set(arrays)
    for name, array in arrays.items():
        with pytest.raises(ValueError, match="read-only"):
            array.flat[0] = array.flat[0]
        assert not array.flags.writeable, name
