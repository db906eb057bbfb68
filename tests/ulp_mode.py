"""The ulp mode of the tests: NumPy's transcendental functions rounded otherwise.

On CPUs with AVX-512, NumPy evaluates ``exp``, ``log``, ``power`` and their kin with
SIMD kernels whose results differ from C's libm in the last bit for a few percent
of arguments. A test that passes with one rounding only tests the rounding: where
two paths must agree bit for bit they must run the same code, and where a test
compares with an independent oracle it must allow what any correct rounding gives.

With ``SKLEARN_GA_ULP_MODE=1`` in the environment, ``tests/conftest.py`` calls
:func:`install` before any test module is imported: the functions below, as
attributes of the ``numpy`` module (which is how the library, SciPy and
scikit-learn call them), then move a few percent of their float64 results by one
ulp. Which results move is a function of the arguments' bits, as a CPU's kernel is
a function of its inputs: the same arguments give the same result in every call.
Exact results (integers, zeros) and non-finite ones stay as they are, as the SIMD
kernels keep them. The ``**`` operator and a ufunc's methods (``reduce``,
``outer``, ...) are not covered: they reach the ufunc without the module attribute.
"""

import importlib

import numpy as np

FUNCTIONS = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "power",
             "float_power", "tanh", "sinh", "cosh", "arctan", "arctanh", "sin",
             "cos", "tan", "logaddexp")
# The share of results moved, in units of 1/1024 (about 3%).
SHARE = 32
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _bits(value, shape):
    """The float64 bits of an argument, broadcast to the result's shape."""
    as_float = np.asarray(value, dtype=np.float64)
    return np.broadcast_to(as_float, shape).view(np.uint64)


def _perturb(result, arguments):
    """Move the chosen entries of ``result`` (a float64 array or scalar) one ulp."""
    values = np.asarray(result)
    key = np.zeros(values.shape, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for argument in arguments:
            key ^= _bits(argument, values.shape)
            key *= _MIX  # (wraps around: a hash of the arguments' bits)
    chosen = ((key >> np.uint64(40)) % np.uint64(1024)) < SHARE
    chosen &= np.isfinite(values) & (values != np.round(values))
    if not chosen.any():
        return result
    up = ((key >> np.uint64(20)) & np.uint64(1)).astype(bool)
    moved = np.nextafter(values, np.where(up, np.inf, -np.inf))
    if isinstance(result, np.ndarray):
        np.copyto(result, moved, where=chosen)
        return result
    return np.float64(np.where(chosen, moved, values))


class PerturbedUfunc:
    """A NumPy ufunc whose float64 results are rounded otherwise (see the module
    docstring); everything else is the ufunc's."""

    def __init__(self, ufunc):
        self.ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        result = self.ufunc(*args, **kwargs)
        out = kwargs.get("out")
        if isinstance(out, tuple):
            out = out[0]
        target = out if out is not None else result
        if kwargs.get("where", True) is not True or not (
                isinstance(target, np.ndarray | np.float64)
                and target.dtype == np.float64):
            return result
        try:
            arguments = [np.asarray(argument, dtype=np.float64)
                         for argument in args[:self.ufunc.nin]]
        except (TypeError, ValueError):
            return result
        perturbed = _perturb(target, arguments)
        return result if out is not None else perturbed

    def __getattr__(self, name):
        return getattr(self.ufunc, name)


def install():
    """Replace NumPy's transcendental functions by their perturbed versions."""
    for module in ("dask.array", "dask.dataframe", "dask_ml"):
        try:  # (dask wraps NumPy's ufuncs at its import, and takes nothing else)
            importlib.import_module(module)
        except ImportError:
            pass
    for name in FUNCTIONS:
        original = getattr(np, name)
        if not isinstance(original, PerturbedUfunc):
            setattr(np, name, PerturbedUfunc(original))


def installed():
    """Whether this process runs in the ulp mode."""
    return isinstance(np.exp, PerturbedUfunc)
