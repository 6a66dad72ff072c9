"""Lubricated revolute clearance joint: the short-bearing π-film force against a quadrature of the
Reynolds pressure, its directions, the cap and hand-over to dry contact, gradients against finite
differences, the builder's rules, and the slider–crank's journal: lubrication removes the impacts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from jaxcontact.contact_laws import (
    film_breakdown_weight,
    lubricated_journal_force,
    short_bearing_force,
)
from jaxcontact.models import slider_crank as sc
from jaxcontact.planar import Mechanism
from jaxcontact.simulate import simulate
from jaxcontact.stepping import Penalty
from jaxcontact.studies.outcomes import outcome

MU, L, R, C = 0.04, 0.04, 0.01, 5e-4  # Pa·s, m, m, m

# (ε, ε̇ [1/s], a = ω̄ − φ̇ [rad/s]): pure rotation, squeeze both ways, whirl faster than the mean
# speed (a < 0), mixed, near the threshold.
POINTS = [
    (0.3, 0.0, 100.0),
    (0.7, 50.0, -30.0),
    (0.9, -200.0, 80.0),
    (0.5, 10.0, 0.0),
    (0.5, -10.0, 0.0),
    (0.95, -5.0, 300.0),
    (0.05, 400.0, 150.0),
    (0.8, 0.0, -60.0),
]


def _reynolds_pressure(theta, z, eps, eps_dot, a):
    """Short-bearing (Ocvirk) solution of Reynolds' equation ∂_z(h³ ∂_z p) = 12 μ (a ∂_θ h + ∂_t h)
    with p = 0 at z = ±L/2, h = c (1 + ε cos θ) (θ from the thickest film, in the line-of-centres frame)."""
    h = C * (1.0 + eps * np.cos(theta))
    rhs = 12.0 * MU * (a * (-C * eps * np.sin(theta)) + C * eps_dot * np.cos(theta))
    return rhs / (2.0 * h**3) * (z**2 - L**2 / 4.0)


def _quadrature_force(eps, eps_dot, a, film):
    """(F_r, F_t) = R ∫∫ p (cos θ, sin θ) dz dθ over the film: the positive-pressure half (its ends found
    by root finding on p) or the fixed half (0, π)."""
    z_profile = quad(lambda z: z**2 - L**2 / 4.0, -L / 2, L / 2, epsabs=0, epsrel=1e-13)[0]

    def P(theta):  # ∫ p dz: p(θ, z) = p(θ, 0) (z² − L²/4) / (−L²/4)
        return _reynolds_pressure(theta, 0.0, eps, eps_dot, a) / (-(L**2) / 4.0) * z_profile

    if film == "fixed":
        pieces = [(0.0, np.pi)]
        integrand = P
    else:
        grid = np.linspace(0.0, 2 * np.pi, 721)
        vals = P(grid)
        roots = [brentq(P, grid[i], grid[i + 1], xtol=1e-15) for i in range(720) if vals[i] * vals[i + 1] < 0]
        cuts = [0.0, *roots, 2 * np.pi]
        pieces = list(zip(cuts[:-1], cuts[1:]))

        def integrand(theta):
            return max(P(theta), 0.0)

    # An absolute tolerance on the force's scale R ∫|P|: a component that vanishes by symmetry converges to it.
    size = R * sum(quad(lambda t: abs(integrand(t)), lo, hi, epsabs=0, epsrel=1e-10)[0] for lo, hi in pieces)
    out = []
    for trig in (np.cos, np.sin):
        parts = [
            quad(lambda t: integrand(t) * trig(t), lo, hi, epsabs=1e-14 * size / R, epsrel=1e-12, limit=200)[0]
            for lo, hi in pieces
        ]
        out.append(R * sum(parts))
    return np.array(out)


@pytest.mark.parametrize("film", ["positive", "fixed"])
def test_closed_forms_match_the_quadrature_of_the_reynolds_pressure(film):
    for eps, eps_dot, a in POINTS:
        closed = np.array(short_bearing_force(eps, eps_dot, a, MU, L, R, C, film))
        ref = _quadrature_force(eps, eps_dot, a, film)
        np.testing.assert_allclose(
            closed, ref, rtol=1e-8, atol=1e-10 * np.abs(ref).max(), err_msg=str((eps, eps_dot, a))
        )


def test_fixed_film_is_the_printed_pinkus_sternlicht_form_and_both_agree_without_squeeze_or_backward_whirl():
    k = MU * R * L**3 / (2 * C**2)
    for eps, eps_dot, a in POINTS:
        w = 2 * a  # ω_journal + ω_bearing − 2 φ̇
        fr = -k * (2 * eps**2 * w / (1 - eps**2) ** 2 + np.pi * eps_dot * (1 + 2 * eps**2) / (1 - eps**2) ** 2.5)
        ft = k * (np.pi * eps * w / (2 * (1 - eps**2) ** 1.5) + 4 * eps * eps_dot / (1 - eps**2) ** 2)
        np.testing.assert_allclose(short_bearing_force(eps, eps_dot, a, MU, L, R, C, "fixed"), [fr, ft], rtol=1e-12)
        if eps_dot == 0.0 and a > 0:  # then the converging half is the positive one
            np.testing.assert_allclose(
                short_bearing_force(eps, 0.0, a, MU, L, R, C, "positive"), [fr, ft], rtol=1e-12, atol=1e-12
            )


def test_squeeze_film_opposes_the_eccentricity_rate_and_whirl_gives_a_tangential_force():
    for eps in (0.0, 0.2, 0.6, 0.9):
        for eps_dot in (30.0, -30.0):
            fr, ft = short_bearing_force(eps, eps_dot, 0.0, MU, L, R, C)
            assert float(fr) * eps_dot < 0 and abs(float(ft)) < 1e-9 * abs(float(fr)), (eps, eps_dot, fr, ft)
    # Opening the gap (ε̇ < 0) draws the film from the thick side: a weaker force than closing it.
    assert abs(float(short_bearing_force(0.8, -30.0, 0.0, MU, L, R, C)[0])) < abs(
        float(short_bearing_force(0.8, 30.0, 0.0, MU, L, R, C)[0])
    )
    for eps in (0.2, 0.6, 0.9):
        for a in (50.0, -50.0):
            fr, ft = short_bearing_force(eps, 0.0, a, MU, L, R, C)
            assert float(ft) * a > 0 and float(fr) < 0, (eps, a, fr, ft)  # tangential, and a load capacity
            assert abs(float(ft)) > 0.1 * abs(float(fr))
    # A centred journal carries no load; the force is linear in the rates (a and ε̇ together).
    np.testing.assert_allclose(short_bearing_force(0.0, 0.0, 300.0, MU, L, R, C), [0.0, 0.0], atol=1e-15)
    f1 = np.array(short_bearing_force(0.7, 20.0, 40.0, MU, L, R, C))
    np.testing.assert_allclose(short_bearing_force(0.7, 60.0, 120.0, MU, L, R, C), 3 * f1, rtol=1e-12)


def test_cap_and_hand_over_to_dry_contact():
    thr = 0.95
    args = (MU, L, R, C, thr)

    def f(eps, eps_dot=-20.0, a=200.0):
        return np.array(lubricated_journal_force(eps, eps_dot, eps * a, *args))

    np.testing.assert_allclose(f(0.6), short_bearing_force(0.6, -20.0, 200.0, MU, L, R, C), rtol=1e-14)
    at = f(thr)
    np.testing.assert_allclose(f(thr + 1e-9), at, rtol=1e-6)  # continuous at the threshold
    band = np.array([f(e) for e in np.linspace(thr, 1.0, 11)])
    assert np.all(np.isfinite(band)) and np.all(np.linalg.norm(band, axis=1) <= np.linalg.norm(at) * (1 + 1e-12))
    np.testing.assert_allclose(f(1.0), [0.0, 0.0], atol=1e-12)  # film gone at the wall
    np.testing.assert_allclose(f(1.3), [0.0, 0.0], atol=1e-12)  # dry contact only
    assert float(film_breakdown_weight(0.975, thr)) == pytest.approx(0.5)
    # Uncapped, the force at 0.999 is over ten times larger than at the threshold: the cap is what bounds it.
    assert np.linalg.norm(short_bearing_force(0.999, -20.0, 200.0, MU, L, R, C)) > 10 * np.linalg.norm(at)


# ---------------------------------------------------------------------------------------- the element
def _journal_mech(threshold=0.95, viscosity="mu"):
    mech = Mechanism("journal")
    shaft = mech.body("shaft", mass=0.2, inertia=1e-4)
    housing = mech.body("housing", mass=0.5, inertia=3e-4)
    film = mech.lubricated_journal(
        "bearing",
        shaft,
        (0.03, 0.01),
        housing,
        (-0.02, 0.0),
        "r",
        "c",
        viscosity=viscosity,
        length="L",
        threshold=threshold,
        friction=0.05,
        compliant=dict(stiffness=1e9, damping=1e4),
    )
    params = {"r": R, "c": C, "L": L} | ({"mu": MU} if viscosity == "mu" else {})
    system, p = mech.build(params)
    return mech, film, system, p


def _state(mech, p, e, e_dot, w_shaft, w_housing, theta=(0.4, -0.3)):
    """q, u with the pin at hole + e, the pin's centre moving at hole's + ė, body spins as given."""
    rng = np.random.default_rng(0)
    q = np.zeros(6)
    q[2], q[5] = theta
    q[3:5] = [0.1, -0.05]
    u = np.zeros(6)
    u[3:5] = rng.normal(size=2)
    u[2], u[5] = w_shaft, w_housing
    hole = np.asarray(mech.point_position("housing", (-0.02, 0.0), jnp.asarray(q), p))
    v_hole = np.asarray(mech.point_velocity("housing", (-0.02, 0.0), jnp.asarray(q), jnp.asarray(u), p))
    pin_local = np.asarray(mech.point_position("shaft", (0.03, 0.01), jnp.asarray(q), p)) - q[0:2]
    q[0:2] = hole + np.asarray(e) - pin_local
    # v_pin = v_shaft + ω × (P − r): choose v_shaft for v_pin = v_hole + ė.
    v_pin = v_hole + np.asarray(e_dot)
    u[0:2] = v_pin - w_shaft * np.array([-pin_local[1], pin_local[0]])
    return jnp.asarray(q), jnp.asarray(u)


def test_element_applies_the_law_equal_and_opposite_at_the_centres():
    mech, film, system, p = _journal_mech()
    assert film.contact.name == "bearing" and mech.compliant_contact_names == ("bearing",)
    e = np.array([0.6, 0.3]) * C
    e_dot = np.array([0.02, -0.05])
    q, u = _state(mech, p, e, e_dot, 120.0, -40.0)
    fx, fy = (float(x) for x in film.force(q, u, p))
    # The law in the line-of-centres frame: ε̇ = ê·ė/c, a ε = ω̄ ε − (ê × ė)/c.
    n = e / np.linalg.norm(e)
    eps = np.linalg.norm(e) / C
    fr, ft = lubricated_journal_force(
        eps, n @ e_dot / C, 40.0 * eps - (n[0] * e_dot[1] - n[1] * e_dot[0]) / C, MU, L, R, C, 0.95
    )
    np.testing.assert_allclose([fx, fy], float(fr) * n + float(ft) * np.array([-n[1], n[0]]), rtol=1e-12)
    # system.forces: the pin's wrench at its centre, the opposite one at the hole's centre.
    Q = np.asarray(system.forces(q, u, 0.0, p))
    pin = np.asarray(mech.point_position("shaft", (0.03, 0.01), q, p))
    hole = np.asarray(mech.point_position("housing", (-0.02, 0.0), q, p))
    np.testing.assert_allclose(Q[0:2], [fx, fy], rtol=1e-12)
    np.testing.assert_allclose(Q[3:5], [-fx, -fy], rtol=1e-12)
    arm_pin, arm_hole = pin - np.asarray(q[0:2]), hole - np.asarray(q[3:5])
    np.testing.assert_allclose(Q[2], arm_pin[0] * fy - arm_pin[1] * fx, rtol=1e-10)
    np.testing.assert_allclose(Q[5], -(arm_hole[0] * fy - arm_hole[1] * fx), rtol=1e-10)


def test_element_directions_squeeze_whirl_and_rigid_rotation():
    mech, film, _, p = _journal_mech()
    e = np.array([0.5 * C, 0.0])
    # Squeeze along +x: the film pushes back along −x, nothing sideways.
    q, u = _state(mech, p, e, [0.05, 0.0], 0.0, 0.0)
    fx, fy = (float(x) for x in film.force(q, u, p))
    assert fx < 0 and abs(fy) < 1e-9 * abs(fx)
    # Pure whirl (the centre circling at φ̇ > 0, no spin): a = −φ̇, a tangential force against it.
    q, u = _state(mech, p, e, [0.0, 0.5 * C * 300.0], 0.0, 0.0)
    fx, fy = (float(x) for x in film.force(q, u, p))
    assert fy < 0 and fx < 0
    # The whole assembly turning rigidly (both spins = whirl rate): no wedge, no squeeze, no force.
    Om = 250.0
    q, u = _state(mech, p, e, Om * np.array([-e[1], e[0]]), Om, Om)
    np.testing.assert_allclose(np.array(film.force(q, u, p)), [0.0, 0.0], atol=1e-9)


@pytest.mark.parametrize("ratio", [0.0, 0.3, 0.8, 0.97, 1.05])
def test_gradients_match_finite_differences(ratio):
    mech, film, system, p = _journal_mech()
    e = ratio * C * np.array([0.8, -0.6])
    q, u = _state(mech, p, e, [0.03, 0.02], 150.0, -20.0)
    w = jnp.array([0.7, -1.3])

    def g(q, u, p):
        return w @ jnp.stack(film.force(q, u, p))

    gq, gu, gp = jax.grad(g, argnums=(0, 1, 2))(q, u, p)
    for x in (gq, gu, *gp.values()):
        assert np.all(np.isfinite(np.asarray(x)))
    if ratio == 0.0:
        return  # the film's direction is a choice at e = 0: finite gradients, no derivative to compare with
    for name, x, grad in (("q", q, gq), ("u", u, gu)):
        for i in range(6):
            h = 1e-7 * C if name == "q" else 1e-6 * (1.0 + abs(float(x[i])))
            num = (g(x.at[i].add(h), u, p) if name == "q" else g(q, x.at[i].add(h), p)) - (
                g(x.at[i].add(-h), u, p) if name == "q" else g(q, x.at[i].add(-h), p)
            )
            num = float(num) / (2 * h)
            scale = max(1.0, float(jnp.max(jnp.abs(grad))))
            assert abs(num - float(grad[i])) <= 1e-5 * scale, (name, i, num, float(grad[i]))
    for k in ("mu", "L", "c"):
        h = 1e-6 * float(p[k])
        num = (g(q, u, p | {k: p[k] + h}) - g(q, u, p | {k: p[k] - h})) / (2 * h)
        np.testing.assert_allclose(float(gp[k]), float(num), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("dry", ["compliant", "rigid"])
def test_loaded_spinning_journal_floats_at_the_short_bearing_equilibrium(dry):
    """A shaft spinning at ω in a fixed bearing under its weight W settles where the film carries W:
    ε₀ from |F(ε₀; ε̇ = 0, a = ω/2)| = W, and the attitude angle of the short-bearing theory,
    tan β = F_t / (−F_r) = π √(1 − ε₀²) / (4 ε₀) (Ocvirk); ε₀ ≈ 0.8, on the stable side of oil whirl.
    Its spin stays ω (the film has no torque). Dry contact: compliant (penalty) or rigid (Moreau–Jean)."""
    from jaxcontact.stepping import MoreauJean

    m, g, w, r, length, c, mu = 1.0, 9.81, 200.0, 0.01, 0.02, 1e-4, 0.00107
    mech = Mechanism("rotor")
    shaft = mech.body("shaft", mass=m, inertia=1e-4)
    laws = dict(compliant=dict(stiffness=1e9, damping=1e4)) if dry == "compliant" else dict(restitution=0.5)
    mech.lubricated_journal("bearing", shaft, (0.0, 0.0), None, (0.0, 0.0), r, c, viscosity=mu, length=length, **laws)
    mech.gravity(g)
    system, p = mech.build()
    scheme = Penalty() if dry == "compliant" else MoreauJean()
    tr = simulate(
        system, p, jnp.zeros(3), jnp.array([0.0, 0.0, w]), dt=2e-5, n_steps=25000, scheme=scheme, save_every=250
    )

    eps0 = brentq(lambda e: np.linalg.norm(short_bearing_force(e, 0.0, w / 2, mu, length, r, c)) - m * g, 1e-3, 0.99)
    fr, ft = (float(x) for x in short_bearing_force(eps0, 0.0, w / 2, mu, length, r, c))
    assert ft / -fr == pytest.approx(np.pi * np.sqrt(1 - eps0**2) / (4 * eps0), rel=1e-12)
    assert 0.75 < eps0 < 0.85
    angle = np.pi / 2 - np.arctan2(ft, fr)  # turns (F_r, F_t) in the line-of-centres frame onto (0, W)
    e_end = np.asarray(tr.q[-1, :2]) / c
    np.testing.assert_allclose(e_end, eps0 * np.array([np.cos(angle), np.sin(angle)]), atol=1e-6)
    assert float(tr.u[-1, 2]) == pytest.approx(w, rel=1e-12)


def test_builder_and_model_rules_name_the_value():
    with pytest.raises(ValueError, match=r"viscosity = -0.01.*must be > 0"):
        _journal_mech(viscosity=-0.01)
    with pytest.raises(ValueError, match=r"threshold = 1.2.*must be in \(0, 1\)"):
        _journal_mech(threshold=1.2)
    mech = Mechanism("m")
    a = mech.body("a", mass=1.0, inertia=1.0)
    with pytest.raises(ValueError, match="film 'bogus' must be one of"):
        mech.lubricated_journal("j", a, (0, 0), None, (0, 0), 0.01, 1e-4, 0.04, 0.02, film="bogus", restitution=0.5)
    assert "j" not in {c.name for c in mech.contacts}  # an error leaves the mechanism as it was
    with pytest.raises(ValueError, match=r"viscosity = -1.0 breaks the rule viscosity > 0"):
        sc.model("lubricated", viscosity=-1.0)
    with pytest.raises(ValueError, match=r"film_threshold = 1.0 breaks the rule film_threshold in \(0, 1\)"):
        sc.model("lubricated", film_threshold=1.0)
    assert sc.TABLE.unit("viscosity") == "Pa·s" and sc.TABLE.unit("bearing_length") == "m"


# ----------------------------------------------------------------------------- the slider–crank model
DT, N = 5e-6, 4000  # 0.02 s: two thirds of a crank turn at ω = 200 rad/s


@pytest.fixture(scope="module")
def runs():
    """Dry compliant journal, and the lubricated one with the default oil and a ten times thinner one
    (one vmapped run)."""
    scheme = Penalty(diagonal_mass=True)
    dry = sc.model("compliant")
    q0, u0 = dry.initial_state(dry.params)
    tr_dry = simulate(dry.system, dry.params, q0, u0, dt=DT, n_steps=N, scheme=scheme)
    lub = sc.model("lubricated")
    batch = {k: jnp.full(2, v) for k, v in lub.params.items()} | {"viscosity": jnp.array([0.04, 0.004])}
    q0, u0 = jax.vmap(lub.initial_state)(batch)
    tr_lub = simulate(lub.system, batch, q0, u0, dt=DT, n_steps=N, scheme=scheme)
    return dry, tr_dry, lub, batch, tr_lub


def _measure(model, tr, p):
    names = ("impacts", "peak_force", "free_flight", "peak_accel:slider.x", "max:journal_ex")
    out = {
        n: float(outcome(n, model.system, dt=DT, observables=model.observables).fn(tr, model.system, p)) for n in names
    }
    mech = sc.mechanism("lubricated" if "viscosity" in p else "compliant")
    e = jax.vmap(lambda q: sc.journal_eccentricity(mech, q, p))(tr.q)
    out["max_eps"] = float(jnp.max(jnp.linalg.norm(e, axis=-1)) / p["clearance"])
    if "viscosity" in p:
        film = next(load for load in mech.loads if hasattr(load, "contact"))
        f = jax.vmap(lambda q, u: jnp.stack(film.force(q, u, p)))(tr.q, tr.u)
        out["peak_film"] = float(jnp.max(jnp.linalg.norm(f, axis=-1)))
    return out


def test_lubrication_removes_the_impacts(runs):
    dry, tr_dry, lub, batch, tr_lub = runs
    assert np.all(np.isfinite(np.asarray(tr_dry.q))) and np.all(np.isfinite(np.asarray(tr_lub.q)))
    d = _measure(dry, tr_dry, dry.params)
    oil = _measure(lub, jax.tree.map(lambda x: x[0], tr_lub), jax.tree.map(lambda x: x[0], batch))
    thin = _measure(lub, jax.tree.map(lambda x: x[1], tr_lub), jax.tree.map(lambda x: x[1], batch))
    print("dry", d, "\noil", oil, "\nthin oil", thin)
    # Dry: the journal flies and hits the wall again and again (Flores et al.'s dry-joint result).
    assert d["impacts"] >= 10 and d["free_flight"] < 0.9 and d["max_eps"] > 1.0
    # Oil: the film carries the joint load; the journal never reaches the threshold, no dry contact.
    assert oil["impacts"] == 0 and oil["free_flight"] == 1.0 and oil["peak_force"] == 0.0
    assert oil["max_eps"] < float(batch["film_threshold"][0])
    assert oil["peak_film"] < d["peak_force"] / 5  # the journal force: film peak vs dry impact peak
    assert oil["peak_accel:slider.x"] < d["peak_accel:slider.x"] / 2  # smooth slider acceleration
    # A ten times thinner oil lets the film break: the dry contact takes over, with fewer, softer impacts.
    assert thin["max_eps"] > 1.0 and 0 < thin["impacts"] < d["impacts"]
    assert thin["peak_force"] < d["peak_force"]


def test_default_study_of_the_lubricated_model_runs_its_box_corners():
    """``mc`` on the lubricated model: penalty scheme, the lubricated variant rebuilt, viscosity sampled;
    the step of the study keeps RK4 stable at the corners of its box (thin oil in a wide clearance at
    the top speed; thick oil in a tight one)."""
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_study, make_evaluator

    m = get_model("slider-crank-clearance", contact="lubricated")
    spec = default_study(m)
    assert spec.scheme.name == "penalty" and dict(spec.model_options) == {"contact": "lubricated"}
    assert set(spec.space.names) == {"viscosity", "clearance", "omega"}
    outs = [
        outcome(k, m.system, dt=sc.LUBRICATED_STUDY.dt, observables=m.observables)
        for k in ("impacts", "max:journal_ex")
    ]
    ev = make_evaluator(m, outs, dt=sc.LUBRICATED_STUDY.dt, n_steps=5000, scheme=spec.scheme, save_every=5000)
    corners = {
        "viscosity": jnp.array([0.02, 0.08]),
        "clearance": jnp.array([5e-4, 2e-4]),
        "omega": jnp.array([250.0, 250.0]),
    }
    r = {k: np.asarray(v) for k, v in jax.jit(jax.vmap(ev))(corners).items()}
    print(r)
    assert np.all(r["converged"]) and np.all(r["state_finite"])
    assert np.all(r["impacts"] == 0) and np.all(r["max:journal_ex"] < np.asarray(corners["clearance"]))
