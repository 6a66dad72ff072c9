"""Planar arm of flexible links with N clearance revolute joints (``flexible-arm-6``, ``flexible-arm-60``): the
joints assembled at the start, the clearance arm follows the ideal-joint arm to within its clearances, an undriven
frictionless elastic arm released in gravity swings without gaining energy, and bad parameters are refused by name."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import REGISTRY, get_model
from jaxcontact.models import flexible_arm as fa
from jaxcontact.models.slider_crank import hertz_cylinder_stiffness
from jaxcontact.simulate import simulate
from jaxcontact.smoothing.beam import GAUSS_W, GAUSS_XI, strains
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.stepping.projection import Projection

SCHEME = MoreauJean(projection=Projection())


def _batched(params, name, values):
    batch = {k: jnp.full(len(values), v) for k, v in params.items()}
    batch[name] = jnp.asarray(values, batch[name].dtype)
    return batch


def arm_energy(m, q, u, n_links, n_elements=1):
    """Kinetic + gravity + elastic energy of the links (the hub is held still: its energy is constant)."""
    p = m.params
    kinetic = 0.5 * u @ m.system.mass(q, {**p, "smoothing": jnp.zeros_like(p["smoothing"])}) @ u
    l = p["link_L"] / n_elements
    rho_a, ea, ei, g = p["link_rho"] * p["link_A"], p["link_E"] * p["link_A"], p["link_E"] * p["link_I"], p["g"]
    # ∫ y dx over an element of cubic Hermite shape: l (y_A/2 + l y'_A/12 + y_B/2 − l y'_B/12).
    weights_y = l * jnp.array([0.0, 0.5, 0.0, l / 12, 0.0, 0.5, 0.0, -l / 12])
    total = kinetic
    for k in range(n_links):
        start = 3 + 4 * (n_elements + 1) * k
        for j in range(n_elements):
            e = q[start + 4 * j : start + 4 * j + 8]
            total += rho_a * g * weights_y @ e
            s = jax.vmap(lambda xi: strains(e, xi, l))(jnp.asarray(GAUSS_XI))  # (5, 2): ε, κ
            total += 0.5 * l * jnp.asarray(GAUSS_W) @ (ea * s[:, 0] ** 2 + ei * s[:, 1] ** 2)
    return total


def test_registered_models_name_their_clearance_joints():
    from jaxcontact.commands.models import first_line

    assert REGISTRY["flexible-arm-6"] == "flexible_arm:arm6" and REGISTRY["flexible-arm-60"] == "flexible_arm:arm60"
    for n in (6, 60):
        m = get_model(f"flexible-arm-{n}")
        assert m.name == f"flexible-arm-{n}" and f"{n} rigid clearance revolute joints" in m.description
        assert f"with {n} clearance revolute joints" in first_line(REGISTRY[m.name])
        assert m.system.n_dof == 3 + 8 * n and len(m.system.contact_names) == n
        assert [f"clearance_{k}" for k in range(1, n + 1)] == [k for k in m.params if k.startswith("clearance_")]
        assert m.param_table.unit(f"clearance_{n}") == "m" and m.param_table.unit("link_E") == "Pa"
        assert m.t_final == 20.0 and m.study is not None
    ideal = get_model("flexible-arm-6-ideal")
    assert "ideal revolute pins" in ideal.description and ideal.system.gaps is None
    assert not any(k.startswith("clearance_") for k in ideal.params)
    assert fa.model("rigid", 6, n_elements=2).system.n_dof == 3 + 12 * 6


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match=r"clearance_3.*> 0"):
        get_model("flexible-arm-6", clearance_3=-1e-4)
    with pytest.raises(ValueError, match=r"restitution.*in \[0, 1\]"):
        get_model("flexible-arm-6", restitution=1.5)
    with pytest.raises(ValueError, match=r"link_E.*> 0"):
        get_model("flexible-arm-60", link_E=0.0)
    with pytest.raises(ValueError, match="clearance_7"):
        get_model("flexible-arm-6", clearance_7=1e-4)  # the 6-link arm has no joint 7
    with pytest.raises(ValueError, match=r"n_links = 0 must be an int in \[1, 200\]"):
        fa.model("rigid", 0)
    with pytest.raises(ValueError, match="n_elements = 3 must be 1 or 2"):
        fa.model("rigid", 6, n_elements=3)
    with pytest.raises(ValueError, match="contact = 'oily' must be one of"):
        fa.model("oily", 6)


def _eccentricity(q, p, k: int):
    """‖pin − hole‖ of joint k (1-based) by hand: the hole at link k's start node, the pin on the hub (its local
    point (0, −hub_r)) or at link k − 1's end node; one element per link (8 coordinates after the hub's 3)."""
    hole = q[3 + 8 * (k - 1) : 3 + 8 * (k - 1) + 2]
    if k == 1:
        th, r = q[2], p["hub_r"]
        pin = jnp.stack([q[0] + r * jnp.sin(th), q[1] - r * jnp.cos(th)])
    else:
        pin = q[3 + 8 * (k - 1) - 4 : 3 + 8 * (k - 1) - 2]
    return jnp.linalg.norm(pin - hole)


@pytest.mark.parametrize("n_links", [6, 60])
def test_joints_are_assembled_at_the_start(n_links):
    # Each hole rests on its pin: eccentricity = clearance (gap 0) for distinct clearances, hanging or inclined;
    # the links keep their length and the hub's pivot and drive rows hold.
    clearances = {f"clearance_{k}": 1e-4 * (1 + k % 3) for k in range(1, n_links + 1)}
    for theta0 in (0.0, 0.4):
        m = fa.model("rigid", n_links, theta0=theta0, **clearances)
        q0, u0 = m.initial_state(m.params)
        gaps = m.system.gaps(q0, 0.0, m.params)
        assert float(jnp.max(jnp.abs(gaps))) < 1e-13, gaps  # float64 rounding of coordinates up to 6 m
        ecc = jnp.stack([_eccentricity(q0, m.params, k) for k in range(1, n_links + 1)])
        np.testing.assert_allclose(ecc, list(clearances.values()), rtol=1e-9)
        assert float(jnp.max(jnp.abs(m.system.constraints(q0, 0.0, m.params)))) < 1e-15
        assert float(jnp.max(jnp.abs(u0))) == 0.0
        assert max(abs(float(m.observables[f"joint_gap_{k}"](q0, m.params))) for k in (1, n_links)) < 1e-13
        tip_x, tip_y = fa.tip(q0, n_links)
        reach = n_links * 0.1 + sum(clearances.values())  # from the hub's pin: the links and the clearances
        np.testing.assert_allclose(
            [tip_x, tip_y], [reach * np.sin(theta0), -0.05 - reach * np.cos(theta0)], rtol=0, atol=1e-12
        )


def test_clearance_arm_follows_the_ideal_arm_within_its_clearances():
    # Two links, the hub driven fast (40 rad/s: the hub's pin moves 10 mm in 0.03 s), frictionless joints (the
    # ideal pins are: with μ = 0.05 the friction torque adds a departure of 8.5e-5 m that does not shrink with c).
    # The clearance arm starts Σc lower (its holes rest on their pins) and, its joints in tension, its tip departs
    # from the ideal arm's by Σc and no more; the departure shrinks with the clearances (one batched run over
    # c = 1e-4, 1e-5, 1e-6 m per joint). Measured: 1.0016, 1.0025, 1.0034 Σc.
    n, steps, cs = 2, 1500, (1e-4, 1e-5, 1e-6)
    over = dict(drive_omega=40.0, friction=0.0)
    ideal = fa.model("ideal", n, **over)
    q0, u0 = ideal.initial_state(ideal.params)
    ref = simulate(ideal.system, ideal.params, q0, u0, dt=ideal.dt, n_steps=steps, scheme=SCHEME)
    m = fa.model("rigid", n, **over)
    batch = _batched(_batched(m.params, "clearance_1", cs), "clearance_2", cs)
    q0, u0 = jax.vmap(m.initial_state)(batch)
    tr = simulate(m.system, batch, q0, u0, dt=m.dt, n_steps=steps, scheme=SCHEME)
    assert np.all(tr.diagnostics.converged) and np.all(ref.diagnostics.converged)
    ref_tip, tip = np.stack(fa.tip(ref.q, n), -1), np.stack(fa.tip(tr.q, n), -1)
    moved = np.linalg.norm(ref_tip[-1] - ref_tip[0])
    assert moved > 5 * 2 * max(cs), moved  # the drive moved the tip by much more than the clearances
    dev = np.linalg.norm(tip - ref_tip[None], axis=-1).max(axis=1)
    print("tip departure from the ideal arm (m):", dev, "Σc:", 2 * np.array(cs))
    assert np.all(dev <= 1.01 * 2 * np.array(cs)), dev
    assert dev[0] > 9 * dev[1] > 81 * dev[2], dev
    gaps = jax.vmap(jax.vmap(lambda q, p: m.system.gaps(q, 0.0, p), (0, None)), (0, 0))(tr.q, batch)
    # Moreau–Jean keeps velocities, not positions, out of penetration: a drift of O(dt · v) at most, well below
    # the clearance (measured 1.3e-9 m).
    assert float(jnp.min(gaps)) > -1e-4 * max(cs)
    assert np.all(np.asarray(gaps) <= np.asarray(cs)[:, None, None] + 1e-15)


def test_undriven_frictionless_arm_swings_without_gaining_energy():
    # The hub held (drive amplitude 0), frictionless elastic joints (restitution 1), the arm released straight at
    # 0.5 rad from hanging: it swings down under gravity and its energy (links' kinetic, gravity and strain) does not
    # grow; model smoothing only damps the links' stiff modes. Measured over 0.2 s: a loss of 6.2e-6 of the kinetic
    # energy gained, no gain.
    n, steps = 2, 10_000
    m = fa.model("rigid", n, drive_amplitude=0.0, theta0=0.5, friction=0.0, restitution=1.0)
    q0, u0 = m.initial_state(m.params)
    tr = simulate(m.system, m.params, q0, u0, dt=m.dt, n_steps=steps, scheme=SCHEME, save_every=100)
    assert np.all(tr.diagnostics.converged)
    x, y = fa.tip(tr.q, n)
    assert float(x[0] - x[-1]) > 0.05, (x[0], x[-1])  # swung towards the vertical
    energy = np.asarray(jax.vmap(lambda q, u: arm_energy(m, q, u, n))(tr.q, tr.u))
    kinetic_gained = float(0.5 * tr.u[-1] @ m.system.mass(tr.q[-1], {**m.params, "smoothing": 0.0}) @ tr.u[-1])
    drift = energy - energy[0]
    print("energy drift / kinetic energy gained:", drift.max() / kinetic_gained, drift.min() / kinetic_gained)
    assert kinetic_gained > 1e-3
    assert drift.max() <= 1e-6 * kinetic_gained and drift.min() > -1e-4 * kinetic_gained, drift


def test_cli_simulates_the_six_link_arm(tmp_path, capsys):
    import argparse

    from jaxcontact.commands import simulate as cmd

    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    out = tmp_path / "arm"
    rc = cmd.run(parser.parse_args(["flexible-arm-6", "--t-final", "0.002", "--out", str(out), "--no-plots"]))
    assert rc == 0
    q = np.load(out / "trajectory.npz")["q"]
    assert q.shape == (101, 51) and np.all(np.isfinite(q))
    assert "flexible-arm-6" in capsys.readouterr().out


def test_compliant_joints_by_the_penalty_scheme_stay_assembled():
    # The compliant variant (Hertz stiffness from each joint's clearance, Hunt–Crossley damping), two links, 2 ms of
    # a fast drive at the penalty scheme's 1 µs step: joint 1 carries both hanging links, its penetration of the
    # order of Hertz's static (weight / K)^(2/3) = 2.3e-8 m (measured peak 4.8e-8 m), far below the clearance.
    n, steps = 2, 2000
    m = fa.model("compliant", n, drive_omega=40.0)
    assert m.dt == 1e-6 and m.system.compliant_gaps is not None and m.system.gaps is None
    q0, u0 = m.initial_state(m.params)
    tr = simulate(m.system, m.params, q0, u0, dt=m.dt, n_steps=steps, scheme=Penalty(), save_every=10)
    assert np.all(np.isfinite(np.asarray(tr.q)))
    gaps = jax.vmap(lambda q: m.system.compliant_gaps(q, 0.0, m.params))(tr.q)
    c = float(m.params["clearance_1"])
    print("compliant joints: gap range (m)", float(jnp.min(gaps)), float(jnp.max(gaps)))
    weight = n * float(m.params["link_rho"] * m.params["link_A"] * m.params["link_L"] * m.params["g"])
    static = (weight / float(hertz_cylinder_stiffness(m.params["pin_radius"], c))) ** (2 / 3)
    assert 0.5 * static < -float(jnp.min(gaps)) < 4 * static, (float(jnp.min(gaps)), static)
    assert float(jnp.max(gaps)) < c


def test_default_study_reads_each_joint_and_the_ideal_arm():
    # Each joint's peak force and free flight by its contact's name, the tip's distance from the ideal-joint arm's;
    # every outcome resolves on the model (names, contacts, the reference's observables) before any simulation.
    from jaxcontact.studies.outcomes import outcome

    m = get_model("flexible-arm-6")
    names = m.study.outcomes
    for k in range(1, 7):
        assert f"peak_force:joint_{k}" in names and f"free_flight:joint_{k}" in names
    assert {"path_rms:tip_x,tip_y@flexible-arm-6-ideal", "path_max:tip_x,tip_y@flexible-arm-6-ideal"} <= set(names)
    outs = {n: outcome(n, m.system, dt=m.study.dt, observables=m.observables, references=m.references) for n in names}
    assert outs["path_rms:tip_x,tip_y@flexible-arm-6-ideal"].unit == "m" and outs["peak_force:joint_6"].unit == "N"
    # The compliant variant (the study's penalty runs) names its joints too, in the order of its gaps' rows.
    soft = fa.model("compliant", 6)
    assert soft.system.contact_names == tuple(f"joint_{k}" for k in range(1, 7))
    q0, _ = soft.initial_state(soft.params)
    hole_3 = 3 + 8 * 2  # link 3's start node: the hole of joint 3
    moved = soft.system.compliant_gaps(q0.at[hole_3].add(1e-5), 0.0, soft.params)
    assert np.flatnonzero(np.abs(np.asarray(moved)) > 1e-9).tolist() == [2]
    for n in names:
        outcome(n, soft.system, dt=soft.dt, observables=soft.observables, references=soft.references)
    long_arm = fa._study_outcomes(60)  # 60 joints: all joints together, no registered ideal arm of that size
    assert "free_flight" in long_arm and "peak_force" in long_arm and not any(n.startswith("path_") for n in long_arm)


def test_lubricated_arm_is_registered_with_its_study():
    # Every joint in oil: a film per joint beside its compliant dry contact, the study's uncertain clearances,
    # viscosity and restitution by the penalty scheme, its outcomes resolved on the model.
    from jaxcontact.commands.models import first_line
    from jaxcontact.studies.outcomes import outcome

    assert REGISTRY["flexible-arm-6-lubricated"] == "flexible_arm:lubricated6"
    m = get_model("flexible-arm-6-lubricated")
    assert m.name == "flexible-arm-6-lubricated" and "6 lubricated clearance revolute joints" in m.description
    assert "lubricated" in first_line(REGISTRY[m.name]) and m.dt == 1e-6
    assert {"viscosity", "bearing_length", "film_threshold"} <= set(m.params)
    assert m.param_table.unit("viscosity") == "Pa·s"
    assert m.system.contact_names == tuple(f"joint_{k}" for k in range(1, 7)) and m.system.gaps is None
    study = m.study
    assert study.scheme == "penalty" and study.dt == 1e-6
    # The film and the dry joints' friction taken linearly implicitly (the penalty scheme's default with films).
    assert Penalty().plan(m.system)["integrator"].startswith("rosenbrock-w")
    assert {p.split("=")[0] for p in study.params} == {f"clearance_{k}" for k in range(1, 7)} | {
        "viscosity",
        "restitution",
    }
    for n in study.outcomes:
        outcome(n, m.system, dt=study.dt, observables=m.observables, references=m.references)
    with pytest.raises(ValueError, match=r"film_threshold.*in \(0, 1\)"):
        get_model("flexible-arm-6-lubricated", film_threshold=1.0)
    # The film acts only in the lubricated arm: at a state with the pins off centre and moving, its forces differ
    # from the compliant arm's by the films alone.
    dry = fa.model("compliant", 6)
    q0, _ = m.initial_state(m.params)
    u = jnp.asarray(np.random.default_rng(1).normal(size=q0.shape) * 0.01)
    # joint 3's hole (link 3's start node, hanging below its pin by the clearance) halfway back up: ε = 0.5
    q = q0.at[3 + 8 * 2 + 1].add(0.5 * float(m.params["clearance_3"]))
    film = m.system.forces(q, u, 0.0, m.params) - dry.system.forces(q, u, 0.0, {**dry.params, **m.params})
    # Every other joint rests on its wall (ε = 1: no film); joint 3's film pushes link 2's end node (its pin) and
    # link 3's start node (its hole) apart, equal and opposite, and nothing else.
    film = np.asarray(film)
    pin, hole = [3 + 8 + 4, 3 + 8 + 5], [3 + 16, 3 + 17]
    assert np.flatnonzero(film).tolist() == pin + hole
    np.testing.assert_allclose(film[pin], -film[hole], rtol=1e-12)
    assert np.linalg.norm(film[pin]) > 1e-3
