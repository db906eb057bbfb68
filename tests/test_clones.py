"""The SIMD levels of the C primitives: the list the module reports matches the
headers, the level chosen is the one the CPU's instruction sets call for,
SKLEARN_GA_SIMD pins it or says clearly why it cannot, and every level this CPU
runs fits every model to the same bits (the same operations in the same order,
none fused: ga_simd.h)."""

import io
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn_ga._kernel import (
    PRIMITIVES,
    SHIPPED_SIMD_LEVELS,
    SIMD_LEVELS,
    simd_clones,
    simd_levels_supported,
)

import sklearn_ga

SOURCES = Path(sklearn_ga.__file__).parent / "_src"

# The flags Linux shows in /proc/cpuinfo for the x86-64 levels (GCC's
# __builtin_cpu_supports tests the same instruction sets).
V3_FLAGS = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
V4_FLAGS = V3_FLAGS | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}

# Fits whose models the levels must give to the bit, one per primitive family: the
# row loops (GD dense and CSR, the logistic classifier, averaging), the exponential
# terms and their steps (softmax, EG+-, exp, burg; long steps recompute the terms),
# pnorm's powers (integer and not; a row longer than its blocks, mostly zeros), the
# geodesic sums (sphere, simplex), the CSR scans of int32 and int64 indices and the
# lock-step grid's blocks (GARegressorCV). Printed as one .npz file of arrays.
FITS = r"""
import io, sys
import numpy as np
import scipy.sparse as sp
from sklearn_ga import GAClassifier, GARegressor, GARegressorCV
from sklearn_ga._kernel import simd_clones

rng = np.random.default_rng(0)
X = rng.standard_normal((300, 37))
y = np.tanh(X[:, :4].sum(axis=1) / 2)
labels = (y > 0).astype(int)
csr = sp.random(300, 37, density=0.2, format="csr", random_state=1) * 3.0
wide = sp.random(40, 5000, density=0.002, format="csr", random_state=2).toarray()
out = {"levels": np.array(sorted(set(simd_clones().values())))}
one = dict(max_iter=2, tol=None, shuffle=False)
for psi in ("identity", "softmax", "eg_pm", "exp", "pnorm", "sphere", "simplex",
            "burg"):
    for eta in (0.01, 0.5):
        model = GARegressor(psi=psi, phi="tanh", U=3.0, p=3.3, eta=eta, **one)
        for name, data in (("dense", X), ("csr", csr), ("csr64", csr)):
            if name == "csr64":
                data = data.copy()
                data.indices = data.indices.astype(np.int64)
                data.indptr = data.indptr.astype(np.int64)
            try:
                model.fit(data, y)
            except ValueError as error:  # a diverging run: its message must agree
                out[f"{psi}-{eta}-{name}-error"] = np.array(str(error))
                continue
            out[f"{psi}-{eta}-{name}"] = np.r_[model.coef_.ravel(), model.intercept_]
for p in (4.0, 2 * np.log(5000)):
    model = GARegressor(psi="pnorm", p=p, U=3.0, eta=0.05, **one).fit(wide, y[:40])
    out[f"pnorm-wide-{p}"] = model.coef_
model = GAClassifier(eta=0.1, average=True, **one).fit(X, labels)
out["logistic-average"] = model.coef_
search = GARegressorCV(etas=(0.001, 0.01, 0.1), Us=(1.0,)).fit(X, y)
out["cv"] = np.r_[search.thetas_.ravel(), search.cv_results_["progressive_loss"]]
buffer = io.BytesIO()
np.savez(buffer, **out)
sys.stdout.buffer.write(buffer.getvalue())
"""


def run_at(level, code):
    """Run code in a fresh interpreter with SKLEARN_GA_SIMD=level."""
    env = {**os.environ, "SKLEARN_GA_SIMD": level}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          timeout=600)


def annotated(marker):
    """The primitives the headers define with ``marker`` (GA_SIMD) as GA_FN(name),
    the instances of a macro that defines one included."""
    names = []
    for header in sorted(SOURCES.glob("*.h")):
        text = header.read_text()
        for match in re.finditer(rf"\b{marker}\b(?:\s+GA_\w+)*\s+static\s+[\w\s*]+?"
                                 r"GA_FN\((\w+)\)\s*\(", text):
            name = match.group(1)
            if name == "NAME":  # a macro's definition: its instances
                macro = re.search(r"#define\s+(\w+)\(NAME", text).group(1)
                names += re.findall(rf"^{macro}\((\w+),", text, re.MULTILINE)
            else:
                names.append(name)
    return sorted(names)


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as info:
            return set(next(line for line in info if line.startswith("flags"))
                       .split(":")[1].split())
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags to compare with")


@pytest.mark.skipif(not SOURCES.is_dir(), reason="the C sources are not installed")
def test_the_reported_primitives_are_the_headers_annotations():
    assert annotated("GA_SIMD") == sorted(PRIMITIVES)
    assert len(set(PRIMITIVES)) == len(PRIMITIVES)


def shipped_choice():
    """{primitive: the best level it ships at that this CPU runs}."""
    supported = simd_levels_supported()
    return {name: max(set(supported) & set(SIMD_LEVELS[:SIMD_LEVELS.index(level) + 1]),
                      key=SIMD_LEVELS.index)
            for name, level in SHIPPED_SIMD_LEVELS.items()}


def test_each_primitive_runs_the_best_level_it_ships_at():
    clones = simd_clones()
    assert set(clones) == set(PRIMITIVES) == set(SHIPPED_SIMD_LEVELS)
    assert SIMD_LEVELS[0] == "default"
    supported = simd_levels_supported()
    assert supported[0] == "default"
    assert set(supported) <= set(SIMD_LEVELS)
    if os.environ.get("SKLEARN_GA_SIMD"):
        assert set(clones.values()) == {os.environ["SKLEARN_GA_SIMD"]}
    else:
        assert clones == shipped_choice()
    if SIMD_LEVELS == ("default",):  # a build without clones
        return
    assert platform.machine() == "x86_64"
    assert SIMD_LEVELS == ("default", "x86-64-v3", "x86-64-v4")
    # Every primitive ships at x86-64-v3 at least; x86-64-v4 only where measured
    # faster (ga_simd.h's GA_SHIPPED_V4): the exponential terms were measured slower.
    assert set(SHIPPED_SIMD_LEVELS.values()) <= {"x86-64-v3", "x86-64-v4"}
    assert SHIPPED_SIMD_LEVELS["ga_softmax_terms"] == "x86-64-v3"
    assert SHIPPED_SIMD_LEVELS["ga_exp_terms"] == "x86-64-v3"
    flags = cpu_flags()
    assert ("x86-64-v3" in supported) == (V3_FLAGS <= flags)
    assert ("x86-64-v4" in supported) == (V4_FLAGS <= flags)


def test_a_level_not_built_is_refused_at_import():
    result = run_at("avx9000", "import sklearn_ga")
    assert result.returncode != 0
    stderr = result.stderr.decode()
    assert "ImportError" in stderr
    assert "'avx9000' is not a level of this build" in stderr, stderr
    assert "Its levels are default" in stderr


def test_each_level_runs_when_pinned():
    for level in simd_levels_supported():
        result = run_at(level, "from sklearn_ga._kernel import simd_clones; "
                               "print(*sorted(set(simd_clones().values())))")
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout.decode().split() == [level]


def fits_at(level):
    result = run_at(level, FITS)
    assert result.returncode == 0, result.stderr.decode()
    with np.load(io.BytesIO(result.stdout)) as arrays:
        return {name: arrays[name] for name in arrays.files}


@pytest.mark.skipif(len(simd_levels_supported()) < 2,
                    reason="this CPU runs one level only")
def test_every_level_fits_the_same_models_bit_for_bit():
    # Each level pinned, and the shipped choice (SKLEARN_GA_SIMD empty: each
    # primitive at its own level), against the baseline.
    levels = simd_levels_supported()
    results = {level: fits_at(level) for level in (*levels, "")}
    for level, arrays in results.items():
        ran = arrays.pop("levels")
        assert set(ran) == ({level} if level else set(shipped_choice().values()))
    base = results.pop(levels[0])
    # Enough fits ran (a diverging run compares its message instead).
    assert sum(not name.endswith("-error") for name in base) >= 40
    for other in results.values():
        assert set(other) == set(base)
        for name, values in other.items():
            assert values.dtype == base[name].dtype, name
            if values.dtype.kind == "f":
                assert np.array_equal(values.view(np.uint64),
                                      base[name].view(np.uint64)), name
            else:
                assert np.array_equal(values, base[name]), name
