"""The integer codes that name psi, phi, the update rule, the loss and a run's status.

This module is the one source of these numbers: the registries (``_psi/``,
``_phi/``) take their codes from here, and ``setup.py`` writes them for the compiled
loop (the C enums of ``_src/ga_codes.h`` and their Cython declarations in
``_src/codes.pxi``), whose enums ``tests/test_codes.py`` checks against these.
"""

from enum import IntEnum


class PsiCode(IntEnum):
    """Parameterization functions psi (registry: ``_psi/``)."""

    PSI_IDENTITY = 0
    PSI_SOFTMAX = 1
    PSI_EG_PM = 2
    PSI_EXP = 3
    PSI_PNORM = 4
    PSI_SPHERE = 5
    PSI_SIMPLEX = 6
    PSI_BURG = 7


class PhiCode(IntEnum):
    """Transfer functions phi (registry: ``_phi/``)."""

    PHI_IDENTITY = 0
    PHI_LOGISTIC = 1
    PHI_TANH = 2
    PHI_ARCTAN = 3
    PHI_EXP = 4
    PHI_SOFTMAX = 5
    PHI_SIGN = 6


class UpdateCode(IntEnum):
    """Update rules: explicit (KW01 eq. 23), implicit (22, 25), natural (KMWW eq. 5)."""

    UPDATE_EXPLICIT = 0
    UPDATE_IMPLICIT = 1
    UPDATE_NATURAL = 2


class LossCode(IntEnum):
    """The loss minimized: phi's matching loss, or the square loss (KW01 eq. 35)."""

    LOSS_MATCHING = 0
    LOSS_SQUARE = 1


class Status(IntEnum):
    """How a run of the trial loop ended."""

    OK = 0
    DIVERGED = 1
    UNREADABLE = 2  # a CSR run checking its rows stopped at one that failed


# The enums that setup.py writes for the compiled loop.
ENUMS = (PsiCode, PhiCode, UpdateCode, LossCode, Status)
