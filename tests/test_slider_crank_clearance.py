"""Slider–crank with a crank–rod clearance joint: clearance → 0 approaches the ideal joint; the journal stays in."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.contact_laws import restitution_damping
from jaxcontact.models import get_model
from jaxcontact.models import slider_crank as sc
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean, Penalty

DT, N = 5e-6, 4000  # 0.02 s: two thirds of a crank turn at ω = 200 rad/s
SCHEME = Penalty(diagonal_mass=True)


def _eccentricity(mech, q, p):
    """|p_pin − p_hole| over a trajectory (rows of q)."""
    e = jax.vmap(lambda qq: sc.journal_eccentricity(mech, qq, p))(q)
    return np.linalg.norm(np.asarray(e), axis=-1)


def _batch(params, **columns):
    B = len(next(iter(columns.values())))
    out = {k: jnp.full(B, v) for k, v in params.items()}
    out.update({k: jnp.asarray(v) for k, v in columns.items()})
    return out


@pytest.fixture(scope="module")
def ideal():
    _, system, p = sc.build("ideal")
    q0, u0 = sc.initial_state(p)
    return simulate(system, p, q0, u0, dt=DT, n_steps=N, scheme=SCHEME, save_every=20)


@pytest.fixture(scope="module")
def shrinking_clearance():
    """One jitted, vmapped run over a batch of (clearance, K, c, μ): K from Hertz for each clearance,
    the damping matched to ε = 0.9 at 0.5 m/s, and a different friction coefficient per sample."""
    mech, system, p = sc.build("compliant")
    clearance = np.array([4e-4, 1e-4, 2.5e-5])
    K = sc.hertz_cylinder_stiffness(0.01, clearance)
    batch = _batch(
        p,
        clearance=clearance,
        stiffness=K,
        damping=restitution_damping(K, 0.9, 0.5),
        friction=np.array([0.01, 0.05, 0.1]),
    )
    q0, u0 = jax.vmap(sc.initial_state)(batch)
    tr = simulate(system, batch, q0, u0, dt=DT, n_steps=N, scheme=SCHEME, save_every=20)
    return mech, system, batch, tr


def test_clearance_to_zero_approaches_ideal_joint(ideal, shrinking_clearance):
    """The slider's deviation from the ideal mechanism shrinks with the clearance and stays of its order."""
    _, _, batch, tr = shrinking_clearance
    assert np.all(tr.diagnostics.converged)
    dev = np.max(np.abs(np.asarray(tr.q[:, :, 6] - ideal.q[None, :, 6])), axis=1)
    c = np.asarray(batch["clearance"])
    assert np.all(np.diff(dev) < 0), dev
    assert np.all(dev < 2.0 * c), (dev, c)  # the pin can only wander by the clearance (+ contact deformation)
    # The rod angle too, and the constraint drift of the ideal joints stays at Baumgarte's plateau.
    dev_rod = np.max(np.abs(np.asarray(tr.q[:, :, 5] - ideal.q[None, :, 5])), axis=1)
    assert np.all(np.diff(dev_rod) < 0)
    assert float(jnp.max(tr.diagnostics.phi)) < 1e-9


def test_journal_stays_inside_hole(shrinking_clearance):
    """Penetration max(|e| − c) is bounded by the contact deformation: steel Hertz contact
    (K ≈ 7e10 N/m^1.5) hit at ~2 m/s relative speed deforms by (5 m v² / 4K)^(2/5) ≈ 40 µm.
    Measured: 39, 14, 5 µm for c = 400, 100, 25 µm (≈ 10 % of the largest clearance)."""
    mech, _, batch, tr = shrinking_clearance
    c = np.asarray(batch["clearance"])
    ecc = np.stack([_eccentricity(mech, tr.q[i], jax.tree.map(lambda x: x[i], batch)) for i in range(3)])
    penetration = ecc.max(axis=1) - c
    assert np.all(ecc.max(axis=1) > 0.9 * c)  # contact happens (the journal reaches the wall)
    assert np.all(penetration < 5e-5) and penetration[0] < 0.15 * c[0], penetration
    assert np.all(np.diff(penetration) < 0)  # smaller clearance: slower impacts, stiffer contact
    assert np.all(np.asarray(tr.impulse_normal) >= 0)


@pytest.mark.slow
def test_batched_run_equals_single_runs(shrinking_clearance):
    """jit + vmap over (μ, K, clearance): the last sample equals its own single run."""
    _, system, batch, tr = shrinking_clearance
    p = jax.tree.map(lambda x: x[-1], batch)
    q0, u0 = sc.initial_state(p)
    one = simulate(system, p, q0, u0, dt=DT, n_steps=N, scheme=SCHEME, save_every=20)
    np.testing.assert_allclose(tr.q[-1], one.q, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_rigid_clearance_with_moreau_jean(ideal):
    """The registry model (rigid pin-in-hole, Moreau–Jean impacts): inside the hole up to O(h v)
    penetration, and close to the ideal mechanism."""
    m = get_model("slider-crank-clearance")
    q0, u0 = m.initial_state(m.params)
    tr = simulate(
        m.system, m.params, q0, u0, dt=1e-5, n_steps=2000, scheme=MoreauJean(diagonal_mass=True), save_every=10
    )
    assert np.all(tr.diagnostics.converged)
    mech = sc.mechanism("rigid")
    c = float(m.params["clearance"])
    ecc = _eccentricity(mech, tr.q, m.params)
    assert ecc.max() > 0.9 * c and ecc.max() < 1.05 * c
    dev = np.max(np.abs(np.asarray(tr.q[:, 6] - ideal.q[:, 6])))  # same saved times
    assert dev < 2 * c


def test_cli_runs_the_registry_model_and_names_the_scheme_rule(tmp_path, capsys):
    """``jaxcontact simulate slider-crank-clearance`` (rigid joint, Moreau–Jean); ``--scheme penalty`` on
    the rigid model is refused with the rule."""
    import argparse

    from jaxcontact.commands import simulate as cmd

    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    out = tmp_path / "sc"
    rc = cmd.run(parser.parse_args(["slider-crank-clearance", "--t-final", "0.002", "--out", str(out), "--no-plots"]))
    assert rc == 0 and np.load(out / "trajectory.npz")["q"].shape == (201, 9)
    assert "impacts" in capsys.readouterr().out
    rc = cmd.run(
        parser.parse_args(
            ["slider-crank-clearance", "--scheme", "penalty", "--t-final", "0.002", "--out", str(out), "--no-plots"]
        )
    )
    assert rc == 2 and "compliant contacts only" in capsys.readouterr().err


@pytest.mark.slow
def test_example_writes_its_plots(tmp_path):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "slider_crank_clearance.py"
    spec = importlib.util.spec_from_file_location("example_slider_crank_clearance", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--out", str(tmp_path), "--t-final", "0.01", "--rows", "500"]) == 0
    for png in ("journal_path.png", "slider_acceleration.png", "contact_force.png"):
        assert (tmp_path / png).stat().st_size > 10_000
