"""The inputs of the River learners (:mod:`sklearn_ga.river`): a row as a dict, a
frame's names and values, a Series' values, a missing label; each refused with a
clear error that names what is wrong."""

import narwhals.stable.v2 as nw
import numpy as np


def _as_dict(x):
    """The features x as a dict: any Mapping (or object with ``items``, as a pandas
    Series), read once."""
    if type(x) is dict:
        return x
    items = getattr(x, "items", None)
    if items is None or isinstance(x, (str, bytes)):
        raise TypeError(
            f"x must be a mapping of feature names to numbers (a dict); got a "
            f"{type(x).__name__}."
        )
    return dict(items())


def frame_values(X, learner):
    """``(names, values)`` of a frame that River takes (pandas, polars, ...: read
    through narwhals, a dependency of River): its column names and its values as a
    C-contiguous float64 array; a clear error for a column that is not numeric or
    holds a missing or infinite value."""
    try:
        frame = nw.from_native(X, eager_only=True)
    except nw.exceptions.DuplicateError:
        raise ValueError("X has columns of the same name; name each feature once.") \
            from None
    except TypeError:
        raise TypeError(
            f"X must be a DataFrame (pandas, polars, ...); got a {type(X).__name__}."
        ) from None
    names = list(frame.columns)
    for name, dtype in frame.schema.items():
        if not (dtype.is_numeric() or dtype == nw.Boolean):
            raise ValueError(
                f"{learner} takes numbers, but column {name!r} of X is of type "
                f"{dtype}. Encode it first (e.g. with River's "
                "preprocessing.OneHotEncoder); the model was left as it was."
            )
    values = np.ascontiguousarray(frame.to_numpy(), dtype=np.float64)
    finite = np.isfinite(values).all(axis=0)
    if not finite.all():
        raise ValueError(
            "Input X contains NaN or infinity (or a missing value) in column "
            f"{names[int(np.argmin(finite))]!r}; {learner} needs finite feature "
            "values. The model was left as it was."
        )
    return names, values


def series_values(y):
    """The values of a Series that River takes (or of any sequence), as a list."""
    try:
        return nw.from_native(y, series_only=True).to_list()
    except TypeError:
        return list(y)


def _missing(label):
    """Whether a label is a missing value: None, or a float NaN (a missing label
    read from a file)."""
    return label is None or (isinstance(label, (float, np.floating))
                             and label != label)
