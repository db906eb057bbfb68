"""The compiled loop's codes are those of sklearn_ga._codes, the one source of them.

Cython cannot import the Python module, so the kernel declares its own enums
(sklearn_ga/_src/ga_codes.h); a drift between the two would send one psi's or phi's
code to another's branch.
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

