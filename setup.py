"""Build the compiled trial loop; all metadata lives in pyproject.toml."""

import importlib.util
import re
from glob import glob
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path("sklearn_ga")
NOTICE = "Written by setup.py from sklearn_ga/_codes.py: edit that file, not this one."


def _write(path, text):
    """Write text to path unless it holds it already (an unchanged file keeps its
    time, so that the module is not rebuilt for nothing)."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_codes():
    """The codes of sklearn_ga/_codes.py, their one source, as the C enums of
    _src/ga_codes.h and their Cython declarations in _src/codes.pxi."""
    spec = importlib.util.spec_from_file_location("_codes", SOURCE / "_codes.py")
    codes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(codes)
    header = [f"/* {NOTICE} */", "#ifndef SKLEARN_GA_GA_CODES_H",
              "#define SKLEARN_GA_GA_CODES_H", ""]
    pxi = [f"# {NOTICE}", "", 'cdef extern from "_src/ga_codes.h":']
    for enum in codes.ENUMS:
        tag = "ga_" + re.sub(r"(?<!^)(?=[A-Z])", "_", enum.__name__).lower()
        header.append(f"enum {tag} {{")
        header += [f"    GA_{member.name} = {int(member)}," for member in enum]
        header += ["};", ""]
        pxi.append(f'    cpdef enum {enum.__name__} "{tag}":')
        pxi += [f'        {member.name} "GA_{member.name}"' for member in enum]
    header.append("#endif  /* SKLEARN_GA_GA_CODES_H */")
    _write(SOURCE / "_src" / "ga_codes.h", "\n".join(header) + "\n")
    _write(SOURCE / "_src" / "codes.pxi", "\n".join(pxi) + "\n")


write_codes()
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



class BuildExt(build_ext):
    """Build the module without debug information or symbol table for a wheel or a
    regular install (1 MB instead of 5); an editable install (``make install``) keeps
    both, for debuggers and profilers."""

    def build_extensions(self):
        if not self.editable_mode:
            for extension in self.extensions:
                extension.extra_compile_args = [*extension.extra_compile_args, "-g0"]
                extension.extra_link_args = [*extension.extra_link_args, "-s"]
        super().build_extensions()


setup(
    ext_modules=cythonize([kernel], compiler_directives={"language_level": "3"}),
    cmdclass={"build_ext": BuildExt},
)
