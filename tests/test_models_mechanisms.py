"""Built-in planar mechanisms: the four-bar hitting a wall (the 2015 projection-correction paper) and the rocking block.

Independent truths: for a one-DOF linkage driven by a (nearly) constant generalized force,
the excursion after an impact scales with the kinetic energy, so successive apex
distances from the wall shrink by ε² (0.64 for ε = 0.8); Housner's plastic rocking
impact multiplies the angular velocity by 1 − (3/2) sin² α; a rocking block that does
not slip ends flat with its centre shifted by the rolled corner's offset.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import four_bar, get_model, rocking_block
from jaxcontact.simulate import simulate, simulate_model
from jaxcontact.stepping import MoreauJean
from jaxcontact.system import kinematics


def point_a_history(model, tr):
    xa = np.asarray(jax.vmap(four_bar.point_a, (0, None))(tr.q, model.params)[:, 0])
    va = np.asarray(jax.vmap(four_bar.point_a_velocity, (0, 0, None))(tr.q, tr.u, model.params)[:, 0])
    return xa, va


def apexes(gap, impacts):
    """Largest distance from the wall in each flight between two impact steps."""
    return np.array([gap[a:b].max() for a, b in zip(impacts[:-1], impacts[1:]) if b - a > 1])


def test_four_bar_model_parameters_and_state():
    m = get_model("four-bar")
    assert {"restitution", "torque", "wall_distance", "friction", "l1", "l2", "l3", "m1", "m2", "m3", "gravity"} <= set(
        m.params
    )
    assert float(m.params["restitution"]) == 0.8 and float(m.params["torque"]) == 10.0 and m.dt == 0.01
    q0, u0 = m.initial_state(m.params)
    np.testing.assert_allclose(q0, [0, 0.1, math.pi / 2, 0.2, 0.2, 0, 0.4, 0.1, 0], atol=1e-15)
    np.testing.assert_array_equal(u0, 0.0)
    m2 = get_model("four-bar", l1=0.25, l3=0.25)
    q, _ = m2.initial_state(m2.params)
    phi = jax.jit(lambda qq, pp: kinematics(m2.system, qq, 0.0, pp).phi)(q, m2.params)
    assert np.max(np.abs(np.asarray(phi))) < 1e-15
    assert float(four_bar.point_a(q, m2.params)[1]) == pytest.approx(0.25, abs=1e-15)
    with pytest.raises(ValueError, match=r"cannot close the loop"):
        get_model("four-bar", l2=0.05)
    with pytest.raises(ValueError, match=r"restitution = 1.2 \(from restitution\) must be in \[0, 1\]"):
        get_model("four-bar", restitution=1.2)
    with pytest.raises(ValueError, match=r"'bar2' mass = -0.2 \(from m2\) must be > 0"):
        get_model("four-bar", m2=-0.2)
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['length1'\]"):
        get_model("four-bar", length1=0.3)


def test_four_bar_hits_the_wall_bounces_and_rests_at_the_paper_step():
    """The four-bar as published, h = 0.01 s (no projection): impacts, shrinking bounces, rest at the wall,
    penetration bounded by one step of travel, ‖Φ‖ drifting (the paper's motivation)."""
    m = get_model("four-bar")
    tr = simulate_model(m)  # dt = 0.01, t_final = 1 s
    xa, va = point_a_history(m, tr)
    gap = xa + float(m.params["wall_distance"])
    impacts = np.nonzero(np.asarray(tr.impulse_normal[:, 0]) > 0)[0]
    assert 2 <= impacts[0] <= 4  # T accelerates a 0.06 m into the wall in ≈ 0.026 s
    assert va[impacts[0] - 1] < -4.0 and va[impacts[0]] > 0  # hits at ≈ 5 m/s and bounces back
    ap = apexes(gap, impacts)
    assert len(ap) >= 3 and np.all(np.diff(ap) < 0)
    assert np.max(np.abs(va[-10:])) < 1e-3  # at rest against the wall
    reach = m.dt * np.max(np.abs(va))  # one step of travel at the top speed
    pen = np.maximum(-gap, 0.0)
    assert np.max(pen) <= reach and np.max(np.diff(pen)) <= reach
    assert -reach <= gap[-1] <= 0.0
    phi = np.asarray(tr.diagnostics.phi)
    assert phi[0] < 1e-15 and phi[-1] > 1e-3  # uncorrected drift (the projection removes it)
    assert bool(np.all(np.asarray(tr.diagnostics.converged)))


def test_four_bar_bounces_shrink_by_restitution_squared():
    m = get_model("four-bar")
    tr = simulate_model(m, dt=1e-3, t_final=0.5)
    # The frictionless-by-structure variant (normal-only LCP) gives the same motion at μ = 0.
    system0, p0 = four_bar.mechanism(friction=False).build(four_bar.DEFAULTS)
    assert system0.slip_velocity is None
    tr0 = simulate(system0, p0, *four_bar.initial_state(p0), dt=1e-3, n_steps=500)
    np.testing.assert_allclose(tr0.q, tr.q, rtol=0, atol=1e-10)
    xa, va = point_a_history(m, tr)
    gap = xa + float(m.params["wall_distance"])
    impacts = np.nonzero(np.asarray(tr.impulse_normal[:, 0]) > 0)[0]
    ap = apexes(gap, impacts)
    assert len(ap) >= 6 and np.all(np.diff(ap[ap > 1e-4]) < 0)
    np.testing.assert_allclose(ap[1:3] / ap[:2], 0.8**2, rtol=0.03)
    assert np.max(np.abs(va[-50:])) < 1e-9
    pen = np.maximum(-gap, 0.0)
    assert np.max(pen) <= 1e-3 * np.max(np.abs(va))


def test_four_bar_batch_of_variations_equals_single_runs():
    """Restitution, wall distance and bar lengths varied in one vmapped run (initial states derived
    per sample): equal to single runs, and every sample keeps Φ(q0) = 0."""
    m = get_model("four-bar")
    B = 4
    batch = {k: np.full((B,), float(v)) for k, v in m.params.items()}
    batch["restitution"] = np.array([0.8, 0.5, 0.95, 0.0])
    batch["wall_distance"] = np.array([0.06, 0.04, 0.08, 0.05])
    batch["l1"] = batch["l3"] = np.array([0.2, 0.22, 0.18, 0.21])
    batch["l2"] = np.array([0.4, 0.38, 0.41, 0.4])
    # the model's own grid (100 steps): the single runs reuse the paper-step test's compiled program
    tb = simulate_model(m, params=batch, batched=True)
    assert np.max(np.asarray(tb.diagnostics.phi[:, 0])) < 1e-15
    for i in range(B):
        ti = simulate_model(m, params={k: jnp.asarray(v[i]) for k, v in batch.items()})
        np.testing.assert_allclose(tb.q[i], ti.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(tb.impulse_normal[i], ti.impulse_normal, rtol=0, atol=1e-12)
    assert np.all(np.asarray(tb.impulse_normal).sum(axis=(1, 2)) > 0)  # every variation hits its wall


def test_rocking_block_model_parameters_and_state():
    m = get_model("rocking-block")
    assert {"width", "height", "mass", "restitution", "friction", "tilt"} <= set(m.params)
    q0, _ = m.initial_state(m.params)
    g = np.asarray(m.system.gaps(q0, 0.0, m.params))
    assert g[0] == pytest.approx(0.0, abs=1e-16) and g[1] == pytest.approx(0.2 * math.sin(0.1), rel=1e-14)
    with pytest.raises(ValueError, match=r"tilt = 0.6 must satisfy \|tilt\| < atan\(width/height\)"):
        get_model("rocking-block", tilt=0.6)
    with pytest.raises(ValueError, match=r"'block' mass = 0.0 \(from mass\) must be > 0"):
        get_model("rocking-block", mass=0.0)


def test_rocking_block_rocks_with_housner_decay_and_comes_to_rest():
    m = get_model("rocking-block")
    tr = simulate_model(m)  # dt = 1e-3, 2 s
    th, w = np.asarray(tr.q[:, 2]), np.asarray(tr.u[:, 2])
    crossings = np.nonzero(np.diff(np.sign(th)) != 0)[0]
    assert len(crossings) >= 4  # it rocks from corner to corner
    # Housner's quarter period: θ(t) from θ0 at rest to 0 about a corner, t = acosh(1/(1 − θ0/α))/p.
    alpha = math.atan2(0.2, 0.4)
    p_ = math.sqrt(3 * 9.81 / (4 * math.hypot(0.1, 0.2)))
    assert tr.t[crossings[0]] == pytest.approx(math.acosh(1 / (1 - 0.1 / alpha)) / p_, abs=2e-3)
    r = float(rocking_block.housner_ratio(m.params))
    for i in crossings[:2]:  # angular velocity across the corner switch
        before, after = w[i - 1], w[i + 2]
        assert after / before == pytest.approx(r, rel=0.03)
    assert np.max(np.abs(w[-100:])) < 1e-9 and abs(th[-1]) < 1e-3
    # No slip at the pivots: ends flat, centre shifted by the first pivot corner's roll.
    x_end = -0.1 * math.cos(0.1) + 0.2 * math.sin(0.1) + 0.1
    assert float(tr.q[-1, 0]) == pytest.approx(x_end, abs=1e-4)
    e = np.asarray(tr.diagnostics.energy)
    # Corner impacts dissipate; between them the scheme's energy error while pivoting is tiny
    # (measured 1.3e-5 J of 2.05 J before the first impact, shrinking with dt).
    for i in crossings[:3]:
        assert e[i + 2] < e[i - 1] - 1e-3
    assert np.max(e - np.minimum.accumulate(e)) < 2e-5
    assert e[-1] == pytest.approx(9.81 * 0.2, rel=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, pngs", [("four_bar_wall", ["point_a.png", "constraints.png"]), ("rocking_block", ["rocking.png"])]
)
def test_examples_write_their_plots(tmp_path, name, pngs):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--out", str(tmp_path), "--t-final", "0.5"]) == 0
    for png in pngs:
        assert (tmp_path / png).stat().st_size > 10_000


SCHEME_GRAD = MoreauJean(iterations=5, diagnostics=False)  # no contact is active: a short solve compiles fast


@pytest.mark.slow  # reverse mode through the stepper compiles for ~10 s on the shared 2-core machine
def test_four_bar_gradients_through_lengths_and_loads_match_finite_differences():
    """Before the first impact the motion is smooth in the parameters: d x_a(t = 0.02 s) / d(l1, l3,
    torque, m2, restitution) through the derived initial state and two steps agrees with central
    differences (restitution has no effect yet: zero gradient)."""
    m = get_model("four-bar")
    names = ("l1", "torque", "m2", "restitution")

    def xa_final(p):
        p = {**p, "l3": p["l1"]}  # keep the parallelogram while varying the bar length
        q0, u0 = four_bar.initial_state(p)
        tr = simulate(m.system, p, q0, u0, dt=0.01, n_steps=2, scheme=SCHEME_GRAD)
        return four_bar.point_a(tr.q[-1], p)[0]

    f = jax.jit(xa_final)
    grads = jax.jit(jax.grad(xa_final))(m.params)
    for name in names:
        h = 1e-6 * max(1.0, abs(float(m.params[name])))
        up = f({**m.params, name: m.params[name] + h})
        down = f({**m.params, name: m.params[name] - h})
        fd = float(up - down) / (2 * h)
        assert np.isfinite(float(grads[name]))
        assert float(grads[name]) == pytest.approx(fd, rel=1e-6, abs=1e-9), name
    assert float(grads["restitution"]) == 0.0


def test_four_bar_float32_follows_float64():
    """float32 parameters give a float32 run through the first impacts, close to float64
    (measured 6e-7 m over 0.5 s; tolerance 1e-5 m, a few float32 ulps of the 0.2 m lengths × steps)."""
    m = get_model("four-bar")
    p32 = {k: v.astype(np.float32) for k, v in m.params.items()}
    # n_steps = 500 as in the ε² test above, so the float64 run reuses its compiled program
    tr32 = simulate(m.system, p32, *four_bar.initial_state(p32), dt=1e-3, n_steps=500)
    tr64 = simulate_model(m, dt=1e-3, t_final=0.5)
    assert tr32.q.dtype == np.float32 and tr32.u.dtype == np.float32
    assert np.asarray(tr64.impulse_normal).sum() > 0  # the window includes impacts
    np.testing.assert_allclose(np.asarray(tr32.q, np.float64), tr64.q, atol=1e-5)
