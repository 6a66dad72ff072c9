"""Slider–crank with a flexible (ANCF) connecting rod and a crank–rod clearance joint: a very stiff rod follows
the rigid slider-crank-clearance model; a flexible rod lowers the peak journal force; the joints stay assembled;
the lubricated journal's film is the short-bearing force, follows the rigid lubricated model and removes the
impacts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import REGISTRY, get_model
from jaxcontact.models import flexible_slider_crank as fsc
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.stepping.projection import Projection

ROD_J = fsc.ROD_MASS * fsc.ROD_LENGTH**2 / 12  # the uniform rod's inertia, given to the rigid model
STIFF = 2.07e17  # 1e6 × steel: the rigid-rod limit (model smoothing keeps the step stable)
PEN_DT, PEN_N = 1e-6, 10_000  # 0.01 s: a third of a crank turn at 200 rad/s, the first journal impacts
MJ_DT, MJ_N = 1e-5, 1000
E_BATCH = (STIFF, 207e9, 20.7e9)  # the rigid-rod limit, steel, steel / 10


def _slider_x(tr, system):
    return np.asarray(tr.q[..., system.names.index("slider.x")])


@pytest.fixture(scope="module")
def compliant_runs():
    """The compliant (Hertz, Hunt–Crossley) journal by the penalty scheme: the rigid model, and one batched
    flexible run over the rod's Young's modulus: 1e6 × steel (smoothed over 4 steps), steel, steel / 10."""
    rigid = get_model("slider-crank-clearance", contact="compliant", J2=ROD_J)
    q0, u0 = rigid.initial_state(rigid.params)
    ref = simulate(rigid.system, rigid.params, q0, u0, dt=PEN_DT, n_steps=PEN_N, scheme=Penalty(diagonal_mass=True))
    m = get_model("flexible-slider-crank", contact="compliant")
    batch = {k: jnp.full(3, v) for k, v in m.params.items()}
    batch["rod_E"] = jnp.array(E_BATCH)
    batch["smoothing"] = jnp.array([4 * PEN_DT, 0.0, 0.0])
    q0, u0 = jax.vmap(m.initial_state)(batch)
    flex = simulate(m.system, batch, q0, u0, dt=PEN_DT, n_steps=PEN_N, scheme=Penalty())
    return rigid, ref, m, flex


def test_stiff_rod_follows_the_rigid_model_compliant_journal(compliant_runs):
    # Same variant (compliant journal), scheme and step: the slider within 1e-6 m (0.2 % of the clearance) over
    # 0.01 s, through the first impacts; the same peak journal force within 1 %. Measured: 7.5e-8 m, 0.005 %.
    rigid, ref, m, flex = compliant_runs
    assert np.all(ref.diagnostics.converged) and np.all(flex.diagnostics.converged)
    dev = np.abs(_slider_x(flex, m.system)[0] - _slider_x(ref, rigid.system)).max()
    assert dev < 1e-6, dev
    assert np.asarray(ref.active).sum() > 100  # the journal did hit the wall
    peak_ref, peak_stiff = float(np.max(ref.impulse_normal)), float(np.max(flex.impulse_normal[0]))
    assert abs(peak_stiff / peak_ref - 1) < 0.01, (peak_stiff, peak_ref)
    # The steel rod is already close; the softer rod departs further (it bends and stretches).
    devs = np.abs(_slider_x(flex, m.system) - _slider_x(ref, rigid.system)[None]).max(axis=1)
    print("slider deviation from the rigid model (m):", devs)
    assert devs[0] < devs[1] < float(m.params["clearance"]), devs


def test_flexible_rod_lowers_the_peak_journal_force(compliant_runs):
    # The literature's result (a flexible rod cushions the journal's impacts): the peak contact force falls as
    # the rod softens. Measured: 22.05 kN (rigid-rod limit), 17.26 kN (steel), 9.74 kN (steel / 10).
    _, _, _, flex = compliant_runs
    peaks = np.asarray(jnp.max(flex.impulse_normal[..., 0], axis=1)) / PEN_DT
    assert peaks[0] > 1.1 * peaks[1] > 1.1 * 1.1 * peaks[2], peaks
    assert peaks[2] > 1e3  # every rod does hit the wall


def test_joints_stay_assembled_and_the_rod_barely_strains(compliant_runs):
    _, _, m, flex = compliant_runs
    assert float(jnp.max(flex.diagnostics.phi)) < 1e-9  # Baumgarte: the slider pin and the crank pivot
    names = m.system.names
    first, last = names.index("rod[0].x"), names.index(f"rod[{len(names[6:]) // 4 - 1}].x")
    chord = np.linalg.norm(np.asarray(flex.q[..., last : last + 2] - flex.q[..., first : first + 2]), axis=-1)
    strain = np.abs(chord / float(m.params["rod_L"]) - 1).max(axis=1)
    # The rod carries the journal's force: its largest strain is of the order of peak force / EA (the chord also
    # shortens by bending). Measured ratios 0.78, 0.79, 0.61 (strains 3.7e-10, 2.9e-4, 1.3e-3).
    peaks = np.asarray(jnp.max(flex.impulse_normal[..., 0], axis=1)) / PEN_DT
    ratio = strain / (peaks / (np.array(E_BATCH) * float(m.params["rod_A"])))
    assert np.all((ratio > 0.4) & (ratio < 1.2)), (strain, ratio)


@pytest.mark.parametrize("contact", ["rigid", "ideal"])
def test_stiff_rod_follows_the_rigid_model_moreau_jean(contact):
    # Moreau–Jean, projected onto the joints after each step, the rigid model's step. Ideal pin: the slider within
    # 1e-6 m over 0.01 s (measured 9.5e-8). Rigid journal (Newton impacts, ε = 0.9): within 2.5e-5 m (5 % of the
    # clearance) over 0.005 s, a few impacts (measured 1.1e-5). The stiff rod's impulses differ from the rigid rod's
    # by O(dt), not O(1/E): the rod's internal force in an impact step is that of the step's start (explicit), the
    # rigid body's is not. The first impulse, relative, frictionless: 3.3e-4, 1.6e-4, 5.0e-5 at dt = 10, 5, 2.5 µs
    # (the same for any E ≥ 1e5 × steel and any smoothing window); the journal's rebounds amplify it.
    scheme = MoreauJean(projection=Projection())
    n = MJ_N if contact == "ideal" else MJ_N // 2
    rigid = get_model("slider-crank-clearance", contact=contact, J2=ROD_J)
    q0, u0 = rigid.initial_state(rigid.params)
    ref = simulate(rigid.system, rigid.params, q0, u0, dt=MJ_DT, n_steps=n, scheme=scheme)
    m = get_model("flexible-slider-crank", contact=contact, rod_E=STIFF)
    q0, u0 = m.initial_state(m.params)
    flex = simulate(m.system, m.params, q0, u0, dt=MJ_DT, n_steps=n, scheme=scheme)
    assert np.all(flex.diagnostics.converged)
    assert float(jnp.max(flex.diagnostics.phi)) < 1e-12  # the projection works on the flexible system unchanged
    dev = np.abs(_slider_x(flex, m.system) - _slider_x(ref, rigid.system)).max()
    print(contact, "slider deviation (m):", dev)
    assert dev < (2.5e-5 if contact == "rigid" else 1e-6), dev
    if contact == "rigid":
        assert int((np.asarray(flex.impulse_normal) > 0).sum()) >= 3


def test_model_is_registered_and_checks_its_parameters():
    assert REGISTRY["flexible-slider-crank"] == "flexible_slider_crank"
    oily = get_model("flexible-slider-crank-lubricated")
    assert oily.name == "flexible-slider-crank-lubricated" and "lubricated" in oily.description
    assert oily.param_table["viscosity"].unit == "Pa·s" and oily.dt == 1e-6
    with pytest.raises(ValueError, match="film_threshold.*in \\(0, 1\\)"):
        get_model("flexible-slider-crank-lubricated", film_threshold=1.5)
    m = get_model("flexible-slider-crank")
    assert "clearance joint" in m.description and m.name.startswith("flexible-")
    assert m.param_table["rod_E"].unit == "Pa" and m.dt == 1e-5
    with pytest.raises(ValueError, match="rod_E.*> 0"):
        get_model("flexible-slider-crank", rod_E=-1.0)
    with pytest.raises(ValueError, match="contact = 'oily' must be one of"):
        fsc.model("oily")
    with pytest.raises(ValueError, match="n_elements = 0 must be an int in"):
        fsc.model("rigid", 0)


def test_cli_simulates_the_model(tmp_path, capsys):
    import argparse

    from jaxcontact.commands import simulate as cmd

    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    out = tmp_path / "fsc"
    rc = cmd.run(parser.parse_args(["flexible-slider-crank", "--t-final", "0.002", "--out", str(out), "--no-plots"]))
    assert rc == 0 and np.load(out / "trajectory.npz")["q"].shape == (201, 22)
    assert "impacts" in capsys.readouterr().out
    # The compliant journal through the model file's function, by the penalty scheme.
    spec = f"{fsc.__file__}:compliant"
    args = [spec, "--scheme", "penalty", "--t-final", "0.0005", "--out", str(out), "--no-plots"]
    assert cmd.run(parser.parse_args(args)) == 0
    assert np.load(out / "trajectory.npz")["q"].shape == (501, 22)


def test_lubricated_journal_film_is_the_short_bearing_force_between_the_centres():
    # The film's generalized force on the flexible system, against the law evaluated here by hand from the state:
    # e = journal (the rod's first node) − hole (the crank's tip), ė from their velocities, the mean spin of the
    # crank and the rod end (its slope's turn rate), the force F on the node's (x, y) and −F at the crank's tip.
    from jaxcontact.contact_laws import lubricated_journal_force

    jax.config.update("jax_enable_x64", True)
    m = get_model("flexible-slider-crank-lubricated")
    p = m.params
    q0, u0 = m.initial_state(p)
    rng = np.random.default_rng(0)
    c = float(p["clearance"])
    q = q0.at[6:8].add(jnp.asarray(0.6 * c * np.array([0.8, -0.6])))
    u = u0 + jnp.asarray(rng.normal(size=u0.shape) * 0.05)
    dry = {**p, "viscosity": jnp.asarray(1e-300)}
    film = m.system.forces(q, u, 0.0, p) - m.system.forces(q, u, 0.0, dry)

    x, y, th = (float(v) for v in q[:3])
    half = float(p["l1"]) / 2
    tip = np.array([x + half * np.cos(th), y + half * np.sin(th)])
    tip_v = np.array([u[0] - half * np.sin(th) * u[2], u[1] + half * np.cos(th) * u[2]])
    e, de = np.asarray(q[6:8]) - tip, np.asarray(u[6:8]) - tip_v
    n = e / np.linalg.norm(e)
    dx, dy = float(q[8]), float(q[9])
    rod_spin = (dx * float(u[9]) - dy * float(u[8])) / (dx * dx + dy * dy)
    eps = np.linalg.norm(e) / c
    wedge = 0.5 * (rod_spin + float(u[2])) * eps - (n[0] * de[1] - n[1] * de[0]) / c
    fr, ft = lubricated_journal_force(
        eps, float(n @ de) / c, wedge, *(float(p[k]) for k in ("viscosity", "bearing_length", "pin_radius")), c, 0.95
    )
    force = fr * n + ft * np.array([-n[1], n[0]])
    expected = np.zeros(film.shape)
    expected[6:8] = force
    expected[:3] = -force[0], -force[1], -(half * np.cos(th) * force[1] - half * np.sin(th) * force[0])
    assert np.linalg.norm(force) > 1.0  # a real load, not a vanishing one
    np.testing.assert_allclose(np.asarray(film), expected, rtol=1e-10, atol=1e-12 * np.linalg.norm(force))


@pytest.fixture(scope="module")
def lubricated_runs():
    """The lubricated journal, 0.01 s by the penalty scheme: the rigid lubricated model, and one batched flexible
    run: the rigid-rod limit, steel, and steel with the oil's viscosity 1e-9 of the default (the film gone)."""
    rigid = get_model("slider-crank-lubricated", J2=ROD_J)
    q0, u0 = rigid.initial_state(rigid.params)
    ref = simulate(rigid.system, rigid.params, q0, u0, dt=PEN_DT, n_steps=PEN_N, scheme=Penalty(diagonal_mass=True))
    m = get_model("flexible-slider-crank-lubricated")
    batch = {k: jnp.full(3, v) for k, v in m.params.items()}
    batch["rod_E"] = jnp.array([STIFF, 207e9, 207e9])
    batch["smoothing"] = jnp.array([4 * PEN_DT, 0.0, 0.0])
    batch["viscosity"] = batch["viscosity"] * jnp.array([1.0, 1.0, 1e-9])
    q0, u0 = jax.vmap(m.initial_state)(batch)
    flex = simulate(m.system, batch, q0, u0, dt=PEN_DT, n_steps=PEN_N, scheme=Penalty())
    return rigid, ref, m, flex


def test_stiff_rod_follows_the_rigid_model_lubricated_journal(lubricated_runs):
    # The same film, dry law, scheme and step as the rigid lubricated model: the slider and the journal's
    # eccentricity follow it (the film keeps both journals off the wall: smooth motion, no impacts to amplify the
    # rod's 1e-6 compliance). Measured: 6.7e-12 m and 5.5e-12 m.
    rigid, ref, m, flex = lubricated_runs
    dev = np.abs(_slider_x(flex, m.system)[0] - _slider_x(ref, rigid.system)).max()
    ecc_ref = np.asarray(jax.vmap(lambda q: rigid.observables["journal_ex"](q, rigid.params))(ref.q))
    ecc = np.asarray(jax.vmap(lambda q: m.observables["journal_ex"](q, m.params))(flex.q[0]))
    print("slider deviation (m):", dev, " journal e_x deviation (m):", np.abs(ecc - ecc_ref).max())
    assert dev < 1e-9, dev
    assert np.abs(ecc - ecc_ref).max() < 1e-9
    assert np.abs(ecc_ref).max() > 0.3 * float(m.params["clearance"])  # the journal did move in its hole


def test_lubrication_removes_the_impacts_of_the_flexible_rod(lubricated_runs):
    # The literature's result for lubricated joints: the oil film keeps the journal off the wall (no dry contact)
    # where the dry journal hits it; with the oil's viscosity near 0 the dry impacts come back, as the dry joint's
    # run by the same step (linearly implicit in the contacts, as the penalty scheme steps a lubricated system).
    _, _, m, flex = lubricated_runs
    dry_model = get_model("flexible-slider-crank", contact="compliant")
    q0, u0 = dry_model.initial_state(dry_model.params)
    dry = simulate(dry_model.system, dry_model.params, q0, u0, dt=PEN_DT, n_steps=PEN_N, scheme=Penalty(implicit=True))
    contacts = np.asarray(flex.active).reshape(3, -1).sum(axis=1)
    dry_steel = int(np.asarray(dry.active).sum())
    print("steps in dry contact: lubricated", contacts, "dry steel rod", dry_steel)
    assert contacts[0] == 0 and contacts[1] == 0 and dry_steel > 100
    # measured: 0, 0 and 2154 steps against the dry rod's 2153 (the 1e-9 film's own Jacobian in the step)
    assert abs(int(contacts[2]) - dry_steel) <= 0.01 * dry_steel
    dev = np.abs(_slider_x(flex, m.system)[2] - _slider_x(dry, m.system)).max()
    # the slider's motion that of the dry joint, to within what 2000 impact steps make of a 1e-9 film
    print("slider, oil at 1e-9 of its viscosity against the dry joint (m):", dev)
    assert dev < 0.01 * float(m.params["clearance"]), dev
