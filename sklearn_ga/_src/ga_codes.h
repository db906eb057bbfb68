/* The codes of the trial loop, as C enums: the values of sklearn_ga/_codes.py
   (tests/test_codes.py checks them through the enums of sklearn_ga._kernel, which
   state.pxi declares from here), named in C so that the traits of psi.pxi and
   phi.pxi can be plain comparisons. */
#ifndef SKLEARN_GA_GA_CODES_H
#define SKLEARN_GA_GA_CODES_H

enum ga_psi_code {
    GA_PSI_IDENTITY = 0,
    GA_PSI_SOFTMAX = 1,
    GA_PSI_EG_PM = 2,
    GA_PSI_EXP = 3,
    GA_PSI_PNORM = 4,
    GA_PSI_SPHERE = 5,
    GA_PSI_SIMPLEX = 6
};

enum ga_phi_code {
    GA_PHI_IDENTITY = 0,
    GA_PHI_LOGISTIC = 1,
    GA_PHI_TANH = 2,
    GA_PHI_ARCTAN = 3,
    GA_PHI_EXP = 4,
    GA_PHI_SOFTMAX = 5,
    GA_PHI_SIGN = 6
};

enum ga_update_code {
    GA_UPDATE_EXPLICIT = 0,
    GA_UPDATE_IMPLICIT = 1,
    GA_UPDATE_NATURAL = 2
};

enum ga_loss_code {
    GA_LOSS_MATCHING = 0,
    GA_LOSS_SQUARE = 1
};

enum ga_status {
    GA_OK = 0,
    GA_DIVERGED = 1,
    GA_UNREADABLE = 2
};

#endif  /* SKLEARN_GA_GA_CODES_H */
