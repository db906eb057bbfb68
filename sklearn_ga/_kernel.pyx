# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False
"""Compiled trial loop of the general additive algorithm GA(psi, phi, Theta, eta).

One loop serves every registered (psi, phi) pair (KW01 Figure 5). For each trial t:

    a = psi(Theta) x + b ;  y_hat = phi(a) ;  loss += L_phi(y, y_hat)
    Theta <- Theta - eta * s * (y_hat - y) x^T ;  b <- b - eta * s * (y_hat - y)

Design
------
* Only the parameters Theta and b are the model. The weights psi(Theta) are kept in
  factored form per row j: ``omega_ji = scale_j * num_ji`` where ``num`` is a bounded
  per-coordinate term and ``scale`` comes from a normalizer ``norm_j = sum_i den_ji``.
  Normalized psi (softmax, eg_pm, pnorm) subtract a per-row ``shift`` (the running
  maximum of theta or |theta|) so no exponential or power overflows for large theta.
* A dense row refreshes the normalizer exactly (every coordinate is touched anyway).
  A CSR row updates it incrementally in O(nnz); the row is recomputed from theta in
  O(n) once n coordinates were touched, when cancellation could have eaten precision,
  or when the shift drifts, so the cost stays O(nnz) amortized.
* Validation, allocation and dtype handling live in Python; this module only loops.
  Failures (non-finite activation, prediction, loss or parameters) are returned as a
  status with the trial index, so the caller can report them and discard the state.
"""
from libc.math cimport exp, log, log1p, fabs, tanh, atan, cos, pow, isfinite
from libc.stdint cimport int32_t, int64_t

# Parameterization functions psi (registry: sklearn_ga/_psi.py).
cpdef enum PsiCode:
    PSI_IDENTITY = 0
    PSI_SOFTMAX = 1
    PSI_EG_PM = 2
    PSI_EXP = 3
    PSI_PNORM = 4

# Transfer functions phi (registry: sklearn_ga/_phi.py).
cpdef enum PhiCode:
    PHI_IDENTITY = 0
    PHI_LOGISTIC = 1
    PHI_TANH = 2
    PHI_ARCTAN = 3
    PHI_EXP = 4
    PHI_SOFTMAX = 5
    PHI_SIGN = 6

cpdef enum Status:
    OK = 0
    DIVERGED = 1

ctypedef fused index_t:
    int32_t
    int64_t

# Recompute a row's weights from theta when its shift is this far from the maximum
# (e^30 ~ 1e13 leaves ample headroom before overflow) ...
cdef double SHIFT_SLACK = 30.0
# ... or when incremental normalizer updates moved this many times its current value
# (bounds the relative rounding error of the running sum by ~1e-13).
cdef double MASS_LIMIT = 1024.0


cdef struct State:
    int psi
    int phi
    Py_ssize_t k
    Py_ssize_t n
    double eta
    double U
    double p
    bint fit_intercept
    double* theta       # k x n parameters
    double* num         # k x n weight numerators (aliases theta for identity)
    double* den         # k x n normalizer terms (aliases num for softmax)
    double* norm        # k   sum_i den_ji
    double* shift       # k   reference maximum of theta (or |theta|)
    double* scale       # k   omega_ji = scale_j * num_ji
    double* mass        # k   |changes| of norm since the last recompute
    Py_ssize_t touched  # coordinates touched since the last recompute (CSR)
    double* intercept   # k
    double* a           # k   activations of the current trial
    double* y_hat       # k   predictions of the current trial


cdef inline bint _normalized(int psi) noexcept nogil:
    return psi == PSI_SOFTMAX or psi == PSI_EG_PM or psi == PSI_PNORM


cdef inline double _shift_value(State* s, double theta) noexcept nogil:
    """The quantity whose row maximum is the shift: theta (softmax) or |theta|."""
    if s.psi == PSI_SOFTMAX:
        return theta
    return fabs(theta)


cdef inline void _weight_terms(State* s, Py_ssize_t ji, double shift) noexcept nogil:
    """num and den at flat index ji from theta (HKW §III, KW01 §3, DESIGN.md table)."""
    cdef double t = s.theta[ji], e_plus, e_minus, r
    if s.psi == PSI_SOFTMAX:
        s.num[ji] = exp(t - shift)
    elif s.psi == PSI_EG_PM:
        # EG on x' = (Ux, -Ux) keeps theta^- = -theta^+: weights e^{+-theta - shift}.
        e_plus = exp(t - shift)
        e_minus = exp(-t - shift)
        s.num[ji] = e_plus - e_minus
        s.den[ji] = e_plus + e_minus
    elif s.psi == PSI_EXP:
        s.num[ji] = exp(t)
    elif s.psi == PSI_PNORM:
        # sign(t)|t|^(p-1) / ||theta||_p^(p-2), with |t| measured in units of the shift.
        if t == 0.0:
            s.num[ji] = 0.0
            s.den[ji] = 0.0
        else:
            r = fabs(t) / shift
            s.num[ji] = pow(r, s.p - 1.0) * (1.0 if t > 0.0 else -1.0)
            s.den[ji] = pow(r, s.p)


cdef inline void _set_scale(State* s, Py_ssize_t j) noexcept nogil:
    if s.psi == PSI_SOFTMAX:
        s.scale[j] = 1.0 / s.norm[j]
    elif s.psi == PSI_EG_PM:
        s.scale[j] = s.U / s.norm[j]
    elif s.psi == PSI_PNORM:
        s.scale[j] = 0.0 if s.norm[j] == 0.0 else (
            s.shift[j] / pow(s.norm[j], (s.p - 2.0) / s.p))
    else:
        s.scale[j] = 1.0


cdef void _recompute_row(State* s, Py_ssize_t j) noexcept nogil:
    """Rebuild row j's weight terms and normalizer from theta in O(n)."""
    cdef Py_ssize_t i, base = j * s.n
    cdef double shift = 0.0, v, total = 0.0
    if _normalized(s.psi):
        shift = _shift_value(s, s.theta[base])
        for i in range(1, s.n):
            v = _shift_value(s, s.theta[base + i])
            if v > shift:
                shift = v
        if s.psi == PSI_PNORM and shift == 0.0:
            shift = 1.0
    if s.psi != PSI_IDENTITY:
        for i in range(s.n):
            _weight_terms(s, base + i, shift)
            if _normalized(s.psi):
                total += s.den[base + i]
    s.shift[j] = shift
    s.norm[j] = total
    s.mass[j] = 0.0
    _set_scale(s, j)


cdef void _recompute_all(State* s) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(s.k):
        _recompute_row(s, j)
    s.touched = 0


cdef inline double _softplus(double x) noexcept nogil:
    if x > 0.0:
        return x + log1p(exp(-x))
    return log1p(exp(x))


cdef inline double _xlogx(double x) noexcept nogil:
    return 0.0 if x <= 0.0 else x * log(x)


cdef inline double _bernoulli_loss(double z, double a) noexcept nogil:
    """Matching loss of the logistic function from the activation a (z in [0, 1])."""
    return (z * _softplus(-a) + (1.0 - z) * _softplus(a)
            + _xlogx(z) + _xlogx(1.0 - z))


cdef double _transfer_and_loss(State* s, const double* y) noexcept nogil:
    """Set y_hat = phi(a) and return the matching loss L_phi(y, y_hat) (KW01 eq. 2).

    Losses are computed from the activation so they stay exact when y_hat saturates.
    """
    cdef Py_ssize_t j, k = s.k
    cdef double a, loss = 0.0, amax, lse, z
    if s.phi == PHI_SOFTMAX:
        amax = s.a[0]
        for j in range(1, k):
            if s.a[j] > amax:
                amax = s.a[j]
        lse = 0.0
        for j in range(k):
            lse += exp(s.a[j] - amax)
        lse = amax + log(lse)
        for j in range(k):
            s.y_hat[j] = exp(s.a[j] - lse)
            loss += _xlogx(y[j]) - y[j] * (s.a[j] - lse)
        return loss
    for j in range(k):
        a = s.a[j]
        if s.phi == PHI_IDENTITY:
            s.y_hat[j] = a
            loss += 0.5 * (y[j] - a) * (y[j] - a)
        elif s.phi == PHI_LOGISTIC:
            if a >= 0.0:
                s.y_hat[j] = 1.0 / (1.0 + exp(-a))
            else:
                z = exp(a)
                s.y_hat[j] = z / (1.0 + z)
            loss += _bernoulli_loss(y[j], a)
        elif s.phi == PHI_TANH:
            s.y_hat[j] = tanh(a)
            # L_tanh(y, a) = L_logistic((1 + y) / 2, 2a).
            loss += _bernoulli_loss(0.5 * (1.0 + y[j]), 2.0 * a)
        elif s.phi == PHI_ARCTAN:
            s.y_hat[j] = atan(a)
            z = log(fabs(a)) + 0.5 * log1p(1.0 / (a * a)) if fabs(a) > 1.0 \
                else 0.5 * log1p(a * a)
            loss += a * (s.y_hat[j] - y[j]) - z - log(cos(y[j]))
        elif s.phi == PHI_EXP:
            s.y_hat[j] = exp(a)
            loss += _xlogx(y[j]) - y[j] * a - y[j] + s.y_hat[j]
        elif s.phi == PHI_SIGN:
            # An undecided prediction (a = 0) counts as a mistake, as in the Perceptron.
            s.y_hat[j] = y[j] if y[j] * a > 0.0 else -y[j]
            loss += -y[j] * a if y[j] * a < 0.0 else 0.0
    return loss


cdef inline double _dot(State* s, Py_ssize_t j, const double* x_val,
                        const index_t* x_ind, Py_ssize_t nnz, bint dense) noexcept nogil:
    cdef Py_ssize_t q
    cdef const double* w = s.num + j * s.n
    cdef double total = 0.0
    if dense:
        for q in range(nnz):
            total += w[q] * x_val[q]
    else:
        for q in range(nnz):
            total += w[x_ind[q]] * x_val[q]
    return total


cdef inline bint _needs_reshift(State* s, double top, double shift) noexcept nogil:
    """Whether a coordinate outgrew the row's shift enough to risk overflow."""
    if s.psi == PSI_PNORM:
        return top > shift * exp(SHIFT_SLACK / s.p)
    return top - shift > SHIFT_SLACK


cdef inline void _update_row(State* s, Py_ssize_t j, double step, const double* x_val,
                             const index_t* x_ind, Py_ssize_t nnz,
                             bint dense) noexcept nogil:
    """theta_j <- theta_j - step * x (KW01 eq. 20), keeping the weight terms in sync."""
    cdef Py_ssize_t q, i, base = j * s.n
    cdef double* theta = s.theta + base
    cdef double top, v, old, total = 0.0, mass = 0.0
    cdef bint normalized = _normalized(s.psi)
    if s.psi == PSI_IDENTITY:
        if dense:
            for q in range(nnz):
                theta[q] -= step * x_val[q]
        else:
            for q in range(nnz):
                theta[x_ind[q]] -= step * x_val[q]
        return
    top = s.shift[j]
    for q in range(nnz):
        i = q if dense else x_ind[q]
        old = s.den[base + i] if normalized else 0.0
        theta[i] -= step * x_val[q]
        _weight_terms(s, base + i, s.shift[j])
        if normalized:
            v = _shift_value(s, theta[i])
            if v > top:
                top = v
            if dense:
                # Every coordinate is rewritten: the normalizer is summed afresh.
                total += s.den[base + i]
            else:
                total += s.den[base + i] - old
                mass += fabs(s.den[base + i]) + fabs(old)
    if not normalized:
        return
    if dense:
        s.norm[j] = total
    else:
        s.norm[j] += total
        s.mass[j] += mass
    if (_needs_reshift(s, top, s.shift[j]) or not s.norm[j] > exp(-SHIFT_SLACK)
            or s.mass[j] > MASS_LIMIT * s.norm[j]):
        _recompute_row(s, j)
    else:
        _set_scale(s, j)


cdef inline bint _trial(State* s, const double* x_val, const index_t* x_ind,
                        Py_ssize_t nnz, bint dense, const double* y, double weight,
                        double* loss) noexcept nogil:
    """One trial of KW01 Figure 5; returns False if anything became non-finite."""
    cdef Py_ssize_t j
    cdef double residual, step_scale = s.eta * weight
    for j in range(s.k):
        s.a[j] = s.scale[j] * _dot(s, j, x_val, x_ind, nnz, dense) + s.intercept[j]
        if not isfinite(s.a[j]):
            return False
    loss[0] = _transfer_and_loss(s, y)
    if not isfinite(loss[0]):
        return False
    if s.psi == PSI_EG_PM:
        # HKW §III: EG on x' = (Ux, -Ux), so the parameter step carries a factor U.
        step_scale *= s.U
    for j in range(s.k):
        residual = s.y_hat[j] - y[j]
        if residual == 0.0:
            continue
        _update_row(s, j, step_scale * residual, x_val, x_ind, nnz, dense)
        if s.fit_intercept:
            s.intercept[j] -= s.eta * weight * residual
    return True


cdef bint _state_finite(State* s) noexcept nogil:
    cdef Py_ssize_t q
    for q in range(s.k * s.n):
        if not isfinite(s.theta[q]) or not isfinite(s.num[q]):
            return False
    for q in range(s.k):
        if not isfinite(s.intercept[q]) or not isfinite(s.scale[q]):
            return False
    return True


cdef class TrialLoop:
    """State of one GA run: parameters (written in place) and scratch buffers.

    Parameters
    ----------
    psi, phi : int
        Codes from :class:`PsiCode` and :class:`PhiCode`.
    theta : ndarray of shape (k, n), float64, C-contiguous
        Parameters Theta, updated in place.
    intercept : ndarray of shape (k,), float64
        Intercepts b, updated in place.
    eta, U, p : float
        Learning rate, EG+- scale and p-norm exponent.
    fit_intercept : bool
        Whether b is learned.
    """
    cdef State s
    cdef double[:, ::1] theta
    cdef double[:, ::1] num
    cdef double[:, ::1] den
    cdef double[::1] intercept
    cdef double[::1] buffers   # norm, shift, scale, mass, a, y_hat (k each)

    def __init__(self, int psi, int phi, double[:, ::1] theta, double[::1] intercept,
                 double eta, double U, double p, bint fit_intercept):
        import numpy as np

        k, n = theta.shape[0], theta.shape[1]
        self.theta = theta
        self.intercept = intercept
        self.num = theta if psi == PSI_IDENTITY else np.empty((k, n))
        self.den = self.num if psi != PSI_EG_PM and psi != PSI_PNORM else np.empty((k, n))
        self.buffers = np.zeros(6 * k)
        self.s.psi, self.s.phi, self.s.k, self.s.n = psi, phi, k, n
        self.s.eta, self.s.U, self.s.p = eta, U, p
        self.s.fit_intercept = fit_intercept
        self.s.theta = &self.theta[0, 0]
        self.s.num = &self.num[0, 0]
        self.s.den = &self.den[0, 0]
        self.s.intercept = &self.intercept[0]
        self.s.norm = &self.buffers[0]
        self.s.shift = &self.buffers[k]
        self.s.scale = &self.buffers[2 * k]
        self.s.mass = &self.buffers[3 * k]
        self.s.a = &self.buffers[4 * k]
        self.s.y_hat = &self.buffers[5 * k]
        with nogil:
            _recompute_all(&self.s)

    def run_dense(self, const double[:, ::1] X, const double[:, ::1] Y,
                  const double[::1] sample_weight, const Py_ssize_t[::1] order):
        """Run one trial per entry of ``order`` on the dense rows of X.

        ``sample_weight`` may be empty (all weights 1). Returns
        ``(status, trials, loss_sum)``: on ``DIVERGED``, ``trials`` is the position in
        ``order`` of the failing trial and the state must be discarded.
        """
        cdef Py_ssize_t t = 0, r, n_trials = order.shape[0]
        cdef bint weighted = sample_weight.shape[0] > 0, ok = True
        cdef double loss, total = 0.0, weight = 1.0
        cdef const int32_t* no_index = NULL
        with nogil:
            while t < n_trials:
                r = order[t]
                if weighted:
                    weight = sample_weight[r]
                ok = _trial(&self.s, &X[r, 0], no_index, self.s.n, True, &Y[r, 0],
                            weight, &loss)
                if not ok:
                    break
                total += weight * loss
                t += 1
            ok = ok and _state_finite(&self.s)
        return (OK if ok else DIVERGED), t, total

    def run_csr(self, const double[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, const double[:, ::1] Y,
                const double[::1] sample_weight, const Py_ssize_t[::1] order):
        """Same as :meth:`run_dense` for the rows of a CSR matrix."""
        cdef Py_ssize_t t = 0, r, start, n_trials = order.shape[0]
        cdef bint weighted = sample_weight.shape[0] > 0, ok = True
        cdef double loss, total = 0.0, weight = 1.0
        cdef const double* values = &data[0] if data.shape[0] > 0 else NULL
        cdef const index_t* columns = &indices[0] if indices.shape[0] > 0 else NULL
        with nogil:
            while t < n_trials:
                r = order[t]
                start = indptr[r]
                if weighted:
                    weight = sample_weight[r]
                ok = _trial(&self.s, values + start, columns + start,
                            indptr[r + 1] - start, False, &Y[r, 0], weight, &loss)
                if not ok:
                    break
                total += weight * loss
                t += 1
                self.s.touched += indptr[r + 1] - start
                if self.s.touched >= self.s.n and _normalized(self.s.psi):
                    _recompute_all(&self.s)
            ok = ok and _state_finite(&self.s)
        return (OK if ok else DIVERGED), t, total

    def weights(self):
        """The weight matrix Omega = psi(Theta) as a new (k, n) array."""
        import numpy as np

        out = np.asarray(self.num).copy()
        out *= np.asarray(self.buffers[2 * self.s.k:3 * self.s.k])[:, None]
        return out
