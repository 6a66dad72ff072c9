"""The tippe top (an eccentric sphere on a rough plane, one Coulomb cone in Moreau–Jean) against its exact truths.

Jellett's integral λ = R L_z − a L₃ is conserved by the continuous dynamics whatever the friction does;
energy never increases; in the inverting range 1 − α < I₁/I₃ < 1 a gliding top turns over (the centre of
mass rises from R − a to R + a, the spin about the body axis reverses, L_z keeps its sign), and it does
not without friction or with I₁/I₃ < 1 − α.

Every run is the same compiled program (5 000 steps of a traced dt, chained), so the tests pay one compile.
"""

import jax
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.models import tippe_top as tt
from jaxcontact.simulate import simulate

SEGMENT, SAVE = 5000, 50
T_FINAL = 10.0


def _run(dt, t_final=T_FINAL, **overrides):
    """(model, trajectory) over t_final: segments of SEGMENT steps, each from the end of the last."""
    m = get_model("tippe-top", **overrides)
    q0, u0 = m.initial_state(m.params)
    parts = []
    for i in range(int(round(t_final / (SEGMENT * dt)))):
        tr = simulate(
            m.system,
            m.params,
            q0,
            u0,
            dt=dt,
            n_steps=SEGMENT,
            save_every=SAVE,
            t0=i * SEGMENT * dt,
            start="check" if i == 0 else "continue",
        )  # later segments start where the last one sank
        q0, u0 = tr.q[-1], tr.u[-1]
        parts.append(tr if i == 0 else jax.tree.map(lambda x: x[1:], tr))
    return m, jax.tree.map(lambda *x: np.concatenate([np.asarray(a) for a in x]), *parts)


def _inversion_time(traj):
    """The first saved time with the axis below the horizontal (θ > 90°), or None."""
    theta = np.asarray(tt.inclination(traj.q))
    return float(traj.t[np.argmax(theta > np.pi / 2)]) if np.any(theta > np.pi / 2) else None


@pytest.fixture(scope="module")
def default_runs():
    """The default top at h = 2.5e-4 and 1.25e-4 over 10 s (at 5e-4 it sinks by a quarter of its radius)."""
    return {h: _run(h) for h in (2.5e-4, 1.25e-4)}


def _penetration(m, traj):
    """max(0, −g_N) over the saved rows [m]."""
    gaps = np.asarray(jax.vmap(lambda q: m.system.gaps(q, 0.0, m.params))(traj.q))
    return max(0.0, -float(gaps.min()))


def test_the_top_inverts_and_its_spin_reverses(default_runs):
    m, traj = default_runs[1.25e-4]
    p = m.params
    R, a = float(p["radius"]), float(p["offset"])
    _, i3 = tt.inertia(p)
    theta = np.degrees(np.asarray(tt.inclination(traj.q)))
    lam0 = float(tt.jellett(traj.q[0], traj.u[0], p))
    assert abs(theta[0] - 20.0) < 1e-9 and abs(traj.q[0, 2] - (R - a * np.cos(np.deg2rad(20.0)))) < 1e-15
    # The axis turns over and the centre of mass rises to R + a (less Moreau–Jean's sinking, below).
    assert theta[-1] > 170.0
    assert traj.q[-1, 2] > R + a - 0.02 * R
    # The spin about the body axis reverses, to λ/(I₃(R + a)) in size (λ fixed); L_z never changes sign.
    w3 = np.asarray(tt.body_spin(traj.u))
    assert w3[0] > 0 and w3[-1] < 0
    assert abs(w3[-1] + lam0 / (float(i3) * (R + a))) < 0.01 * abs(w3[-1])
    assert np.all(np.asarray(tt.angular_momentum(traj.q, traj.u, p))[:, 2] > 0)
    # A physical inversion: its time converges with the step (the rolling top's below does not).
    t_coarse, t_fine = _inversion_time(default_runs[2.5e-4][1]), _inversion_time(traj)
    assert 5.0 < t_fine < 9.0 and abs(t_coarse - t_fine) < 0.1


def test_jellett_integral_drifts_at_first_order_in_the_step(default_runs):
    drift = {}
    for h, (m, traj) in default_runs.items():
        lam = np.asarray(tt.jellett(traj.q, traj.u, m.params))
        drift[h] = np.max(np.abs(lam - lam[0])) / abs(lam[0])
    assert drift[1.25e-4] < 5e-3
    assert 1.7 < drift[2.5e-4] / drift[1.25e-4] < 2.3


def test_energy_never_increases(default_runs):
    """Friction only dissipates. Tolerance: 1e-7 E₀ per saved interval (50 steps) for the step's own error
    (the gyroscopic predictor is second order, not exact)."""
    for h, (m, traj) in default_runs.items():
        e = np.asarray(traj.diagnostics.energy)
        assert np.max(np.diff(e)) <= 1e-7 * e[0], h
        # Not below the least energy the fixed λ allows: spinning inverted in place, λ²/(2 I₃ (R + a)²) + m g (R + a)
        # (less what the sinking took from m g z).
        p = m.params
        R, a, mg = float(p["radius"]), float(p["offset"]), float(p["mass"] * p["gravity"])
        lam = float(tt.jellett(traj.q[-1], traj.u[-1], p))
        floor = lam**2 / (2 * float(tt.inertia(p)[1]) * (R + a) ** 2) + mg * (R + a)
        assert floor - mg * _penetration(m, traj) <= e[-1] < 0.35 * e[0]


def test_moreau_jean_sinks_the_top_at_first_order(default_runs):
    """The contact holds at velocity level only (no position projection for spatial contacts): the sphere's
    centre follows a curve between the θ-points, and the top sinks over the run — by 3 % of its radius at
    h = 1.25e-4, and at least twice that at 2h (the sinking lowers m g z: the energy floor below allows for it)."""
    pen = {h: _penetration(m, traj) for h, (m, traj) in default_runs.items()}
    R = float(default_runs[1.25e-4][0].params["radius"])
    assert pen[1.25e-4] < 0.05 * R
    assert pen[2.5e-4] / pen[1.25e-4] > 2.0


@pytest.mark.parametrize("overrides", [{"friction": 0.0}, {"inertia_ratio": 0.6}], ids=["frictionless", "oblate"])
def test_no_inversion_without_friction_or_outside_the_range(overrides):
    """μ = 0: nothing dissipates and no horizontal force acts (L_z and L₃ are conserved); I₁/I₃ = 0.6 < 1 − a/R:
    the upright top is stable."""
    m, traj = _run(5e-4, **overrides)
    theta = np.degrees(np.asarray(tt.inclination(traj.q)))
    assert theta.max() <= 20.0 + 1e-6 and _inversion_time(traj) is None
    assert np.all(np.asarray(tt.body_spin(traj.u)) > 0)


def test_a_rolling_top_inverts_only_through_the_steps_drift():
    """Launched nearly upright with μ = 0.3, the slip stops within 0.1 s: the Coulomb cone holds the top rolling,
    which conserves energy and does not invert. Moreau–Jean's O(h) drift raises the friction the rolling top
    needs until it slips and inverts — later when h halves: an artefact, which this test pins down."""
    times = {}
    for h in (5e-4, 2.5e-4):
        m, traj = _run(h, t_final=2.5, friction=0.3, tilt_deg=5.0)
        mu_pn = float(m.params["friction"]) * np.asarray(traj.impulse_normal[:, 0])
        sticking = np.linalg.norm(np.asarray(traj.impulse_tangent), axis=1) < 0.999 * mu_pn
        assert traj.t[np.argmax(sticking)] < 0.1
        times[h] = _inversion_time(traj)
    assert times[2.5e-4] - times[5e-4] > 0.3


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match=r"offset = 0.02 >= radius = 0.02 breaks the rule offset < radius"):
        get_model("tippe-top", offset=0.02)
    with pytest.raises(ValueError, match=r"inertia_ratio = 0.4 breaks the rule inertia_ratio >= 0.5"):
        get_model("tippe-top", inertia_ratio=0.4)
    with pytest.raises(ValueError, match=r"axial_inertia = 1.5 breaks the rule axial_inertia in \(0, 1\]"):
        get_model("tippe-top", axial_inertia=1.5)
    with pytest.raises(ValueError, match=r"friction"):
        get_model("tippe-top", friction=-0.1)


def test_sphere_centre_off_the_centre_of_mass_gives_the_offset_gap():
    """SpherePlane's body-frame centre: the gap is the height of x + R(q) c less the radius, at any orientation."""
    m = get_model("tippe-top")
    q, _ = m.initial_state(m.params)
    R, a = float(m.params["radius"]), float(m.params["offset"])
    for quat in ([1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [np.cos(0.3), 0.0, np.sin(0.3), 0.0]):
        qq = np.concatenate([[0.1, -0.2, 0.05], quat])
        expected = 0.05 + a * np.asarray(tt.axis(qq))[2] - R
        assert abs(float(m.system.gaps(qq, 0.0, m.params)[0]) - expected) < 1e-15
