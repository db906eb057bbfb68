"""Run every benchmark and print one Markdown table (``make bench``).

The goals of the rows are explained in ``benchmarks/README.md``.

Each row times GA and its reference in this one process, on the same data, as the
best of BENCH_REPEAT runs; the ratio, not the absolute time, is the result. BLAS runs
on one thread, like the GA and SGD loops: idle BLAS threads spin for a while after
each call and would steal the core of the next measurement on a small machine.
"""

import datetime
import os
import platform

import bench_cv
import bench_dask
import bench_defaults
import bench_defaults_streams
import bench_dense
import bench_memory
import bench_online
import bench_sparse
import numpy as np
import sklearn
from _timing import REPEAT, SCALE, header
from threadpoolctl import threadpool_limits

from sklearn_ga import _kernel


def cpu():
    """The CPU's model as Linux names it: ratios differ between generations (on
    AMD EPYC, family 23 is Zen 1 or 2, family 25 Zen 3 or 4)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "CPU unknown"
    return (f"{fields.get('model name', 'CPU unknown')} (family "
            f"{fields.get('cpu family', '?')}, model {fields.get('model', '?')})")


def clones():
    """The SIMD levels the C primitives run at, and the levels of the build."""
    running = _kernel.simd_clones()
    levels = sorted(set(running.values()), key=_kernel.SIMD_LEVELS.index)
    above = {level: [name for name, at in running.items() if at == level]
             for level in levels[1:]}
    return (f"{levels[0]}"
            + "".join(f", {level} for {', '.join(names)}"
                      for level, names in above.items())
            + f" (SKLEARN_GA_SIMD pins one level; built: "
            f"{', '.join(_kernel.SIMD_LEVELS)}; this CPU runs: "
            f"{', '.join(_kernel.simd_levels_supported())})")


def main():
    nproc = len(os.sched_getaffinity(0))  # what `nproc` prints
    print(f"{datetime.date.today()}, nproc={nproc}, {platform.machine()}, {cpu()}, "
          f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}; best of {REPEAT}, scale {SCALE}")
    print(f"SIMD level of the C primitives: {clones()}\n")
    header()
    with threadpool_limits(limits=1):
        for module in (bench_dense, bench_sparse, bench_online, bench_memory,
                       bench_cv, bench_dask, bench_defaults, bench_defaults_streams):
            try:
                module.cases()
            except Exception as error:  # noqa: BLE001 (a row's failure, reported)
                # The rows that follow in other modules still run.
                print(f"| {module.__name__}: stopped by {type(error).__name__}: "
                      f"{error} | - | - | - | - | NO |", flush=True)


if __name__ == "__main__":
    main()
