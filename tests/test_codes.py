"""The compiled loop's codes are those of sklearn_ga._codes, the one source of them.

Cython cannot import the Python module: setup.py writes the codes for the kernel
(sklearn_ga/_src/ga_codes.h and codes.pxi). A module built before a change of the
codes would send one psi's or phi's code to another's branch.
"""

import pytest

from sklearn_ga import _codes, _kernel

ENUMS = ["PsiCode", "PhiCode", "UpdateCode", "LossCode", "Status"]


@pytest.mark.parametrize("enum", ENUMS)
def test_kernel_enum_equals_codes(enum):
    python, kernel = getattr(_codes, enum), getattr(_kernel, enum)
    assert {member.name: int(member) for member in python} == {
        member.name: int(member) for member in kernel
    }

