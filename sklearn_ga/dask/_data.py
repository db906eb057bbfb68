"""The partitions of dask data as the learners read them, and the scores of a
model on dask data from sums over the partitions (:mod:`sklearn_ga.dask`)."""

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier


def block(X, y, sample_weight):
    """A partition as the learners read it: X as given (an ndarray, a CSR matrix,
    or a DataFrame, whose feature names the model keeps), y and the weights as
    ndarrays."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    return X, np.asarray(y), None if sample_weight is None else np.asarray(
        sample_weight)


def labels(y):
    """The labels of a partition's y."""
    return np.unique(np.asarray(y))


def length(X):
    """The rows of a partition's X."""
    return X.shape[0]


def held_rows(rows, fraction):
    """The rows a partition of ``rows`` rows holds out for early stopping: the
    last ``floor(fraction * rows)``."""
    return int(fraction * rows)


def split(part, fraction):
    """``(train, held)``: a partition without, and with only, its last
    :func:`held_rows` rows (slices, in order; ``held`` is None at 0)."""
    held = held_rows(part[0].shape[0], fraction)
    if not held:
        return part, None
    cut = part[0].shape[0] - held
    rows = [None if v is None else getattr(v, "iloc", v) for v in part]  # (by position)
    return tuple(None if v is None else v[:cut] for v in rows), tuple(
        None if v is None else v[cut:] for v in rows)


def partitions(X, y, sample_weight, pieces=1):
    """The partitions of (X, y, sample_weight) in row order, each a triple of
    delayed values (the last None without weights), and their rows (None where
    unknown): of dask arrays (rows chunked as X), of dask DataFrames or Series
    (one partition each), or of in-memory data cut into ``pieces`` contiguous
    ones. The triples are the collections' own chunks, so that persisted data
    are read where they lie, with no task of their own; :func:`block` reads
    them."""
    if not any(dask.is_dask_collection(v) for v in (X, y, sample_weight)):
        X = X if sp.issparse(X) else np.asarray(X)
        y = np.asarray(y)
        edges = np.linspace(0, X.shape[0], min(pieces, X.shape[0]) + 1).astype(int)
        return [tuple(None if v is None else dask.delayed(v[a:b]) for v in (
            X, y, None if sample_weight is None else np.asarray(sample_weight)))
            for a, b in zip(edges[:-1], edges[1:], strict=True)], list(np.diff(edges))
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D; got a dask array of shape {X.shape}.")
        X = X.rechunk({1: -1})
        parts = [X.to_delayed()[:, 0], _blocks(y, X.chunks[0], "y"),
                 _blocks(sample_weight, X.chunks[0], "sample_weight")]
        rows = [None if np.isnan(r) else int(r) for r in X.chunks[0]]
    elif hasattr(X, "to_delayed") and hasattr(X, "npartitions"):
        parts = [X.to_delayed()]
        for name, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None and getattr(value, "npartitions",
                                             None) != X.npartitions:
                raise ValueError(
                    f"{name} must be a dask DataFrame or Series partitioned as X "
                    f"({X.npartitions} partitions); got {type(value).__name__}.")
            parts.append(None if value is None else value.to_delayed())
        rows = [None] * X.npartitions
    else:
        raise TypeError(
            "X must be a dask array or dask DataFrame when y or sample_weight is "
            f"one; got {type(X).__name__}.")
    return [(parts[0][i], parts[1][i], None if parts[2] is None else parts[2][i])
            for i in range(len(parts[0]))], rows


def _blocks(value, chunks, name):
    """The delayed blocks of ``value`` (a dask or in-memory array) with rows
    chunked as X's (``chunks``)."""
    if value is None:
        return None
    if not isinstance(value, da.Array):
        value = np.asarray(value)
        value = da.from_array(value, chunks=(chunks,) + value.shape[1:])
    if value.shape[0] != sum(chunks):
        raise ValueError(f"{name} has {value.shape[0]} rows but X has "
                         f"{sum(chunks)}.")
    blocks = value.rechunk((chunks,) + (-1,) * (value.ndim - 1)).to_delayed()
    return blocks if blocks.ndim == 1 else blocks[:, 0]


def blockwise(function, X, n_features):
    """``function`` (a prediction method) of dask X, partition by partition: a
    dask array of the partitions' results in order."""
    if isinstance(X, da.Array):
        X = X.rechunk({1: -1})
        parts, lengths = X.to_delayed()[:, 0], X.chunks[0]
        sample = function(np.zeros((1, n_features)))
    else:
        parts = X.to_delayed()
        lengths = [np.nan] * len(parts)
        sample = function(X._meta_nonempty.iloc[:1])
    return da.concatenate([
        da.from_delayed(dask.delayed(function)(part), (rows,) + sample.shape[1:],
                        dtype=sample.dtype)
        for part, rows in zip(parts, lengths, strict=True)])


def score_terms(estimator, part):
    """A partition's terms of the score: its weight, the weighted mean of y and
    the sum of squares about it, and the squared errors (a regressor's, per
    output); or its weight and that of the right labels (a classifier's)."""
    if part is None:
        return None
    X, y, sample_weight = block(*part)
    if not X.shape[0]:
        return None
    w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    predicted = estimator.predict(X)
    if is_classifier(estimator):
        return w.sum(), float(w @ (predicted == y))
    Y = y.reshape(y.shape[0], -1)
    mean = w @ Y / w.sum()
    return (w.sum(), mean, w @ (Y - mean) ** 2,
            w @ (Y - predicted.reshape(Y.shape)) ** 2)


def combined_score(terms, classifier):
    """The score of every partition's terms (:func:`score_terms`): accuracy, or
    R^2 averaged over the outputs, the means and sums of squares combined in
    partition order as Chan, Golub & LeVeque combine them (no sum of y^2
    cancels)."""
    terms = [term for term in terms if term is not None]
    if classifier:
        return sum(term[1] for term in terms) / sum(term[0] for term in terms)
    weight, mean, spread, errors = terms[0]
    for w, m, s, e in terms[1:]:
        delta, total = m - mean, weight + w
        mean = mean + delta * (w / total)
        spread = spread + s + delta**2 * (weight * w / total)
        errors, weight = errors + e, total
    # As r2_score: an output of constant y scores 1 if predicted exactly, else 0.
    scores = np.where(spread > 0, 1 - errors / np.where(spread > 0, spread, 1),
                      np.where(errors == 0, 1.0, 0.0))
    return float(np.mean(scores))
