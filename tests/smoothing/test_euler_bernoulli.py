"""The ANCF beam before any contact, against Euler–Bernoulli's closed forms: a cantilever's static deflection
and a cantilever's and a simply supported beam's natural frequencies."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

from jaxcontact.smoothing.beam import Beam, Pin, flexible_system, straight_beam

# A steel bar of 1.8 m, 5 cm square (the double pendulum's links).
RHO, E, A, I, L = 7801.0, 2.1e11, 2.5e-3, 0.05**4 / 12, 1.8
G = 9.81
# β_n L of a cantilever's first three bending modes: the roots of cos βL cosh βL = −1.
CANTILEVER_BETA_L = (1.8751040687119611, 4.6940911329741746, 7.8547574382376126)


def _beam(n_elements, pins=lambda beam: ()):
    beam = Beam("b", n_elements)
    system = flexible_system([beam], pins(beam), gravity="g", smoothing="h")
    p = {"g": G, "h": 0.0, "b_rho": RHO, "b_E": E, "b_A": A, "b_I": I, "b_L": L}
    return system, {k: jnp.asarray(v) for k, v in p.items()}, jnp.asarray(straight_beam(beam, L))


def _clamped(n):
    """The free coordinates of a cantilever clamped at node 0 (its position and slope held: r = 0, r' = (1, 0))."""
    return np.arange(4, n)


def test_a_cantilevers_tip_deflection_under_its_weight_is_euler_bernoullis():
    # The exact deflection is a quartic; Hermite cubics with consistent loads give it exactly at the nodes, so one
    # element already matches w L⁴ / (8 EI). The load is a hundredth of the bar's weight: the tip then drops by
    # 1.3e-5 of L and the beam's geometric nonlinearity, of relative size (δ/L)², is below the tolerance (at the
    # full weight the static solve sits 1.3e-6 under the linear theory with 8 elements, 8.7e-5 with one).
    g = G / 100
    w = RHO * A * g
    exact = w * L**4 / (8 * E * I)
    for n_elements in (1, 2, 4):
        system, p, q0 = _beam(n_elements)
        p = {**p, "g": jnp.asarray(g)}
        free = _clamped(system.n_dof)
        zero = jnp.zeros(system.n_dof)

        def residual(x):
            return system.forces(q0.at[free].set(x), zero, 0.0, p)[free]

        @jax.jit
        def newton(x):  # Newton on the nonlinear static equilibrium
            return x - jnp.linalg.solve(jax.jacfwd(residual)(x), residual(x))

        x = q0[free]
        for _ in range(8):
            x = newton(x)
        assert float(jnp.abs(residual(x)).max()) < 1e-14 * E * A  # the axial force's rounding
        tip = -float(x[-3])  # the last node's y
        assert abs(tip / exact - 1) < 1e-8, (n_elements, tip, exact)


def _frequencies(system, p, q0, basis):
    """The natural frequencies (rad/s, ascending) about the straight unloaded beam, on the columns of ``basis``."""
    zero = jnp.zeros(system.n_dof)
    K = -np.asarray(jax.jit(jax.jacfwd(lambda q: system.forces(q, zero, 0.0, {**p, "g": jnp.asarray(0.0)})))(q0))
    M = np.asarray(jax.jit(system.mass)(q0, p))
    Kr, Mr = basis.T @ K @ basis, basis.T @ M @ basis
    return np.sqrt(np.clip(scipy.linalg.eigh(0.5 * (Kr + Kr.T), Mr, eigvals_only=True), 0.0, None)), (Kr, Mr)


def _bending(system, p, q0, basis):
    """The bending frequencies: the modes whose shape lies in the transverse coordinates (y, y')."""
    _, (Kr, Mr) = _frequencies(system, p, q0, basis)
    lam, vec = scipy.linalg.eigh(0.5 * (Kr + Kr.T), Mr)
    shapes = basis @ vec
    transverse = np.zeros(system.n_dof, bool)
    transverse[1::2] = True  # y and y' of every node
    share = (shapes[transverse] ** 2).sum(0) / (shapes**2).sum(0)
    return np.sqrt(lam[share > 0.99])


@pytest.mark.parametrize("support", ["cantilever", "simply supported"])
def test_the_bending_frequencies_converge_to_euler_bernoullis_at_the_elements_order(support):
    scale = np.sqrt(E * I / (RHO * A)) / L**2
    if support == "cantilever":
        exact = np.array(CANTILEVER_BETA_L) ** 2 * scale
    else:
        exact = (np.pi * np.arange(1, 4)) ** 2 * scale
    errors = []
    for n_elements in (2, 4, 8, 16):
        if support == "cantilever":
            system, p, q0 = _beam(n_elements)
            basis = np.eye(system.n_dof)[:, _clamped(system.n_dof)]
        else:  # revolute pins at both ends (the library's joints): the modes live in the null space of Φ_q
            system, p, q0 = _beam(n_elements, lambda b: (Pin(b, 0, point=(0.0, 0.0)), Pin(b, -1, point=(L, 0.0))))
            basis = scipy.linalg.null_space(np.asarray(jax.jacfwd(lambda q: system.constraints(q, 0.0, p))(q0)))
        omega = _bending(system, p, q0, basis)[:3]
        errors.append(omega / exact - 1)
    errors = np.array(errors)  # (refinements, modes)
    # A consistent-mass Hermite element errs from above, by O(l⁴): once the mode is resolved, each halving of the
    # element divides the error by about 16 (the second mode on 2 elements is not yet resolved).
    assert (errors > 0).all(), errors
    assert errors[-1, 0] < 2e-6 and errors[-1, 2] < 1e-4, errors
    ratios = errors[:-1] / errors[1:]
    assert (ratios[1:] > 12).all() and (ratios[-1] > 14).all(), ratios
