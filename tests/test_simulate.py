"""The simulation API: batch = singles, save_every, input checks, trajectory layout."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import Trajectory, n_steps_for, simulate, simulate_model
from jaxcontact.stepping import MoreauJean

BALL = get_model("bouncing-ball")
BLOCK = get_model("sliding-block")
B = 1024


def _ball_batch(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "mass": jnp.asarray(rng.uniform(0.5, 2.0, B)),
        "radius": jnp.asarray(rng.uniform(0.0, 0.1, B)),
        "height": jnp.asarray(rng.uniform(0.5, 2.0, B)),
        "restitution": jnp.asarray(rng.uniform(0.0, 1.0, B)),
        "gravity": jnp.asarray(rng.uniform(9.0, 10.0, B)),
    }


def _block_batch(seed=1):
    rng = np.random.default_rng(seed)
    return {
        "mass": jnp.asarray(rng.uniform(0.5, 2.0, B)),
        "friction": jnp.asarray(rng.uniform(0.0, 1.0, B)),  # both stopping and sliding
        "slope_deg": jnp.asarray(rng.uniform(5.0, 40.0, B)),
        "speed": jnp.asarray(rng.uniform(0.0, 2.0, B)),
        "gravity": jnp.asarray(rng.uniform(9.0, 10.0, B)),
    }


def _leaves_close(a, b, atol):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == bool:
            assert np.array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=0, atol=atol)


@pytest.mark.parametrize("model, make", [(BALL, _ball_batch), (BLOCK, _block_batch)], ids=["ball", "block"])
def test_batch_of_1024_equals_single_runs(model, make):
    params = make()
    q0, u0 = jax.vmap(model.initial_state)(params)
    batch = simulate(model.system, params, q0, u0, dt=1e-2, n_steps=150)
    assert batch.q.shape == (B, 151, model.system.n_dof)
    batch_np = jax.tree.map(np.asarray, batch)
    params_np, q0_np, u0_np = jax.tree.map(np.asarray, params), np.asarray(q0), np.asarray(u0)
    for i in range(0, B, 8):  # 128 singles (one compilation) against the full batch
        p = jax.tree.map(lambda x: x[i], params_np)
        single = simulate(model.system, p, q0_np[i], u0_np[i], dt=1e-2, n_steps=150)
        _leaves_close(jax.tree.map(lambda x: x[i], batch_np), single, 1e-12)
    # the batch really varies: contact in some samples, different trajectories
    assert bool(batch.active.any()) and float(jnp.std(batch.q[:, -1, 0])) > 0.01


def test_save_every_keeps_every_kth_state():
    full = simulate_model(BALL, dt=1e-3, t_final=3.0)
    sub = simulate_model(BALL, dt=1e-3, t_final=3.0, save_every=10)
    assert sub.q.shape == (301, 1)
    np.testing.assert_array_equal(np.asarray(sub.q), np.asarray(full.q[::10]))
    np.testing.assert_array_equal(np.asarray(sub.t), np.asarray(full.t[::10]))
    np.testing.assert_allclose(
        np.asarray(sub.diagnostics.energy), np.asarray(full.diagnostics.energy[::10]), rtol=1e-14
    )  # fused differently: rounding only
    # step quantities summarise the 10 steps of each saved interval
    pn = np.asarray(full.impulse_normal[1:, 0]).reshape(300, 10).sum(1)
    np.testing.assert_allclose(np.asarray(sub.impulse_normal[1:, 0]), pn, rtol=1e-14, atol=1e-15)
    act = np.asarray(full.active[1:, 0]).reshape(300, 10).any(1)
    np.testing.assert_array_equal(np.asarray(sub.active[1:, 0]), act)


def test_trajectory_layout_and_repr():
    tr = simulate_model(BALL, dt=1e-3, t_final=0.5)
    assert isinstance(tr, Trajectory)
    assert tr.t.shape == (501,) and tr.q.shape == tr.u.shape == (501, 1)
    assert tr.impulse_normal.shape == tr.active.shape == (501, 1)
    assert tr.diagnostics.residual.shape == (501,)
    assert float(tr.t[0]) == 0.0 and float(tr.t[-1]) == pytest.approx(0.5, abs=1e-15)
    assert "rows=501" in repr(tr) and "n_dof=1" in repr(tr)


def test_input_errors_name_the_value():
    sys, p = BALL.system, BALL.params
    q0, u0 = BALL.initial_state(p)
    with pytest.raises(ValueError, match=r"dt = -0.1 must be finite and > 0"):
        simulate(sys, p, q0, u0, dt=-0.1, n_steps=10)
    with pytest.raises(ValueError, match=r"n_steps = 0"):
        simulate(sys, p, q0, u0, dt=0.1, n_steps=0)
    with pytest.raises(ValueError, match=r"save_every = 3 must divide n_steps = 10"):
        simulate(sys, p, q0, u0, dt=0.1, n_steps=10, save_every=3)
    with pytest.raises(ValueError, match=r"q0 must have shape"):
        simulate(sys, p, jnp.zeros(2), jnp.zeros(2), dt=0.1, n_steps=10)
    with pytest.raises(ValueError, match=r"u0 must have the shape of q0"):
        simulate(sys, p, q0, jnp.zeros((1, 1)), dt=0.1, n_steps=10)
    with pytest.raises(ValueError, match=r"parameter \['mass'\] = nan must be finite"):
        simulate(sys, dict(p, mass=jnp.nan), q0, u0, dt=0.1, n_steps=10)
    with pytest.raises(ValueError, match=r"contact law restitution = \[1.5\] must lie in \[0.0, 1.0\]"):
        simulate(sys, dict(p, restitution=jnp.asarray(1.5)), q0, u0, dt=0.1, n_steps=10)
    with pytest.raises(ValueError, match=r"leading axis 4"):
        simulate(sys, p, jnp.zeros((4, 1)), jnp.zeros((4, 1)), dt=0.1, n_steps=10)
    with pytest.raises(ValueError, match=r"cannot solve Coulomb friction"):
        bp = BLOCK.params
        simulate(BLOCK.system, bp, *BLOCK.initial_state(bp), dt=0.1, n_steps=10, scheme=MoreauJean(solver="pgs"))
    with pytest.raises(ValueError, match=r"t_final = 0.0"):
        n_steps_for(0.1, 0.0)


def test_simulate_inside_jit_with_constant_parameters():
    """Inside jit, laws and masses computed from constant parameters are traced: the checks that need their values
    step aside instead of failing on a tracer, and the run equals the one outside jit."""
    sys, p = BALL.system, BALL.params

    def height_at_end(y0):
        return simulate(sys, p, jnp.reshape(y0, (1,)), jnp.zeros(1), dt=1e-3, n_steps=300).q[-1, 0]

    assert float(jax.jit(height_at_end)(1.0)) == float(height_at_end(1.0))
    with pytest.raises(ValueError, match=r"contact law restitution = \[1.5\] must lie in \[0.0, 1.0\]"):
        simulate(sys, dict(p, restitution=1.5), jnp.ones(1), jnp.zeros(1), dt=0.1, n_steps=10)


def test_model_overrides_are_checked():
    with pytest.raises(ValueError, match="restitution"):
        get_model("bouncing-ball", restitution=2.0)
    with pytest.raises(ValueError, match="height"):
        get_model("bouncing-ball", height=0.01, radius=0.1)
    with pytest.raises(ValueError, match="unknown parameter"):
        get_model("sliding-block", colour=1.0)
    with pytest.raises(ValueError, match="slope_deg"):
        get_model("sliding-block", slope_deg=95.0)


def test_float32_runs():
    p = jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), BALL.params)
    q0, u0 = BALL.initial_state(p)
    tr = simulate(BALL.system, p, q0.astype(jnp.float32), u0.astype(jnp.float32), dt=1e-3, n_steps=1000)
    assert tr.q.dtype == jnp.float32
    ref = simulate_model(BALL, dt=1e-3, t_final=1.0)
    np.testing.assert_allclose(np.asarray(tr.q), np.asarray(ref.q), atol=1e-4)


def test_simulate_command_writes_npz_plots_and_summary(tmp_path, capsys):
    import argparse

    from jaxcontact.commands import simulate as cmd

    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    out = tmp_path / "ball"
    rc = cmd.run(
        parser.parse_args(
            ["bouncing-ball", "--set", "restitution=0.5", "--dt", "1e-3", "--t-final", "2", "--out", str(out)]
        )
    )
    assert rc == 0
    data = np.load(out / "trajectory.npz")
    assert data["q"].shape == (2001, 1) and data["t"][-1] == pytest.approx(2.0)
    assert {"u", "energy", "residual", "converged", "phi", "phi_dot", "impulse_normal"} <= set(data.files)
    assert float(data["param_restitution"]) == 0.5
    assert {p.name for p in out.glob("*.png")} == {"coordinates.png", "contacts.png", "diagnostics.png"}
    text = capsys.readouterr().out
    assert "impacts" in text and "energy" in text and "wall time" in text
    rc = cmd.run(parser.parse_args(["bouncing-ball", "--set", "restitution=3", "--out", str(out)]))
    assert rc == 2 and "restitution" in capsys.readouterr().err


def test_singular_mass_and_constraint_jacobian_are_reported():
    from jaxcontact.system import LagrangianSystem

    two = LagrangianSystem(
        n_dof=2,
        mass=lambda q, p: jnp.diag(jnp.stack([p["m"], 1.0 + 0 * p["m"]])),
        forces=lambda q, u, t, p: jnp.zeros(2),
        constraints=lambda q, t, p: jnp.stack([q[0] - q[1], 2 * q[0] - 2 * q[1]]),
    )
    with pytest.raises(ValueError, match="positive definite"):
        simulate(two, {"m": jnp.asarray(-1.0)}, jnp.zeros(2), jnp.zeros(2), dt=0.1, n_steps=5)
    with pytest.raises(ValueError, match=r"Φ_q\(q0\) is singular"):
        simulate(two, {"m": jnp.asarray(1.0)}, jnp.zeros(2), jnp.zeros(2), dt=0.1, n_steps=5)
    with pytest.raises(ValueError, match=r"batch sample 2"):
        simulate(two, {"m": jnp.asarray([1.0, 2.0, 0.0])}, jnp.zeros((3, 2)), jnp.zeros((3, 2)), dt=0.1, n_steps=5)


def test_the_final_states_line_names_a_large_models_first_coordinates_only():
    """483 coordinates (the 60-link arm): the printed final state names the first few and says where the rest are."""
    from jaxcontact.commands.simulate import FINAL_MAX, summary

    n, rows = 483, 3
    arrays = {
        "q": np.arange(rows * n, dtype=float).reshape(rows, n),
        "u": np.zeros((rows, n)),
        "active": np.zeros((rows, 2), bool),
        "residual": np.zeros(rows),
        "converged": np.ones(rows, bool),
        "energy": np.zeros(rows),
    }
    final = summary(arrays, tuple(f"c{i}" for i in range(n)))["final"]
    assert final.count(" = ") == FINAL_MAX and f"c{FINAL_MAX - 1} = " in final and f"c{FINAL_MAX} = " not in final
    assert final.endswith(f"({n - FINAL_MAX} more coordinates in trajectory.npz)")
