"""Smoothed ANCF beams: strain measures, linearised smoothing = (M + h²K/6, hK/2), pins, the double pendulum."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.smoothing.beam import Beam, Pin, flexible_system, straight_beam, strains


def _beam_params(names, h=0.0, E=2.1e11, L=1.8):
    p = {"g": 9.81, "h": h}
    for b in names:
        p.update({f"{b}_rho": 7801.0, f"{b}_E": E, f"{b}_A": 2.5e-3, f"{b}_I": 0.05**4 / 12, f"{b}_L": L})
    return {k: jnp.asarray(v) for k, v in p.items()}


def test_rigid_motion_has_no_strain():
    beam = Beam("b", 3)
    q = straight_beam(beam, 1.2, start=(0.3, -0.7), angle=2.1)
    for j in range(3):
        e = jnp.asarray(q[4 * j : 4 * j + 8])
        for xi in (0.0, 0.37, 1.0):
            np.testing.assert_allclose(strains(e, xi, 0.4), 0.0, atol=1e-14)


def test_curvature_of_a_circular_arc():
    # Nodes on a circle of radius R with unit tangents: the Hermite element's curvature ≈ 1/R.
    R, l = 2.0, 0.1
    th = np.array([0.0, l / R])
    e = np.concatenate([[R * np.sin(t), R * (1 - np.cos(t)), np.cos(t), np.sin(t)] for t in th])
    eps, kappa = strains(jnp.asarray(e), 0.5, l)
    assert abs(float(kappa) - 1 / R) < 1e-4 and abs(float(eps)) < 1e-5


def test_linearised_smoothing_is_the_linear_form():
    # About the straight state, M̄ − M = h²K/6 and the elastic force is −K (q + h/2 u) to first order,
    # K the Hessian of the elastic energy ½∫(EA ε² + EI κ²) — the linear model smoothing.
    beam = Beam("b", 2)
    h = 0.01
    system = flexible_system([beam], gravity="g", smoothing="h")
    p = {**_beam_params(["b"], h=h), "g": jnp.asarray(0.0)}
    p0 = {**p, "h": jnp.asarray(0.0)}
    q0 = jnp.asarray(straight_beam(beam, 1.8))
    n = system.n_dof
    K = -jax.jit(jax.jacfwd(lambda q: system.forces(q, jnp.zeros(n), 0.0, p0)))(q0)
    np.testing.assert_allclose(K, K.T, atol=1e-6 * np.abs(K).max())
    mass = jax.jit(system.mass)
    dM = mass(q0, p) - mass(q0, p0)
    np.testing.assert_allclose(dM, h**2 / 6 * K, atol=1e-9 * np.abs(K).max() * h**2)
    C = -jax.jit(jax.jacfwd(lambda u: system.forces(q0, u, 0.0, p)))(jnp.zeros(n))
    np.testing.assert_allclose(C, h / 2 * K, atol=1e-9 * np.abs(K).max() * h)


def _tip_runs(n_elements, t_final, reference):
    """Tip (free end of beam 2) of the smoothed double pendulum (h = 0.01, Tsit5) and of the unsmoothed reference."""
    from jaxcontact.smoothing import solve, vector_field
    from jaxcontact.smoothing.beam import flexible_double_pendulum

    system, p, y0 = flexible_double_pendulum(n_elements, h=0.01)
    f, n = vector_field(system), system.n_dof
    ts = jnp.linspace(0.0, t_final, 11)
    sol = jax.jit(lambda p: solve(f, y0, p, ts, rtol=1e-6, atol=1e-8))(p)
    assert bool(sol.ok)
    return np.asarray(sol.ys)[:, n - 4 : n - 2], reference(f, y0, {**p, "h": jnp.asarray(0.0)}, ts)[:, n - 4 : n - 2]


def test_e5_smoothed_explicit_tip_matches_unsmoothed_reference():
    # 1 element per beam, 0.1 s: reference = the unsmoothed beam by Tsit5 at 1e-9 (thousands of small
    # steps: the axial modes); the smoothed model takes ~30 steps. Tolerance 1 mm on a tip that falls ~5 cm.
    from jaxcontact.smoothing import solve

    def tight(f, y0, p, ts):
        sol = jax.jit(lambda p: solve(f, y0, p, ts, rtol=1e-9, atol=1e-11, max_steps=200_000))(p)
        assert bool(sol.ok)
        return np.asarray(sol.ys)

    tip, ref = _tip_runs(1, 0.1, tight)
    assert ref[-1, 1] < -0.04  # it did fall
    assert np.linalg.norm(tip - ref, axis=1).max() < 1e-3


@pytest.mark.slow
def test_e5_smoothed_explicit_tip_matches_stiff_radau():
    # 2 elements per beam, 0.2 s, stiff reference scipy Radau (1e-7/1e-9, ≈ 20 s): tip within 1 mm.
    import scipy.integrate

    def radau(f, y0, p, ts):
        fj, jac = jax.jit(f), jax.jit(jax.jacfwd(f, argnums=1))
        r = scipy.integrate.solve_ivp(
            lambda t, y: np.asarray(fj(t, y, p)),
            (0.0, float(ts[-1])),
            np.asarray(y0),
            method="Radau",
            t_eval=np.asarray(ts),
            rtol=1e-7,
            atol=1e-9,
            jac=lambda t, y: np.asarray(jac(t, y, p)),
        )
        assert r.status == 0
        return r.y.T

    tip, ref = _tip_runs(2, 0.2, radau)
    assert ref[-1, 1] < -0.15
    assert np.linalg.norm(tip - ref, axis=1).max() < 1e-3


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_pin_to_a_rigid_body_equals_pin_to_ground_when_the_body_is_held():
    # A beam pinned to a point of a Mechanism body that drivers hold at (0.3, 0, θ = 0.4) must swing
    # exactly like the same beam pinned to that world point on the ground (the two pin code paths).
    from jaxcontact.planar import Mechanism
    from jaxcontact.smoothing import solve, vector_field

    mech = Mechanism("holder")
    base = mech.body("base", 2.0, 0.1)
    for c, v in (("x", 0.3), ("y", 0.0), ("theta", 0.4)):
        mech.driver(base, c, v)
    rigid, rp = mech.build()
    local = np.array([0.2, 0.1])
    c, s = np.cos(0.4), np.sin(0.4)
    world = (0.3 + c * local[0] - s * local[1], s * local[0] + c * local[1])
    beam = Beam("b", 1)
    on_body = flexible_system([beam], [Pin(beam, 0, base, point=tuple(local))], rigid=rigid)
    on_ground = flexible_system([beam], [Pin(beam, 0, None, point=world)])
    p = {**rp, **_beam_params(["b"], h=0.01, E=2e9, L=1.0)}
    qb = straight_beam(beam, 1.0, start=world)
    ts = jnp.linspace(0.0, 0.05, 6)
    runs = []
    for system, q0 in ((on_body, np.concatenate([[0.3, 0.0, 0.4], qb])), (on_ground, qb)):
        y0 = jnp.asarray(np.concatenate([q0, np.zeros_like(q0)]))
        sol = jax.jit(lambda p: solve(vector_field(system), y0, p, ts, rtol=1e-9, atol=1e-11))(p)
        assert bool(sol.ok)
        n = system.n_dof
        runs.append(np.asarray(sol.ys)[:, n - beam.n_dof : n])
    assert np.abs(runs[1][-1, 5] - qb[5]) > 1e-3  # the free end fell
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-8)
