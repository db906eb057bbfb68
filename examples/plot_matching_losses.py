r"""
=======================================
Transfer functions and matching losses
=======================================

Each transfer function φ comes with its *matching loss* L_φ, the Bregman divergence
of its potential (KW01 eq. 2). Its defining property (KW01 eq. 3) is that its
derivative with respect to the activation is the prediction error,

.. math::

   \frac{d}{da} L_\phi(y, \phi(a)) = \phi(a) - y,

which is why the GA update ``Theta <- Theta - eta (y_hat - y) x^T`` is the same for
every φ. This example draws the one-dimensional φ of the registry
:data:`sklearn_ga.PHI` and their losses for the target y = φ(1), and checks the
derivative property numerically.
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_ga import PHI

a = np.linspace(-4, 4, 801)[:, None]  # activations, shape (m, k=1)
names = [name for name in PHI if name not in ("softmax", "sign")]

fig, axes = plt.subplots(1, 3, figsize=(13, 4))
for name in names:
    phi = PHI[name]
    y = phi.transfer(np.array([[1.0]]))  # the target: phi at activation 1
    loss = phi.loss(np.broadcast_to(y, a.shape), a)[:, 0]
    error = phi.transfer(a)[:, 0] - y[0, 0]
    slope = np.gradient(loss, a[:, 0])
    print(f"{name:8}  y = {y[0, 0]:.4f}  min loss {loss.min():.2e} at a = "
          f"{a[loss.argmin(), 0]:.2f}  max |dL/da - (y_hat - y)| = "
          f"{np.abs(slope - error)[1:-1].max():.1e}")
    axes[0].plot(a, phi.transfer(a), label=name)
    axes[1].plot(a, loss, label=name)
    axes[2].plot(a, slope, label=name)

axes[0].set_title("transfer function φ(a)")
axes[1].set_title("matching loss L_φ(φ(1), φ(a))")
axes[1].set_ylim(0, 4)
axes[2].set_title("dL/da = φ(a) − φ(1)")
for ax in axes:
    ax.axvline(1.0, color="0.7", lw=0.8)
    ax.set_xlabel("activation a")
    ax.grid(alpha=0.3)
axes[0].set_ylim(-2, 3)
axes[2].set_ylim(-3, 3)
axes[0].legend()
fig.tight_layout()

# %%
# All losses vanish at a = 1, where the prediction equals the target, and are convex
# in the activation. The third panel is the numerical derivative of the second: it is
# the prediction error φ(a) − y. The softmax transfer function (vector-valued, with
# the relative entropy as its matching loss) and ``sign`` (the Perceptron's hinge at
# zero) are in the registry too:
for name in ("softmax", "sign"):
    print(f"{name:8}  targets in {PHI[name].range_text()}")
plt.show()
