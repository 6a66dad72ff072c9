"""Impossible starts are refused by name (API and CLI, built-in and user models); a start the user asks to project
is put onto its joints, manifold and contacts."""

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact import cli
from jaxcontact.initial import StartError, check_state, project_state
from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.system import kinematics

# A planar ball whose start height is a parameter: h < radius starts it in the floor.
USER_MODEL = textwrap.dedent("""
    import jax.numpy as jnp
    from jaxcontact.models import Model, apply_overrides
    from jaxcontact.planar import Mechanism

    DEFAULTS = {"m": 1.0, "r": 0.1, "h": 0.5, "restitution": 0.5, "gravity": 9.81}
    MECH = Mechanism("ball")
    BALL = MECH.body("ball", mass="m", inertia="m*r**2/2")
    MECH.gravity("gravity")
    FLOOR = MECH.line(point=(0.0, 0.0), normal=(0.0, 1.0))
    MECH.circle_contact("floor", BALL, (0.0, 0.0), "r", FLOOR, restitution="restitution")
    SYSTEM, _ = MECH.build(DEFAULTS)

    def ball(**overrides):
        p = apply_overrides(DEFAULTS, overrides)
        start = lambda p: (jnp.stack([0.0 * p["h"], p["h"], 0.0 * p["h"]]), jnp.zeros(3))
        return Model("ball", SYSTEM, p, start, dt=1e-3, t_final=0.05, description="a ball")
""")


def _start(name, change):
    m = get_model(name)
    q, u = m.initial_state(m.params)
    return m, change(jnp.asarray(q)), u


@pytest.mark.parametrize(
    "name, change, match",
    [
        ("sphere-on-plane", lambda q: q.at[2].add(-1.0), r"contact 'plane': gap = -1\.000e\+00 < −tol"),
        (
            "box-toss",
            lambda q: q.at[3:7].set(0.0),
            r"coordinates \['box.qw', 'box.qx', 'box.qy', 'box.qz'\] .* off "
            r"their manifold",
        ),
        ("four-bar", lambda q: q.at[0].add(0.3), r"constraint row 'O1.x': Φ = 3\.000e-01"),
    ],
)
def test_simulate_refuses_an_impossible_start_by_name(name, change, match):
    m, q, u = _start(name, change)
    with pytest.raises(ValueError, match=match):
        simulate(m.system, m.params, q, u, dt=m.dt, n_steps=2)


def test_a_box_corner_is_named_and_a_batch_names_its_sample():
    m, q, u = _start("box-toss", lambda q: q)
    qb = jnp.tile(q, (5, 1)).at[3, 2].set(0.0)  # sample 3 on the floor at its centre: four corners below it
    pb = jax.tree.map(lambda x: jnp.broadcast_to(x, (5,) + jnp.shape(x)), m.params)
    with pytest.raises(StartError, match=r"contact 'plane\[\d\]' \(batch sample 3\): gap = ") as e:
        check_state(m.system, pb, qb)
    assert e.value.sample == 3
    check_state(m.system, pb, jnp.tile(q, (5, 1)))  # the consistent batch passes


@pytest.mark.parametrize("name, shift", [("four-bar", 0.05), ("sphere-on-plane", -0.02)])
def test_a_start_asked_to_be_projected_lands_on_the_constraints(name, shift):
    index = 2 if name == "sphere-on-plane" else 0
    m, q, u = _start(name, lambda q: q.at[index].add(shift))
    qp, up = project_state(m.system, m.params, q, u)
    check_state(m.system, m.params, qp, up, tol=1e-9)  # joints, manifold, contacts and joint velocities hold
    k = kinematics(m.system, qp, 0.0, m.params)
    assert float(jnp.max(jnp.abs(qp - q))) == pytest.approx(abs(shift), rel=0.5)  # moved by about the break
    assert k.gap.size == 0 or float(jnp.min(k.gap)) > -1e-9
    traj = simulate(m.system, m.params, q, u, dt=m.dt, n_steps=2, start="project")
    np.testing.assert_allclose(traj.q[0], qp, atol=1e-12)


def test_a_run_continued_from_its_own_last_state_keeps_its_small_penetration():
    m, q, u = _start("sphere-on-plane", lambda q: q.at[2].add(-2e-5))  # a landing's O(h v) penetration
    with pytest.raises(ValueError, match="continue it \\(start='continue'\\)"):
        simulate(m.system, m.params, q, u, dt=m.dt, n_steps=2)
    traj = simulate(m.system, m.params, q, u, dt=m.dt, n_steps=2, start="continue")
    np.testing.assert_allclose(traj.q[0], q)  # kept as it was
    with pytest.raises(ValueError, match="off their manifold"):  # still finite and on the manifold
        simulate(m.system, m.params, q.at[3].set(2.0), u, dt=m.dt, n_steps=2, start="continue")


def test_user_model_start_on_the_command_line_and_in_a_study(tmp_path, capsys):
    path = tmp_path / "ball.py"
    path.write_text(USER_MODEL)
    model = f"{path}:ball"
    assert cli.main(["simulate", model, "--set", "h=0.05", "--out", str(tmp_path / "s"), "--no-plots"]) == 2
    assert "contact 'floor': gap = -5.000e-02 < −tol" in capsys.readouterr().err
    assert (
        cli.main(
            ["simulate", model, "--set", "h=0.05", "--start", "project", "--out", str(tmp_path / "p"), "--no-plots"]
        )
        == 0
    )
    q = np.load(tmp_path / "p" / "trajectory.npz")["q"]
    assert q[0, 1] == pytest.approx(0.1, abs=1e-9)  # lifted onto the floor
    assert (
        cli.main(
            [
                "mc",
                model,
                "--param",
                "h=uniform(0.0,0.5)",
                "--n",
                "64",
                "--outcome",
                "max:ball.y",
                "--out",
                str(tmp_path / "mc"),
                "--no-plots",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "sampled parameters h = " in err and "contact 'floor' (batch sample" in err and "narrow" in err


def test_dt_beyond_the_horizon_is_refused(capsys):
    assert cli.main(["simulate", "bouncing-ball", "--dt", "5", "--t-final", "1", "--check"]) == 2
    assert "dt = 5 s must be ≤ t_final = 1 s" in capsys.readouterr().err
