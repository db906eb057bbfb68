"""The primitives' clones: the lists the module reports match the headers, and the
clone reported for this CPU is the one its instruction sets call for."""

import platform
import re
from pathlib import Path

import pytest
from sklearn_ga._kernel import ROW_PRIMITIVES, WIDE_PRIMITIVES, simd_clones

import sklearn_ga

SOURCES = Path(sklearn_ga.__file__).parent / "_src"

# The flags Linux shows in /proc/cpuinfo for the x86-64 levels the clones target.
V3_FLAGS = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
V4_FLAGS = V3_FLAGS | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


def annotated(marker):
    """The functions the headers declare with ``marker`` (GA_SIMD or GA_SIMD_WIDE),
    the instances of a macro that defines one included."""
    names = []
    for header in sorted(SOURCES.glob("*.h")):
        text = header.read_text()
        for match in re.finditer(rf"\b{marker}\b(?:\s+GA_\w+)*\s+static\s+[\w\s*]+?"
                                 r"(\w+)\s*\(", text):
            name = match.group(1)
            if name == "NAME":  # a macro's definition: its instances
                macro = re.search(r"#define\s+(\w+)\(NAME", text).group(1)
                names += re.findall(rf"^{macro}\((\w+),", text, re.MULTILINE)
            else:
                names.append(name)
    return sorted(names)


@pytest.mark.skipif(not SOURCES.is_dir(), reason="the C sources are not installed")
def test_the_reported_lists_are_the_headers_annotations():
    assert annotated("GA_SIMD_WIDE") == sorted(WIDE_PRIMITIVES)
    assert annotated("GA_SIMD") == sorted(ROW_PRIMITIVES)


def test_the_clone_is_the_one_the_cpu_calls_for():
    clones = simd_clones()
    assert set(clones) == set(WIDE_PRIMITIVES) | set(ROW_PRIMITIVES)
    wide = {clones[name] for name in WIDE_PRIMITIVES}
    rows = {clones[name] for name in ROW_PRIMITIVES}
    assert len(wide) == len(rows) == 1
    (wide,), (rows,) = wide, rows
    if rows == "none":  # a build without clones: no primitive has one
        assert wide == "none"
        return
    assert platform.machine() == "x86_64"
    try:
        with open("/proc/cpuinfo") as info:
            flags = set(next(line for line in info if line.startswith("flags"))
                        .split(":")[1].split())
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags to compare with")
    level = ("x86-64-v4" if V4_FLAGS <= flags else
             "x86-64-v3" if V3_FLAGS <= flags else "default")
    assert wide == level
    assert rows == (level if level != "x86-64-v4" else "x86-64-v3")
