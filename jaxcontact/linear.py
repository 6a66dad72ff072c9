"""Linear time-invariant Lagrangian systems with linear contact relations (Siconos' LTI shortcut).

    M u̇ + C u + K q = F + H_Nᵀ λ_N + H_Tᵀ λ_T,   gaps g_N = H_N q + b_N,   slip γ_T = H_T u

M, K, C, F, H_N, b_N, H_T and the contact laws are array leaves of the
parameter dict (batchable, differentiable); only the sizes are static.

A Siconos model ports line for line:

=====================================================  =====================================================
Siconos                                                 jaxcontact.linear
=====================================================  =====================================================
``LagrangianLinearTIDS(q0, v0, M, K, C)``               ``linear_system(M=M, K=K, C=C, ...)``; (q0, v0) go to
                                                        ``simulate(system, params, q0, v0, ...)``
``ds.setFExtPtr(F)`` (constant)                         ``F=F``
``LagrangianLinearTIR(H, b)`` with ``NewtonImpactNSL``  one row of ``H_N`` and of ``b_N`` per interaction
``NewtonImpactNSL(e)``                                  ``restitution`` entry e of that contact
``LagrangianLinearTIR(H, b)`` with a 2-row H and        ``H[0]`` → a row of ``H_N``, ``b[0]`` → ``b_N``,
``NewtonImpactFrictionNSL(en, et, mu, 2)``              ``H[1]`` → the same row of ``H_T`` (b[1] does not
                                                        enter a velocity), ``restitution`` en,
                                                        ``tangential_restitution`` et, ``friction`` mu
``MoreauJeanOSI(theta)`` + ``TimeStepping(td, osi,      ``simulate(..., dt=h, n_steps=N,
LCP())``                                                scheme=MoreauJean(theta=theta,
                                                        force_rule="siconos"))``
``FrictionContact(2)`` as the one-step problem          the same: friction comes with ``H_T``; the default
(``NewtonImpactFrictionNSL(en, et, mu, 2)``)            contact solver (NSGS) is Siconos' default too
``LCP()`` (Siconos' Lemke)                              ``solver="lemke"``, or the default PGS: one sweep is
                                                        exact with a single contact
``osi.setConstraintActivationThreshold(c)``             ``activation_tol=c`` (Siconos' default 0)
=====================================================  =====================================================

Several interactions stack their rows (contact i is row i of H_N, b_N, H_T).
A normal-only interaction in a system with friction gets friction 0 and a zero H_T row.

``force_rule="siconos"`` reproduces Siconos 4.4's MoreauJeanOSI step: K and C
implicit (iteration matrix M + hθC + h²θ²K), the external force blended
(1 − θ) F(t_A) + θ F(t_E), contacts in the one-step problem when Siconos'
prediction g + ½ h ġ at the step start is ≤ 0, Newton's law ε ġ(t_A) literal.
Ported from Siconos' tutorials, the bouncing ball and the Woodpecker (three
frictional contacts, h = 2e-5) then give Siconos' q to 1e-12 over whole runs
(tests/stepping/test_siconos_mode.py). The default rule (``MoreauJean()``)
instead evaluates every force at the θ-point q_M with u_A (for θ = ½ the
Störmer–Verlet treatment of K, stable for h ω < 2) and lets a penetrated
contact that separates at most reverse its velocity, so it agrees with Siconos
to O(h²) per step in K and C, and exactly when K = C = 0 and no contact is
penetrated (a ball in flight).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxcontact.system import ContactLaws, LagrangianSystem


def linear_system(
    M,
    K=None,
    C=None,
    F=None,
    *,
    H_N=None,
    b_N=None,
    H_T=None,
    restitution=None,
    tangential_restitution=None,
    friction=None,
    names=(),
):
    """Build ``(system, params)`` for M u̇ + C u + K q = F + contact impulses.

    Args:
      M: (n, n) symmetric positive definite mass matrix.
      K, C: (n, n) stiffness and damping (zero when omitted); F: (n,) constant force.
      H_N: (k, n), b_N: (k,) — gaps g_N = H_N q + b_N (no contact when omitted).
      H_T: (k, n) tangent rows — slip velocities γ_T = H_T u (frictionless when omitted).
      restitution (ε_N), tangential_restitution (ε_T), friction (μ): (k,) or scalars
        (broadcast); defaults 0.
      names: optional coordinate names.

    Returns:
      ``(LagrangianSystem, params)`` with params keys ``M, K, C, F`` and, with
      contacts, ``H_N, b_N, restitution, tangential_restitution, friction`` (and ``H_T``).
    """
    M = _matrix("M", M)
    n = M.shape[0]
    if not np.allclose(M, M.T, rtol=1e-12, atol=0):
        raise ValueError(f"M must be symmetric; got {M}")
    if np.any(np.linalg.eigvalsh(M) <= 0):
        raise ValueError(f"M must be positive definite; its eigenvalues are {np.linalg.eigvalsh(M)}")
    params = {"M": M, "K": _matrix("K", K, n), "C": _matrix("C", C, n), "F": _vector("F", F, n)}
    k = 0
    if H_N is not None:
        H_N = np.atleast_2d(np.asarray(H_N, float))
        k = H_N.shape[0]
        if H_N.shape != (k, n):
            raise ValueError(f"H_N must have shape (k, n = {n}); got {H_N.shape}")
        params["H_N"] = H_N
        params["b_N"] = _vector("b_N", b_N, k)
        for name, val, lo, hi in (
            ("restitution", restitution, 0, 1),
            ("tangential_restitution", tangential_restitution, 0, 1),
            ("friction", friction, 0, np.inf),
        ):
            v = _vector(name, val, k)
            if np.any(v < lo) or np.any(v > hi):
                raise ValueError(f"{name} = {v} must lie in [{lo}, {hi}]")
            params[name] = v
        if H_T is not None:
            H_T = np.atleast_2d(np.asarray(H_T, float))
            if H_T.shape != (k, n):
                raise ValueError(f"H_T must have shape (k, n) = ({k}, {n}) like H_N; got {H_T.shape}")
            params["H_T"] = H_T
    elif any(v is not None for v in (b_N, H_T, restitution, tangential_restitution, friction)):
        raise ValueError("contact data (b_N, H_T, restitution, tangential_restitution, friction) given without H_N")
    for key, v in params.items():
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{key} = {v} must be finite")
    params = {key: jnp.asarray(v, jnp.result_type(float)) for key, v in params.items()}
    system = LagrangianSystem(
        n_dof=n,
        mass=_mass,
        forces=_forces,
        gaps=_gaps if k else None,
        slip_velocity=_slip if (k and H_T is not None) else None,
        laws=_laws if k else None,
        potential=_potential,
        names=tuple(names),
    )
    return system, params


def _matrix(name, A, n=None):
    if A is None:
        return np.zeros((n, n))
    A = np.atleast_2d(np.asarray(A, float))
    n = A.shape[0] if n is None else n
    if A.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}); got {A.shape}")
    return A


def _vector(name, v, n):
    if v is None:
        return np.zeros(n)
    v = np.asarray(v, float)
    if v.ndim == 0:
        return np.full(n, float(v))
    if v.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) or be a scalar; got {v.shape}")
    return v


def _mass(q, p):
    return p["M"].astype(q.dtype)


def _forces(q, u, t, p):
    return (p["F"] - p["K"] @ q - p["C"] @ u).astype(q.dtype)


def _gaps(q, t, p):
    return p["H_N"] @ q + p["b_N"]


def _slip(q, u, t, p):
    return p["H_T"] @ u


def _laws(p):
    return ContactLaws(p["restitution"], p["tangential_restitution"], p["friction"])


def _potential(q, t, p):
    """½ qᵀ K q − Fᵀ q (K's symmetric part; the constant force's potential)."""
    return 0.5 * q @ (p["K"] @ q) - p["F"] @ q
