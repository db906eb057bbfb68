# phi: each transfer function's prediction y_hat = phi(a) and its matching loss
# L_phi(y, y_hat) (KW01 eq. 2), computed from the activation so that it stays exact
# where y_hat saturates; the slope of phi for the square loss (GA_L, KW01 eq. 35).
#
# Every branch on a phi code lives in this file, and each loss is the formula of
# the registry (sklearn_ga/_phi/) in the same operations, so that the loop's
# cumulative loss and sklearn_ga.losses.matching_loss agree to rounding
# (tests/test_kernel_registry.py). TrialLoop admits only the codes of _phi_known.


cdef bint _phi_known(int phi) noexcept nogil:
    """Whether phi is one of the codes this loop implements (PhiCode)."""
    return phi in (PHI_IDENTITY, PHI_LOGISTIC, PHI_TANH, PHI_ARCTAN, PHI_EXP,
                   PHI_SOFTMAX, PHI_SIGN)


# Whether phi couples the k outputs (softmax); the others act on each one. A C
# macro, compiled as the comparison it is (as psi.pxi's traits).
cdef extern from *:
    """
    #define ga_phi_coupled(phi) ((phi) == GA_PHI_SOFTMAX)
    """
    bint _coupled "ga_phi_coupled"(int phi) noexcept nogil

# pi / 2 as the double nearest it and the rest (the registry's HALF_PI_HIGH, _LOW).
cdef double HALF_PI_HIGH = 1.5707963267948966
cdef double HALF_PI_LOW = 6.123233995736766e-17


cdef inline double _xlogx(double x) noexcept nogil:
    # 0 ln 0 = 1 ln 1 = 0 without a log call (class targets are 0 or 1).
    return 0.0 if x <= 0.0 or x == 1.0 else x * log(x)


cdef inline double _bernoulli_loss(double z, double a, double tail) noexcept nogil:
    """Matching loss of the logistic function from the activation a (z in [0, 1]).

    softplus(+-a) = max(+-a, 0) + tail with tail = ln(1 + e^{-|a|}): both from one
    exponential, exact when the prediction saturates.
    """
    return (z * ((-a if a < 0.0 else 0.0) + tail) + (1.0 - z) * ((a if a > 0.0 else 0.0)
            + tail) + _xlogx(z) + _xlogx(1.0 - z))


cdef inline double _arctan_loss(double y, double a) noexcept nogil:
    """Matching loss of arctan, (y_hat - y) tan(y_hat) + ln(cos y_hat / cos y) with
    tan(y_hat) = a. Near the ends of the range y_hat - y and cos y are differences
    from +-pi/2, taken from pi/2 in two parts: arctan a = sign(a) pi/2 - arctan(1/a)
    for |a| > 1, and cos y = sin(pi/2 - |y|)."""
    cdef double side, gap, half_log, log_cos_y
    if fabs(a) > 1.0:
        side = 1.0 if a > 0.0 else -1.0
        gap = (side * HALF_PI_HIGH - y) + side * HALF_PI_LOW - atan(1.0 / a)
        # 0.5 ln(1 + a^2) without overflow.
        half_log = log(fabs(a)) + 0.5 * log1p((1.0 / a) * (1.0 / a))
    else:
        gap = atan(a) - y
        half_log = 0.5 * log1p(a * a)
    if fabs(y) > 1.0:
        log_cos_y = log(sin((HALF_PI_HIGH - fabs(y)) + HALF_PI_LOW))
    else:
        log_cos_y = log(cos(y))
    return a * gap - half_log - log_cos_y


cdef inline double _exp_loss(double y, double y_hat, double a) noexcept nogil:
    """Matching loss of exp, y ln y - y a - y + e^a = y (e^d - 1 - d) with
    d = a - ln y: no cancellation near the exact fit; e^a at y = 0."""
    cdef double d
    if y > 0.0:
        d = a - log(y)
        return y * (expm1(d) - d)
    return y_hat


cdef double _start_loss(State* s, double start, const double* x, Py_ssize_t n,
                        const double* y) noexcept nogil:
    """The loss of the model at Theta_1 (weights all ``start``, intercept 0) on the
    dense row x, in the trial's scratch (a and y_hat, which a trial then sets)."""
    cdef Py_ssize_t j
    cdef double a = start * ga_sum(x, 1.0, n) if start != 0.0 else 0.0
    for j in range(s.k):
        s.scratch.a[j] = a
    return _transfer_and_loss(s, y)


cdef double _transfer_and_loss(State* s, const double* y) noexcept nogil:
    """Set y_hat = phi(a) and return the matching loss L_phi(y, y_hat) (KW01 eq. 2).

    Losses are computed from the activation so they stay exact when y_hat saturates.
    """
    cdef Py_ssize_t j, k = s.k
    cdef double a, loss = 0.0, amax, lse, log_sum, z
    if s.config.phi == PHI_SOFTMAX:
        amax = s.scratch.a[0]
        for j in range(1, k):
            if s.scratch.a[j] > amax:
                amax = s.scratch.a[j]
        log_sum = 0.0
        for j in range(k):
            log_sum += exp(s.scratch.a[j] - amax)
        log_sum = log(log_sum)
        lse = amax + log_sum
        for j in range(k):
            s.scratch.y_hat[j] = exp(s.scratch.a[j] - lse)
            # ln y_hat_j = (a_j - max a) - ln sum_l e^{a_l - max a}, as the registry's
            # log_softmax; a class of target 0 adds nothing.
            if y[j] > 0.0:
                loss += _xlogx(y[j]) - y[j] * ((s.scratch.a[j] - amax) - log_sum)
        return loss
    for j in range(k):
        a = s.scratch.a[j]
        if s.config.phi == PHI_IDENTITY:
            s.scratch.y_hat[j] = a
            loss += 0.5 * (y[j] - a) * (y[j] - a)
        elif s.config.phi == PHI_LOGISTIC:
            z = exp(-fabs(a))
            s.scratch.y_hat[j] = 1.0 / (1.0 + z) if a >= 0.0 else z / (1.0 + z)
            loss += _bernoulli_loss(y[j], a, log1p(z))
        elif s.config.phi == PHI_TANH:
            s.scratch.y_hat[j] = tanh(a)
            # L_tanh(y, a) = L_logistic((1 + y) / 2, 2a).
            loss += _bernoulli_loss(0.5 * (1.0 + y[j]), 2.0 * a,
                                    log1p(exp(-2.0 * fabs(a))))
        elif s.config.phi == PHI_ARCTAN:
            s.scratch.y_hat[j] = atan(a)
            loss += _arctan_loss(y[j], a)
        elif s.config.phi == PHI_EXP:
            s.scratch.y_hat[j] = exp(a)
            loss += _exp_loss(y[j], s.scratch.y_hat[j], a)
        elif s.config.phi == PHI_SIGN:
            # An undecided prediction (a = 0) counts as a mistake, as in the Perceptron.
            s.scratch.y_hat[j] = y[j] if y[j] * a > 0.0 else -y[j]
            loss += -y[j] * a if y[j] * a < 0.0 else 0.0
    return loss


cdef inline double _phi_value(int phi, double a) noexcept nogil:
    """phi(a) of a coordinate-wise transfer function."""
    if phi == PHI_LOGISTIC:
        return 1.0 / (1.0 + exp(-a)) if a >= 0.0 else exp(a) / (1.0 + exp(a))
    if phi == PHI_TANH:
        return tanh(a)
    if phi == PHI_ARCTAN:
        return atan(a)
    if phi == PHI_EXP:
        return exp(a)
    return a  # PHI_IDENTITY (the estimators solve no implicit step for sign)


cdef double _square_loss(State* s, const double* y) noexcept nogil:
    """1/2 ||y_hat - y||^2 and its gradient in a, residual = dL/da (GA_L, KW01 eq. 35)."""
    cdef Py_ssize_t j
    cdef double d, slope, loss = 0.0, inner = 0.0
    for j in range(s.k):
        d = s.scratch.y_hat[j] - y[j]
        loss += 0.5 * d * d
        inner += s.scratch.y_hat[j] * d
    for j in range(s.k):
        d = s.scratch.y_hat[j] - y[j]
        if s.config.phi == PHI_SOFTMAX:
            # The softmax Jacobian diag(y_hat) - y_hat y_hat^T applied to d.
            s.scratch.residual[j] = s.scratch.y_hat[j] * (d - inner)
            continue
        if s.config.phi == PHI_LOGISTIC:
            slope = s.scratch.y_hat[j] * (1.0 - s.scratch.y_hat[j])
        elif s.config.phi == PHI_TANH:
            slope = 1.0 - s.scratch.y_hat[j] * s.scratch.y_hat[j]
        elif s.config.phi == PHI_ARCTAN:
            slope = 1.0 / (1.0 + s.scratch.a[j] * s.scratch.a[j])
        elif s.config.phi == PHI_EXP:
            slope = s.scratch.y_hat[j]
        else:  # PHI_IDENTITY (the estimators pair no square loss with sign)
            slope = 1.0
        s.scratch.residual[j] = d * slope
    return loss
