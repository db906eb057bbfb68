"""Build the compiled trial loop; all metadata lives in pyproject.toml."""

from glob import glob

from Cython.Build import cythonize
from setuptools import Extension, setup

# The parts of the module included from _src/ (C headers and Cython includes): one
# translation unit, rebuilt when any of them changes (and shipped in the sdist).
parts = sorted(glob("sklearn_ga/_src/*.h") + glob("sklearn_ga/_src/*.pxi"))

# -O3 vectorizes the inner loops; -fno-math-errno (libm calls may be inlined) and
# -fno-trapping-math (branch-free selects in vectorized loops) leave NaN/inf semantics
# untouched: no -ffast-math, since divergence detection relies on isfinite.
kernel = Extension(
    "sklearn_ga._kernel",
    ["sklearn_ga/_kernel.pyx"],
    depends=parts,
    extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math"],
)

setup(ext_modules=cythonize([kernel], compiler_directives={"language_level": "3"}))
