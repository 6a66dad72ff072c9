"""Moreau–Jean with the cones' semismooth Newton (``solver="newton"``) against the cones' Gauss–Seidel.

A column of spheres dropped onto a rough plane is a chain of contacts: Gauss–Seidel passes a correction one
contact per sweep, Newton solves the whole chain in a few dense steps. Both solve the same per-step problem, so
where both converge the trajectories agree to the solvers' tolerance.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, SpherePlane, SphereSphere
from jaxcontact.stepping import cone_contacts
from jaxcontact.stepping.moreau_jean import MoreauJean

N, RADIUS, DT, STEPS = 3, 0.05, 1e-3, 100
P = {"radius": RADIUS, "mass": 1.0, "restitution": 0.0, "friction": 0.5, "gravity": 9.81}


def _column(n):
    asm = Assembly(gravity="gravity")
    balls = [asm.add_body(f"ball{i}", mass="mass", inertia=("0.4*mass*radius**2",) * 3) for i in range(n)]
    asm.add_contact(
        SpherePlane("plane", restitution="restitution", friction="friction", body=balls[0], radius="radius")
    )
    for i in range(n - 1):
        asm.add_contact(
            SphereSphere(
                f"contact{i}",
                restitution="restitution",
                friction="friction",
                a=balls[i],
                b=balls[i + 1],
                radius_a="radius",
                radius_b="radius",
            )
        )
    return asm.system()


COLUMN = _column(N)


def _start(tilt, speed=0.0):
    """Sphere i a little above sphere i − 1, shifted sideways by ``tilt`` · i (an oblique stack: friction works),
    all moving along x at ``speed``."""
    i = jnp.arange(N, dtype=float)
    z = RADIUS * (2 * i + 1) + (i + 1) * 0.005
    q = jnp.stack([tilt * i, 0 * i, z, 1 + 0 * i, 0 * i, 0 * i, 0 * i], axis=1).reshape(-1)
    return q, jnp.zeros((N, 6)).at[:, 0].set(speed).reshape(-1)


def _run(scheme, tilt=0.004):
    q0, u0 = _start(tilt)
    return simulate(COLUMN, P, q0, u0, dt=DT, n_steps=STEPS, scheme=scheme)


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_newton_and_gauss_seidel_give_the_same_column(monkeypatch):
    newton = _run(MoreauJean(solver="newton", differentiation="implicit", tol=1e-12))
    rescued = _run(MoreauJean(differentiation="implicit", iterations=20000, tol=1e-12))
    # Gauss–Seidel alone: without the forward runs' hand-over of unsolved problems to Newton, at ω = 1 and
    # over-relaxed after the first sweep (the default).
    monkeypatch.setattr(cone_contacts, "RESCUE_AFTER", None)
    jax.clear_caches()  # the same scheme: retrace
    nsgs = _run(MoreauJean(differentiation="implicit", iterations=20000, tol=1e-12, omega=1.0))
    relaxed = _run(MoreauJean(differentiation="implicit", iterations=20000, tol=1e-12))
    assert bool(np.all(np.asarray(rescued.diagnostics.converged)))
    for tr in (rescued, relaxed):
        np.testing.assert_allclose(np.asarray(tr.q), np.asarray(nsgs.q), rtol=0, atol=1e-9)
    for tr in (newton, nsgs, relaxed):
        assert bool(np.all(np.asarray(tr.diagnostics.converged)))
    sweeps = lambda tr: np.asarray(tr.diagnostics.iterations)  # noqa: E731
    assert sweeps(relaxed).sum() < 0.7 * sweeps(nsgs).sum()
    assert np.asarray(newton.impulse_normal).max() > 0.05  # the column lands and stacks
    np.testing.assert_allclose(np.asarray(newton.q), np.asarray(nsgs.q), rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(newton.u), np.asarray(nsgs.u), rtol=0, atol=1e-7)
    # Newton needs a few steps where Gauss–Seidel sweeps the chain many times.
    assert int(np.asarray(newton.diagnostics.iterations).max()) <= 20
    assert int(sweeps(nsgs).max()) > 100


@pytest.mark.slow  # two reverse-mode programs through the whole run: ~1 min of compile
def test_newton_gradient_is_the_implicit_one_of_gauss_seidel():
    """The reverse-mode derivative of the top sphere's final x in friction, the column landing while it slides
    along x: the same through both solvers."""

    def top_x(mu, scheme):
        q0, u0 = _start(0.004, speed=0.5)
        tr = simulate(COLUMN, {**P, "friction": mu}, q0, u0, dt=DT, n_steps=STEPS, scheme=scheme, save_every=STEPS)
        return tr.q[-1, 7 * (N - 1)]

    g_newton = jax.grad(top_x)(0.1, MoreauJean(solver="newton", differentiation="implicit", tol=1e-12))
    g_nsgs = jax.grad(top_x)(0.1, MoreauJean(differentiation="implicit", iterations=20000, tol=1e-12))
    assert np.isfinite(float(g_newton)) and abs(float(g_nsgs)) > 1e-6
    assert abs(float(g_newton) - float(g_nsgs)) <= 1e-6 * abs(float(g_nsgs))


def test_newton_is_refused_where_there_are_no_cones_and_declares_reverse_mode_only():
    scheme = MoreauJean(solver="newton")
    assert scheme.differentiation_modes == frozenset({"reverse"})
    assert scheme.solver_for(COLUMN) == "newton"
    m = get_model("sliding-block")  # planar friction: the friction LCP, no cones
    with pytest.raises(ValueError, match=r"solver = 'newton' solves Coulomb cones \(spatial friction\) only"):
        simulate(m.system, m.params, *m.initial_state(m.params), dt=1e-3, n_steps=2, scheme=scheme)
    with pytest.raises(ValueError, match=r"solver = 'bogus' must be one of .*'newton'"):
        MoreauJean(solver="bogus")
