"""Mutation testing: small deliberate bugs that the tests must catch.

Each mutation replaces one snippet of the sources (found exactly once) in a scratch
copy of the working tree, then runs the tests that should notice it there; the
mutation is *caught* when they fail. Python-level mutations reuse the compiled kernel
of the working tree; kernel mutations (``--kernel``) rebuild the kernel in the copy
with pip, minutes each. Not collected by pytest (no ``test_`` prefix).

Usage, from the root of a working tree with ``make install`` done::

    .venv/bin/python tests/mutation/run_mutations.py            # Python mutations
    .venv/bin/python tests/mutation/run_mutations.py --kernel   # and kernel ones
    .venv/bin/python tests/mutation/run_mutations.py --only halved-eg-pm-b
    .venv/bin/python tests/mutation/run_mutations.py --list
    .venv/bin/python tests/mutation/run_mutations.py --baseline  # tests pass unmutated

Prints one line per mutation and the score; exits with 1 if a mutation survived (or
could not be applied: a snippet that moved must be updated here).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("sklearn_ga", "doc/user_guide")
IGNORED = shutil.ignore_patterns(".git", ".venv", "build", "_build", "*.egg-info",
                                 "__pycache__", ".hypothesis", "auto_examples",
                                 "generated")


@dataclass(frozen=True)
class Mutation:
    name: str
    old: str
    new: str
    tests: tuple
    kernel: bool = False


MUTATIONS = [
    Mutation(
        "halved-eg-pm-b",  # a rate twice too large, which sampling of eq. (28) missed
        "return np.float64(U) ** 2 * row_norms(X, np.inf) ** 2",
        "return 0.5 * np.float64(U) ** 2 * row_norms(X, np.inf) ** 2",
        ("tests/test_theory.py", "-k", "supremum or bounds_the_quadratic"),
    ),
    Mutation(
        "reversed-rank",
        '"rank_test_loss": np.argsort(np.argsort(scores, kind="stable")) + 1',
        '"rank_test_loss": len(scores) - np.argsort(np.argsort(scores, '
        'kind="stable"))',
        ("tests/test_cv.py",),
    ),
    Mutation(
        "param-eta-column-from-U",
        '"param_eta": np.array([e for e, _ in self._configs])',
        '"param_eta": np.array([u for _, u in self._configs])',
        ("tests/test_cv.py",),
    ),
    Mutation(
        "estimator-theory-rate-1.75x",  # a learner 1.75 times worse than Theorem 3's
        "return theorem3_learning_rate(b, c) if b > 0 else 1.0",
        "return 1.75 * theorem3_learning_rate(b, c) if b > 0 else 1.0",
        ("tests/test_theory.py", "-k", "holds_on_the_estimators or adversary"),
    ),
    Mutation(
        "theorem3-rate-1-over-bc",
        "factor = 0.5 if K is None else",
        "factor = 1.0 if K is None else",
        ("tests/test_theory.py",),
    ),
    Mutation(
        "bound-30-half-divergence-term",
        "bound = 2.0 * comparator_loss + 4.0 * bc * divergence",
        "bound = 2.0 * comparator_loss + 2.0 * bc * divergence",
        ("tests/test_theory.py", "-k", "lemma_5 or hkw_theorem1_is"),
    ),
    Mutation(
        "underflowed-rate-returned-as-0",
        "elif positive and value == 0:",
        "elif positive and value < 0:",
        ("tests/test_theory.py", "-k", "past_the_doubles"),
    ),
    Mutation(
        "intercept-left-out-of-b",
        "return float(b) + float(fit_intercept)",
        "return float(b)",
        ("tests/test_theory.py", "-k", "dense_equals_sparse"),
    ),
    Mutation(
        "tanh-c-one-half",  # HKW Table I's misprint
        "high=1.0, regression=True, classification=True, c=1.0,\n"
        "            probability=_probability_tanh)",
        "high=1.0, regression=True, classification=True, c=0.5,\n"
        "            probability=_probability_tanh)",
        ("tests/test_theory.py", "-k", "c_bounds or c_is or tanh"),
    ),
    Mutation(
        "hkw-theorem2-ln-n",
        "D = np.log(2.0 * n_features) if D is None else D",
        "D = np.log(1.0 * n_features) if D is None else D",
        ("tests/test_theory.py", "-k", "hkw_theorem2"),
    ),
    Mutation(
        "pnorm-divergence-cancelling-form",  # ||theta||^2 - theta . psi(theta)
        "unit = 0.5 * gap * (norm_tilde + norm) - linear",
        "unit = (0.5 * norm_tilde**2 + 0.5 * norm**2\n"
        "                - np.sum(theta_tilde * _pnorm(theta, U, p), axis=-1))",
        ("tests/test_losses.py", "-k", "zero_at_equal or near_equal"),
    ),
    Mutation(
        "arctan-potential-inf-minus-inf",
        "return np.where(np.isinf(a), np.inf,",
        "return np.where(False, np.inf,",
        ("tests/test_losses.py", "-k", "potential"),
    ),
    Mutation(
        "softmax-potential-of-an-empty-row",
        "if entry.rowwise and z.ndim > 0 and z.shape[-1] == 0:",
        "if False:",
        ("tests/test_losses.py", "-k", "potential"),
    ),
    Mutation(
        "eg-pm-weights-without-U",
        "return U * (plus - minus) / np.sum(plus + minus, axis=-1, keepdims=True)",
        "return (plus - minus) / np.sum(plus + minus, axis=-1, keepdims=True)",
        ("tests/test_reference.py", "-k", "registry_formula"),
    ),
    Mutation(
        "saving-through-the-system-temporary-folder",
        'tempfile.mkstemp(dir=folder, prefix=".saving-")',
        'tempfile.mkstemp(prefix=".saving-")',
        ("tests/test_docs.py", "-k", "saving"),
    ),
    Mutation(
        "no-training-lock",  # two calls running one loop at once
        "        with self._training_lock():\n"
        "            return method(self, *args, **kwargs)\n",
        "        return method(self, *args, **kwargs)\n",
        ("tests/test_reliability.py", "-k", "two_threads or waits"),
    ),
    Mutation(
        "training-lock-pickled",
        '            state.pop("_training")\n',
        "",
        ("tests/test_reliability.py", "-k", "copies_train"),
    ),
    Mutation(
        "assigned-theta-leaves-coef-stale",
        "self.__dict__.update(theta_=array, coef_=coef)",
        "self.__dict__.update(theta_=array)",
        ("tests/test_online.py", "-k", "assigned"),
    ),
    Mutation(
        "assigned-parameters-unchecked",
        'if not np.all(np.isfinite(array)):\n            raise ValueError(f"{name} '
        'contains NaN',
        'if False:\n            raise ValueError(f"{name} contains NaN',
        ("tests/test_online.py", "-k", "assigned"),
    ),
    Mutation(
        "csr-indices-not-converted-for-predict",
        "            X = loop_csr(X)\n            checked_structure(X)\n",
        "            checked_structure(X)\n",
        ("tests/test_sparse_dense.py", "-k", "index or indices"),
    ),
    Mutation(
        "dropped-intercept-update",  # the general trial (implicit, CSR, k > 1, ...)
        "        if s.fit_intercept:\n            s.intercept[j] -= eta_b * r\n",
        "",
        ("tests/test_reference.py", "tests/test_updates.py", "-k", "not long"),
        kernel=True,
    ),
    Mutation(
        "dropped-intercept-update-fused",  # the fused single-output loop
        "x_top)\n        if s.fit_intercept:\n"
        "            s.intercept[j] -= s.eta_intercept * weight * residual\n",
        "x_top)\n",
        ("tests/test_reference.py", "tests/test_estimator_checks.py", "-k",
         "not long and (follows or sample_weight_equivalence)"),
        kernel=True,
    ),
    Mutation(
        "implicit-solver-meets-inf-times-zero",  # a dense row's zeros, past the doubles
        "h * v * x_val[q] if x_val[q] != 0.0 else 0.0)",
        "h * v * x_val[q])",
        ("tests/test_sparse_dense.py", "-k", "past_the_doubles or row_of_zeros"),
        kernel=True,
    ),
    Mutation(
        "restore-keeps-the-failed-runs-state",  # seen only in the loop's own state
        "        self.s = self.saved_state\n",
        "",
        ("tests/test_bad_input.py",),
        kernel=True,
    ),
    Mutation(
        "blocks-without-the-gram-correction",  # each row sees the block's start
        "        activations[t] -= step * gram[t]\n",
        "        pass\n",
        ("tests/test_cv.py", "-k", "blocks"),
        kernel=True,
    ),
]


def find_snippet(tree, mutation):
    """The one source file of ``tree`` holding the mutation's snippet."""
    found = [path for folder in SOURCES for path in sorted((tree / folder).rglob("*"))
             if path.suffix in (".py", ".pyx", ".pxd", ".pxi", ".h", ".rst")
             and mutation.old in path.read_text(encoding="utf-8")]
    if len(found) != 1 or found[0].read_text(encoding="utf-8").count(
            mutation.old) != 1:
        raise LookupError(f"the snippet occurs {len(found)} file(s), not once; "
                          "update the mutation")
    return found[0]


def build_kernel(tree):
    """Compile the (mutated) kernel of ``tree`` into its package folder."""
    target = tree / "_built"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(tree)], check=True,
                   capture_output=True)
    for library in (target / "sklearn_ga").glob("_kernel*.so"):
        shutil.copy2(library, tree / "sklearn_ga")
    shutil.rmtree(target)


def run_tests(tree, tests, timeout):
    """pytest's exit code for ``tests`` run against the package in ``tree``."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               "-o", "addopts=", *tests]
    check = [sys.executable, "-c", "import sklearn_ga; print(sklearn_ga.__file__)"]
    where = subprocess.run(check, cwd=tree, env=environment, capture_output=True,
                           text=True, check=True).stdout
    if not where.startswith(str(tree)):
        raise RuntimeError(f"the tests would import sklearn_ga from {where}")
    try:
        return subprocess.run(command, cwd=tree, env=environment, capture_output=True,
                              timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def try_mutation(mutation, scratch, timeout, baseline=False):
    """'caught', 'SURVIVED', or what went wrong, for one mutation; with
    ``baseline``, 'passes' if its tests pass on the unmutated copy."""
    tree = scratch / mutation.name
    shutil.copytree(ROOT, tree, ignore=IGNORED)
    try:
        path = find_snippet(tree, mutation)
        if not baseline:
            path.write_text(path.read_text(encoding="utf-8").replace(
                mutation.old, mutation.new), encoding="utf-8")
            if mutation.kernel:
                build_kernel(tree)
        code = run_tests(tree, mutation.tests, timeout)
    except (LookupError, RuntimeError, subprocess.CalledProcessError) as error:
        return f"NOT APPLIED ({error})"
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    if baseline:
        return "passes" if code == 0 else f"FAILS UNMUTATED (pytest exit {code})"
    # pytest: 1 = tests failed; 2-4 = interrupted or internal errors; 5 = none ran.
    return {0: "SURVIVED", 1: "caught", 5: "NO TESTS RAN"}.get(
        code, f"caught (pytest exit {code})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", action="store_true",
                        help="also the kernel mutations (rebuilds the kernel each)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations")
    parser.add_argument("--baseline", action="store_true",
                        help="run each mutation's tests unmutated: they must pass")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds for the tests of one mutation")
    arguments = parser.parse_args()
    chosen = [mutation for mutation in MUTATIONS
              if (arguments.only is None or mutation.name in arguments.only)
              and (arguments.kernel or not mutation.kernel or arguments.only)]
    if arguments.list:
        for mutation in MUTATIONS:
            print(f"{mutation.name:45s} {'kernel' if mutation.kernel else 'python'}  "
                  f"{' '.join(mutation.tests)}")
        return 0
    good = 0
    with tempfile.TemporaryDirectory(prefix="ga-mutants-") as scratch:
        for mutation in chosen:
            start = time.monotonic()
            result = try_mutation(mutation, Path(scratch), arguments.timeout,
                                  baseline=arguments.baseline)
            good += result.startswith("passes" if arguments.baseline else "caught")
            print(f"{mutation.name:45s} {result}  ({time.monotonic() - start:.0f} s)",
                  flush=True)
    what = "pass unmutated" if arguments.baseline else "mutations caught"
    print(f"score: {good}/{len(chosen)} {what}")
    return 0 if good == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
