"""MJCF and URDF files imported through MuJoCo's compiler (``jaxcontact.io.mjcf``), checked against MuJoCo and
against the hand-built models.

The files are in ``tests/data/mjcf``: the box of ``box-toss``, shapes placed off their bodies' principal axes
just above a floor, a double pendulum on hinges, a two-link URDF arm, and two files the import refuses.
"""

import functools
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from jaxcontact.io import mjcf  # noqa: E402
from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping.moreau_jean import MoreauJean  # noqa: E402
from jaxcontact.stepping.penalty import Penalty  # noqa: E402
from jaxcontact.stepping.projection import Projection  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "mjcf")


def path(name):
    return os.path.join(DATA, name)


def load(name, **overrides):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mjcf.ImportWarning)
        return get_model(path(name), **overrides)


def mujoco_frames(name):
    """MuJoCo's world centres of mass and inertial-frame quaternions of the moving bodies at qpos0."""
    m = mujoco.MjModel.from_xml_path(path(name))
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_forward(m, d)
    out = []
    for i in range(1, m.nbody):
        if m.body_weldid[i] == 0:
            continue
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, d.ximat[i])
        out.append(np.concatenate([d.xipos[i], quat]))
    return np.stack(out)


@pytest.mark.parametrize(
    "name",
    ["shapes.xml", "pendulum.xml", "arm.urdf", "box_toss.xml", "four_bar.xml", "rail.xml", "box_stack.xml", "door.xml"],
)
def test_coordinates_are_mujocos_inertial_frames_and_joints_are_assembled(name):
    """q0 holds each moving body's centre of mass and principal-axes quaternion as MuJoCo places them (a
    quaternion up to its sign; the file's keyframe where it has one); every joint's rows vanish there."""
    m = load(name)
    q0, u0 = m.initial_state(m.params)
    ours = np.asarray(q0).reshape(-1, 7)
    theirs = mujoco_frames(name)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours[:, :3], theirs[:, :3], atol=1e-12)
    sign = np.sign(np.sum(ours[:, 3:] * theirs[:, 3:], axis=1))[:, None]
    np.testing.assert_allclose(ours[:, 3:], sign * theirs[:, 3:], atol=1e-12)
    assert not np.any(np.asarray(u0)) or name in ("rail.xml", "door.xml")  # their keyframes set velocities
    if m.system.constraints is not None:
        assert np.max(np.abs(np.asarray(m.system.constraints(q0, 0.0, m.params)))) < 1e-12


def test_parameters_are_named_after_the_files_elements():
    """Masses, frictions and sizes by body and geom name, with the file's values; restitution and gravity."""
    m = load("shapes.xml")
    p = {k: float(v) for k, v in m.params.items()}
    assert p["block_mass"] == pytest.approx(1.5) and p["rod_mass"] == pytest.approx(0.3)  # the weight's 0.5 too
    assert p["block_half_x"] == 0.1 and p["block_half_y"] == 0.06 and p["block_half_z"] == 0.05
    assert p["rod_radius"] == 0.03 and p["rod_half_length"] == pytest.approx(0.1) and p["ball_radius"] == 0.04
    assert p["floor_friction"] == 0.6 and p["ball_friction"] == 1.0  # MuJoCo's default friction
    assert p["restitution"] == mjcf.RESTITUTION and p["gravity"] == pytest.approx(9.81)
    assert m.param_table.unit("block_mass") == "kg" and m.param_table.unit("block_half_x") == "m"
    assert m.param_table.unit("floor_friction") == "1"  # inside the pairs' expressions, still a friction
    with pytest.raises(ValueError, match="floor_friction"):
        load("shapes.xml", floor_friction=-0.1)


def test_the_drawing_is_checked_in_double_precision_whatever_the_run():
    """A file's joints are checked as assembled in float64 even where the run is in float32 (the CLI reads a
    model before it sets the precision)."""
    with jax.enable_x64(False):
        mjcf._Reader(path("rail.xml"))


def test_gaps_at_the_files_pose_place_each_shape_on_its_body():
    """Each shape starts 0.1 mm above the floor in the file: the box's four lower vertices (its frame turned and
    shifted from the body's principal axes), the capsule's two end spheres and the ball."""
    m = load("shapes.xml")
    q0, _ = m.initial_state(m.params)
    gaps = dict(zip(m.system.contact_names, np.asarray(m.system.gaps(q0, 0.0, m.params)), strict=True))
    box = sorted(v for k, v in gaps.items() if k.startswith("floor__block"))
    np.testing.assert_allclose(box[:4], 1e-4, atol=1e-12)
    np.testing.assert_allclose(box[4:], 1e-4 + 0.1, atol=1e-12)
    np.testing.assert_allclose([v for k, v in gaps.items() if k.startswith("floor__rod")], 1e-4, atol=1e-12)
    assert gaps["floor__ball"] == pytest.approx(1e-4, abs=1e-12)
    assert gaps["table__marble"] == pytest.approx(1e-4, abs=1e-12)  # on a box of the ground


def test_box_file_is_the_built_in_box_toss():
    """The MJCF box and the hand-built box-toss are the same system: masses, forces, gaps and slip velocities
    agree at random states (the import's frames, half extents and friction pairing)."""
    ours = load("box_toss.xml", restitution=0.3)
    built = get_model("box-toss")
    rng = np.random.default_rng(0)
    for _ in range(5):
        quat = rng.normal(size=4)
        q = jnp.asarray(np.concatenate([rng.normal(size=3) * 0.1, quat / np.linalg.norm(quat)]))
        u = jnp.asarray(rng.normal(size=6))
        for f in ("gaps",):
            np.testing.assert_allclose(
                getattr(ours.system, f)(q, 0.0, ours.params), built.system.gaps(q, 0.0, built.params)
            )
        np.testing.assert_allclose(
            ours.system.slip_velocity(q, u, 0.0, ours.params), built.system.slip_velocity(q, u, 0.0, built.params)
        )
        np.testing.assert_allclose(ours.system.mass(q, ours.params), built.system.mass(q, built.params))
        np.testing.assert_allclose(
            ours.system.forces(q, u, 0.0, ours.params), built.system.forces(q, u, 0.0, built.params), atol=1e-15
        )
    laws, built_laws = ours.system.laws(ours.params), built.system.laws(built.params)
    np.testing.assert_allclose(laws.restitution, built_laws.restitution)
    np.testing.assert_allclose(laws.friction, built_laws.friction)


def test_box_stack_file_is_the_hand_built_pyramid():
    """The MJCF stack of three boxes (floor–box, box–box contacts) and the pyramid built by hand in
    tests/spatial/test_box_box.py: the same gaps, slip velocities and masses at random states, and the same
    start (its 1 mm gaps)."""
    from tests.spatial.test_box_box import PYRAMID, SIZES

    ours = load("box_stack.xml")
    built, p = PYRAMID.system(), {k: jnp.asarray(v) for k, v in SIZES.items()}
    assert ours.system.contact_names[:1] == ("floor__box1[0]",) and len(ours.system.contact_names) == 8 + 25 + 25
    rng = np.random.default_rng(1)
    for _ in range(3):
        quats = rng.normal(size=(3, 4))
        quats /= np.linalg.norm(quats, axis=1, keepdims=True)
        q = jnp.asarray(np.concatenate([np.c_[rng.normal(size=(3, 3)) * 0.1, quats]]).reshape(-1))
        u = jnp.asarray(rng.normal(size=18))
        np.testing.assert_allclose(ours.system.gaps(q, 0.0, ours.params), built.gaps(q, 0.0, p), atol=1e-15)
        np.testing.assert_allclose(
            ours.system.slip_velocity(q, u, 0.0, ours.params), built.slip_velocity(q, u, 0.0, p), atol=1e-14
        )
        np.testing.assert_allclose(ours.system.mass(q, ours.params), built.mass(q, p))
    q0, _ = ours.initial_state(ours.params)
    np.testing.assert_allclose(np.asarray(q0).reshape(3, 7)[:, 2], [0.051, 0.142, 0.213], atol=1e-12)


@pytest.mark.slow  # a batch of four and one sample alone, 300 steps of three boxes each: minutes of compile
def test_the_imported_box_stack_settles_and_rests_with_every_solve_converged():
    """box_stack.xml dropped from its 1 mm gaps, a batch of four restitutions (the pyramid's tolerance, step and
    horizon, tests/spatial/test_box_box.py): every step of every sample converged; at the end the boxes are at
    rest, each upper box held on the one below by four of its vertices (no edge crossing), and each box's
    height is the stacked half-heights within the landings' penetration. Sample 0 run alone is the batch's
    row 0 to rounding (a fixed count of sweeps: a solve that sweeps until the whole batch is within its
    tolerance gives a sample other sweeps in a batch than alone)."""
    m = load("box_stack.xml")
    q0, u0 = m.initial_state(m.params)
    restitutions = [0.0, 0.05, 0.1, 0.2]
    B, h, steps, scheme = len(restitutions), 1e-3, 300, MoreauJean(tol=1e-10, iterations=500)
    params = {k: jnp.broadcast_to(v, (B,)) for k, v in m.params.items()} | {"restitution": jnp.asarray(restitutions)}
    tr = simulate(
        m.system,
        params,
        jnp.broadcast_to(q0, (B, q0.size)),
        jnp.broadcast_to(u0, (B, u0.size)),
        dt=h,
        n_steps=steps,
        scheme=scheme,
    )
    assert bool(np.all(np.asarray(tr.diagnostics.converged)))
    half = [float(m.params[f"box{i}_half_z"]) for i in (1, 2, 3)]
    stacked = np.cumsum(half) + np.cumsum([0.0, *half[:2]])
    # Box k lands on box k−1 (at rest, or rebounding at ε times its own landing speed) after falling k gaps
    # of 1 mm: relative speed at most (1 + ε) √(2 g k δ). Once its contact is active (gap ≤ 0 at the step's
    # midpoint, which moves h v per step) it penetrates at most h v and never deeper, so box k's centre sits
    # below its stacked height by at most the sum of those over the contacts under it.
    landing = (1 + max(restitutions)) * np.sqrt(2 * 9.81 * 1e-3 * np.arange(1, 4))
    penetration = h * np.cumsum(landing)
    for i in range(B):
        q, u = np.asarray(tr.q[i, -1]).reshape(3, 7), np.asarray(tr.u[i, -1])
        assert np.all(np.abs(q[:, 2] - stacked) <= penetration), (i, q[:, 2] - stacked)
        # Gravity adds g h to every velocity each step; a box held by its contacts has that taken out again to
        # the solve's tolerance, while one sliding, rocking or bouncing keeps a velocity of the order of g h.
        assert np.max(np.abs(u)) < 1e-9, (i, np.max(np.abs(u)))
        # floor–box1: 8 vertices; each box pair: 16 vertices, then 9 edge pairs.
        active = np.asarray(tr.active[i, -1])
        assert active[:8].sum() == 4 and active[8:24].sum() == 4 and active[33:49].sum() == 4, i
        assert active[24:33].sum() == 0 and active[49:].sum() == 0, i
    alone = simulate(m.system, m.params, q0, u0, dt=h, n_steps=steps, scheme=scheme)
    np.testing.assert_allclose(np.asarray(alone.q), np.asarray(tr.q[0]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(alone.u), np.asarray(tr.u[0]), rtol=0, atol=1e-12)


@pytest.mark.slow  # six runs; MuJoCo's agreement is checked by default at fourth order (the penalty scheme's RK4)
@pytest.mark.parametrize("name", ["pendulum.xml", "arm.urdf", "four_bar.xml"])
def test_contact_free_motion_converges_to_mujocos(name):
    """A double pendulum (MJCF), a two-link arm (URDF) and a four-bar closed by an equality, over 0.5 s:
    Moreau–Jean's centres of mass approach MuJoCo's (RK4 at 1e-5 s, its equality stiffened to a 0.5 ms time
    constant so that it is the hard constraint) at first order in the step (the error halves with it), within
    1 cm at 1 ms."""
    T = 0.5
    mm = mujoco.MjModel.from_xml_path(path(name))
    mm.opt.integrator, mm.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, 1e-5
    mm.eq_solref[:] = (5e-4, 1.0)
    d = mujoco.MjData(mm)
    for _ in range(round(T / 1e-5)):
        mujoco.mj_step(mm, d)
    reference = d.xipos[[i for i in range(1, mm.nbody) if mm.body_weldid[i]]]
    m = load(name)
    q0, u0 = m.initial_state(m.params)
    errors = []
    for h in (1e-3, 5e-4):
        n = round(T / h)
        tr = simulate(m.system, m.params, q0, u0, dt=h, n_steps=n, scheme=MoreauJean(), save_every=n)
        errors.append(np.max(np.abs(np.asarray(tr.q[-1]).reshape(-1, 7)[:, :3] - reference)))
    assert errors[0] < 1e-2, errors
    assert 0.4 < errors[1] / errors[0] < 0.6, errors


def _mujoco_centres(name, T, step, time_constant=None):
    """MuJoCo's centres of mass of the moving bodies after T (RK4 at ``step``; its equalities' time constant)."""
    mm = mujoco.MjModel.from_xml_path(path(name))
    mm.opt.integrator, mm.opt.timestep = mujoco.mjtIntegrator.mjINT_RK4, step
    if time_constant is not None:
        mm.eq_solref[:] = (time_constant, 1.0)
    d = mujoco.MjData(mm)
    for _ in range(round(T / step)):
        mujoco.mj_step(mm, d)
    return d.xipos[[i for i in range(1, mm.nbody) if mm.body_weldid[i]]]


@pytest.mark.parametrize(
    "name, mujoco_step, time_constant, tolerance",
    [("pendulum.xml", 1e-3, None, 2e-8), ("four_bar.xml", 1e-5, 2e-4, 1e-6)],
)
def test_contact_free_motion_matches_mujocos_at_fourth_order(name, mujoco_step, time_constant, tolerance):
    """Over 1 s at the file's step (1 ms), the RK4 of the penalty scheme (every joint a Baumgarte-stabilised
    bilateral constraint in maximal coordinates) against MuJoCo's RK4 (joint coordinates): the double pendulum
    at the same step; the four-bar, whose closing equality MuJoCo keeps soft (a spring of time constant
    ``solref``, longer than two steps), against MuJoCo with that equality stiffened to 0.2 ms (a 10 µs step).
    Relative error of the centres of mass, max over bodies."""
    reference = _mujoco_centres(name, 1.0, mujoco_step, time_constant)
    m = load(name)
    q0, u0 = m.initial_state(m.params)
    tr = simulate(m.system, m.params, q0, u0, dt=1e-3, n_steps=1000, scheme=Penalty(), save_every=1000)
    ours = np.asarray(tr.q[-1]).reshape(-1, 7)[:, :3]
    assert np.max(np.abs(ours - reference)) / np.max(np.abs(reference)) < tolerance


def test_what_is_not_imported_is_named_in_one_warning():
    with pytest.warns(mjcf.ImportWarning) as record:
        get_model(path("shapes.xml"))
    (message,) = [str(w.message) for w in record if issubclass(w.category, mjcf.ImportWarning)]
    for part in (
        "block–drum (box–cylinder)",
        "1 actuators",
    ):
        assert part in message, message
    assert "floor–drum" not in message and "block–ball" not in message  # cylinder–plane and sphere–box are in
    assert "drum_axle" not in message and "block–rod" not in message  # a joint limit and a capsule–box


@pytest.mark.parametrize(
    "name, words",
    [
        ("two_joints.xml", ["body 'cart' has 2 joints"]),
        ("sideways_gravity.xml", ["gravity [9.81, 0.0, 0.0]", "-z"]),
        ("missing.xml", ["does not exist"]),
    ],
)
def test_unsupported_files_are_refused_by_name(name, words):
    with pytest.raises(ValueError) as e:
        get_model(path(name))
    for w in words:
        assert w in str(e.value)


def test_a_file_mujoco_cannot_read_is_refused_with_mujocos_reason(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='sphere'/></body></worldbody>")
    with pytest.raises(ValueError, match="MuJoCo cannot read it"):
        get_model(str(bad))


def test_a_rewritten_file_is_read_again_whatever_its_modification_time(tmp_path):
    """A model file rewritten gives its new contents' model, also where its modification time is the first
    version's (set back here, as a rewrite within one tick of the file system's clock leaves it)."""
    xml = tmp_path / "ball.xml"
    sphere = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="b" pos="0 0 1"><freejoint/><geom name="s" type="sphere" size="{}"/></body></worldbody></mujoco>"""
    xml.write_text(sphere.format(0.1))
    stamp = os.stat(xml).st_mtime_ns
    assert float(load(str(xml)).params["s_radius"]) == 0.1
    xml.write_text(sphere.format(0.2))
    os.utime(xml, ns=(stamp, stamp))
    assert float(load(str(xml)).params["s_radius"]) == 0.2


def test_simulate_a_file_comes_to_rest_on_its_shapes(tmp_path, capsys):
    """``jaxcontact simulate shapes.xml``: the box settles on a face, the capsule on its side, the ball on the
    floor (rest heights within the step's penetration v·h of a 0.1 mm drop); q holds 7 coordinates per body
    in file order; the warning and the 3D snapshots are there."""
    from jaxcontact import cli

    out = tmp_path / "s"
    argv = ["simulate", path("shapes.xml"), "--t-final", "0.3", "--out", str(out), "--no-compile-cache"]
    assert cli.main(argv) == 0
    assert "not imported" in capsys.readouterr().err
    run = np.load(out / "trajectory.npz")
    m = load("shapes.xml")
    assert run["q"].shape[1] == 7 * 5 and m.system.names[:7] == (
        "block.x",
        "block.y",
        "block.z",
        "block.qw",
        "block.qx",
        "block.qy",
        "block.qz",
    )
    q, u = run["q"][-1], run["u"][-1]
    gaps = np.asarray(m.system.gaps(jnp.asarray(q), 0.0, m.params))
    names = m.system.contact_names
    for shape in ("floor__block", "floor__rod", "floor__ball", "table__marble"):
        lowest = min(g for n, g in zip(names, gaps, strict=True) if n.startswith(shape))
        assert abs(lowest) < 5e-5, (shape, lowest)
    assert np.max(np.abs(np.r_[u[:18], u[24:]])) < 1e-3  # the free bodies at rest (the drum swings on)
    assert (out / "snapshots.png").exists() and "WebGL" in (out / "view.html").read_text()


def _batch_of_restitutions(name, values, steps, scheme=MoreauJean(tol=1e-10, iterations=500)):
    """One batched run of the file's model with ``restitution`` = each of ``values``, from its keyframe."""
    m = load(name)
    q0, u0 = m.initial_state(m.params)
    B = len(values)
    params = {k: jnp.broadcast_to(v, (B,)) for k, v in m.params.items()} | {"restitution": jnp.asarray(values)}
    q0, u0 = jnp.broadcast_to(q0, (B, q0.size)), jnp.broadcast_to(u0, (B, u0.size))
    return m, simulate(m.system, params, q0, u0, dt=1e-3, n_steps=steps, scheme=scheme)


def test_keyframe_sends_the_cart_into_the_ball_with_newtons_restitution():
    """rail.xml: its keyframe starts the cart (1 kg with a welded 0.1 kg bumper, on a slide) at 1 m/s into a
    0.2 kg ball at rest, head on: right after the impact the ball moves at (1 + ε) m v / (m + M) and the cart
    at (m − ε M) v / (m + M), up to the floor's friction during the step (μ g h = 3 mm/s); ε = 1 and 0 in one
    batch. The capsule kept off the floor rests crossed on the other one."""
    m, tr = _batch_of_restitutions("rail.xml", [1.0, 0.0], 300)
    assert float(tr.u[0, 0, 0]) == 1.0 and m.system.names[7:9] == ("bumper.x", "bumper.y")
    hit = m.system.contact_names.index("bumper__target")
    cart, ball = 1.1, 0.2
    for i, restitution in enumerate([1.0, 0.0]):
        k = int(np.argmax(np.asarray(tr.impulse_normal[i])[:, hit] > 0))
        assert 230 < k < 250, k  # the gap of 0.24 m closes at 1 m/s
        u = np.asarray(tr.u[i, k]).reshape(-1, 6)
        assert u[0, 0] == pytest.approx((cart - restitution * ball) / (cart + ball), abs=3e-3)
        assert u[1, 0] == pytest.approx(u[0, 0], abs=1e-9)  # the bumper is welded to the cart
        assert u[2, 0] == pytest.approx((1 + restitution) * cart / (cart + ball), abs=3e-3)
        q = np.asarray(tr.q[i, -1]).reshape(-1, 7)
        assert q[4, 2] == pytest.approx(0.02 + 0.04, abs=1e-4)  # log2 on log1, not on the floor


def test_a_pairs_friction_is_combined_as_mujoco_combines_it(tmp_path):
    """The larger of the two geoms' frictions; the geom of higher priority's; none where both geoms say
    condim 1; condim 6 (rolling friction) is named in the warning."""
    xml = tmp_path / "frictions.xml"
    xml.write_text(
        """<mujoco><worldbody>
        <geom name="floor" type="plane" size="1 1 0.1" friction="0.4"/>
        <body name="a" pos="0 0 0.2"><freejoint/><geom name="a" type="sphere" size="0.1" friction="0.7"/></body>
        <body name="b" pos="1 0 0.2"><freejoint/>
          <geom name="b" type="sphere" size="0.1" friction="0.9" priority="-1"/></body>
        <body name="c" pos="2 0 0.2"><freejoint/><geom name="c" type="sphere" size="0.1" condim="6"/></body>
        </worldbody>
        <contact><pair geom1="floor" geom2="a" condim="1"/></contact>
        </mujoco>"""
    )
    with pytest.warns(mjcf.ImportWarning) as record:
        m = get_model(str(xml))
    message = str(record[0].message)
    assert "rolling friction (condim 6) of floor–c" in message and "explicit pair floor–a" in message
    laws = m.system.laws(m.params)
    friction = dict(zip(m.system.contact_names, np.asarray(laws.friction), strict=True))
    assert friction["floor__a"] == 0.7 and friction["floor__b"] == 0.4 and friction["floor__c"] == 1.0
    assert friction["a__b"] == 0.7 and message.startswith(str(xml))


# Spheres over a floor (contype = conaffinity = 1 unless said): ghost collides with nothing by its bits but has an
# explicit pair with the floor; other's bits (2, 2) match neither the floor's nor the default spheres'; half's
# (2, 1) match the floor's and the default spheres' one way only, which is enough; ball and apart are an
# excluded pair; arm, its child hand and grandchild finger (ball joints) and ring welded to finger: MuJoCo
# filters parent–child pairs of weld bodies, so arm–hand, hand–finger and hand–ring never collide, arm–finger and
# arm–ring do.
FILTERS = """<mujoco model="filters">
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ghost" pos="-1 0 {z}"><freejoint/>
      <geom name="ghost" type="sphere" size="{r}" contype="0" conaffinity="0"/></body>
    <body name="other" pos="-0.5 0 {z}"><freejoint/>
      <geom name="other" type="sphere" size="{r}" contype="2" conaffinity="2"/></body>
    <body name="ball" pos="0 0 {z}"><freejoint/><geom name="ball" type="sphere" size="{r}"/></body>
    <body name="half" pos="0.5 0 {z}"><freejoint/>
      <geom name="half" type="sphere" size="{r}" contype="2" conaffinity="1"/></body>
    <body name="apart" pos="1 0 {z}"><freejoint/><geom name="apart" type="sphere" size="{r}"/></body>
    {chain}
  </worldbody>
  <contact><exclude body1="ball" body2="apart"/><pair geom1="floor" geom2="ghost"/></contact>
</mujoco>
"""
CHAIN = """<body name="arm" pos="0 0.5 {z}"><freejoint/><geom name="arm" type="sphere" size="{r}"/>
      <body name="hand" pos="0.05 0 0"><joint type="ball"/><geom name="hand" type="sphere" size="{r}"/>
        <body name="finger" pos="0.05 0 0"><joint type="ball"/><geom name="finger" type="sphere" size="{r}"/>
          <body name="ring" pos="0.02 0 0"><geom name="ring" type="sphere" size="{r}"/></body>
        </body>
      </body>
    </body>"""


def _filters(r, z, chain=True):
    """FILTERS with spheres of radius r whose centres start at height z (with or without the arm's chain)."""
    return FILTERS.format(r=r, z=z, chain=CHAIN.format(r=r, z=z) if chain else "")


def test_contacts_are_the_pairs_mujocos_collision_filter_keeps(tmp_path):
    """FILTERS: the imported contacts are exactly the geom pairs MuJoCo's rule keeps (contype/conaffinity either
    way, the explicit exclude and pair, parent–child of weld bodies), as written out by hand and as MuJoCo
    itself finds them with every sphere grown to overlap all others and the floor. Dropped 1 cm, a sphere the
    filter lets through falls through the floor freely while the ones it keeps rest on it."""
    kept = {"ghost": ["floor"], "other": ["half"], "half": ["floor", "ball", "apart"], "ball": ["floor"]}
    kept |= {"apart": ["floor"], "arm": ["floor", "ball", "half", "apart"]}
    kept |= {k: ["floor", "ball", "half", "apart"] for k in ("hand", "finger", "ring")}
    kept["finger"].append("arm")
    kept["ring"].append("arm")
    expected = {frozenset((a, b)) for a, others in kept.items() for b in others}
    assert len(expected) == 25
    mm = mujoco.MjModel.from_xml_string(_filters(1.5, 0.2))
    d = mujoco.MjData(mm)
    mujoco.mj_forward(mm, d)
    assert {frozenset(mm.geom(int(g)).name for g in pair) for pair in d.contact.geom} == expected

    r, drop = 0.03, 0.01
    xml = tmp_path / "filters.xml"
    xml.write_text(_filters(r, r + drop))
    pairs = [frozenset(name.split("__")) for name in load(str(xml)).system.contact_names]
    assert len(pairs) == len(set(pairs)) and set(pairs) == expected

    spheres = tmp_path / "spheres.xml"  # the run without the chain: a quicker compile
    spheres.write_text(_filters(r, r + drop, chain=False))
    m = load(str(spheres))
    q0, u0 = m.initial_state(m.params)
    h, steps, g = 1e-3, 150, 9.81
    tr = simulate(m.system, m.params, q0, u0, dt=h, n_steps=steps, scheme=MoreauJean(), save_every=steps)
    q, u = np.asarray(tr.q[-1]), np.asarray(tr.u[-1])
    z = {b: q[m.system.names.index(f"{b}.z")] for b in ("ghost", "other", "ball", "half", "apart")}
    # The midpoint rule integrates a constant acceleration exactly: other is in free fall, wholly under the floor.
    T = steps * h
    assert z["other"] == pytest.approx(r + drop - g * T**2 / 2, abs=1e-12) and z["other"] + r < 0
    # A sphere landing at v = √(2 g drop) turns its contact on at the first step whose midpoint gap is ≤ 0 (h v
    # below the previous one's, which was > 0) and stops there: it rests within h v under its radius.
    for b in ("ghost", "ball", "half", "apart"):
        assert 0 <= r - z[b] <= h * np.sqrt(2 * g * drop), (b, z[b])
        k = m.system.velocity_names.index(f"{b}.vx")
        assert np.max(np.abs(u[k : k + 6])) < 1e-9, (b, u[k : k + 6])  # held: the contact takes out g h


@functools.lru_cache(maxsize=1)
def _door():
    """door.xml with ε = 0.5 and 0 in one batch, 150 steps (the stop is met after about 70). The cones'
    Newton solve: the stop's edge touches the door's face at its two end vertices, two contacts on a body of
    one degree of freedom, whose Delassus matrix is singular; the cones' Gauss–Seidel stalls on the plastic
    impact there, short of its tolerance however many sweeps it makes."""
    return _batch_of_restitutions("door.xml", [0.5, 0.0], 150, MoreauJean(tol=1e-10, iterations=500, solver="newton"))


def test_a_hinged_door_rebounds_from_its_stop_by_newtons_law():
    """door.xml: a box on a hinge swung at 2 rad/s into a box fixed to the world. The impulse at the contact
    point and the hinge's reaction turn the door back at −ε ω (Newton's law at the contact point, whose normal
    velocity is ω times its lever arm), ε = 0.5 and 0 in one batch; the hinge stays assembled; every solve
    converged."""
    m, tr = _door()
    assert bool(np.all(np.asarray(tr.diagnostics.converged)))
    for i, restitution in enumerate([0.5, 0.0]):
        hit = int(np.argmax(np.asarray(tr.impulse_normal[i]).sum(axis=1) > 0))
        before, after = float(tr.u[i, hit - 1, 5]), float(tr.u[i, hit, 5])
        assert before == pytest.approx(2.0, abs=1e-3) and after == pytest.approx(-restitution * before, abs=5e-3)
        assert np.max(np.abs(np.asarray(m.system.constraints(tr.q[i, -1], 0.0, m.params)))) < 1e-3


def test_a_hinged_door_stays_at_its_stop_after_a_plastic_impact():
    """door.xml with ε = 0: after the impact the door stays where it met the stop. The face of the door
    (half-thickness 0.02 m, hinged at its edge 0.4 m from its centre, turned −30°) touches the stop's vertical
    edge at (0.15, 0.02) when that edge's distance from the door's mid-plane is the half-thickness; the door
    rests past that angle by less than one step's turn, and its angular velocity is zero."""
    m, tr = _door()
    q, u = np.asarray(tr.q[1]).reshape(-1, 7), np.asarray(tr.u[1])
    turn = 2 * np.arctan2(q[:, 6], q[:, 3]) - 2 * np.arctan2(q[0, 6], q[0, 3])  # about the vertical hinge
    np.testing.assert_allclose(q[:, 4:6], 0.0, atol=1e-9)  # the door turns about z only
    start = np.deg2rad(30.0)
    hinge = np.array([-0.4 * np.cos(start), 0.4 * np.sin(start)])
    lever = np.array([0.15, 0.02]) - hinge
    # distance of the edge from the mid-plane at the door's angle −ψ: |lever| sin(ψ − α), α its angle below x
    alpha = np.arctan2(-lever[1], lever[0])
    touching = start - (alpha + np.arcsin(0.02 / np.linalg.norm(lever)))
    hit = int(np.argmax(np.asarray(tr.impulse_normal[1]).sum(axis=1) > 0))
    omega, h = float(u[hit - 1, 5]), 1e-3
    # The contact turns on at the first step whose midpoint gap is ≤ 0; the previous midpoint's was > 0 and the
    # midpoints are ω h of turn apart. With ε = 0 the door stops at that midpoint (u_E = 0, so q_E = q_M).
    after = turn[hit:]
    assert np.all(after >= touching) and np.all(after <= touching + omega * h), (after[[0, -1]], touching)
    # A plastic impact leaves the contact's normal velocity zero to the solve's tolerance, and nothing turns the
    # door afterwards (gravity is along the hinge).
    assert np.max(np.abs(u[hit:, 5])) < 1e-9, np.max(np.abs(u[hit:, 5]))


def _joint_coordinate(m, q, name):
    (limit,) = [c for c in m.system.gaps.__self__.contacts if c.name == f"{name}_limit"]
    return np.array([float(limit.coordinate(qk, m.params)) for qk in q])


def test_a_gate_rebounds_from_its_hinge_limit_by_newtons_law():
    """gate.xml: a hinge's range is a frictionless unilateral contact on its angle. The keyframe's angle
    (0.2 rad) is the hinge's reading at the start; swung at 2 rad/s, the gate meets the upper stop (30°) and
    turns back at −ε ω, ε = 0.5 and 0 in one batch; with ε = 0 it stays at the stop (within ω h)."""
    m, tr = _batch_of_restitutions("gate.xml", [0.5, 0.0], 400)
    assert set(m.params) >= {"hinge_lower", "hinge_upper"} and m.param_table.unit("hinge_upper") == "rad"
    upper = np.deg2rad(30.0)
    for i, restitution in enumerate([0.5, 0.0]):
        s = _joint_coordinate(m, tr.q[i], "hinge")
        assert s[0] == pytest.approx(0.2, abs=1e-12)
        hit = int(np.argmax(np.asarray(tr.impulse_normal[i]).sum(axis=1) > 0))
        assert hit * 1e-3 == pytest.approx((upper - 0.2) / 2.0, abs=2e-3)
        before, after = float(tr.u[i, hit - 1, 5]), float(tr.u[i, hit, 5])
        assert before == pytest.approx(2.0, abs=1e-3) and after == pytest.approx(-restitution * before, abs=1e-6)
        assert np.max(s) < upper + 2.0 * 1e-3
        assert np.max(np.abs(np.asarray(m.system.constraints(tr.q[i, -1], 0.0, m.params)))) < 1e-3
    assert s[-1] == pytest.approx(upper, abs=2e-3)


def test_a_slider_rebounds_from_its_upper_stop_and_rests_on_its_lower_one():
    """slider_stop.xml: a block on a 45° rail sent up at 3 m/s meets the upper stop at √(9 − 2 g sin45° 0.2),
    rebounds at −ε times it, and comes to rest on the lower stop (within the step's v h); every step
    converged."""
    m, tr = _batch_of_restitutions("slider_stop.xml", [0.5, 0.0], 1500)
    assert m.param_table.unit("rail_lower") == "m"
    g_along = 9.81 * np.sqrt(0.5)
    for i, restitution in enumerate([0.5, 0.0]):
        speed = np.asarray(tr.u[i, :, 0]) * np.sqrt(2.0)  # along the rail (1, 0, 1)/√2
        hit = int(np.argmax(np.asarray(tr.impulse_normal[i])[:, 1] > 0))
        assert speed[hit - 1] == pytest.approx(np.sqrt(9.0 - 2.0 * g_along * 0.2), abs=2e-2)
        assert speed[hit] == pytest.approx(-restitution * speed[hit - 1], abs=1e-9)
        s = _joint_coordinate(m, tr.q[i, -10:], "rail")
        assert np.all(np.abs(s + 0.1) < 3e-3) and abs(speed[-1]) < 1e-9
        assert bool(np.all(tr.diagnostics.converged[i]))


def _mujoco_run(name, T):
    """MuJoCo's own run of the file over T at its step: (centres (n, 3), inertial quaternions (n, 4), qvel)."""
    mm = mujoco.MjModel.from_xml_path(path(name))
    d = mujoco.MjData(mm)
    for _ in range(round(T / mm.opt.timestep)):
        mujoco.mj_step(mm, d)
    quats = np.zeros((mm.nbody - 1, 4))
    for i in range(1, mm.nbody):
        mujoco.mju_mat2Quat(quats[i - 1], d.ximat[i])
    return d.xipos[1:].copy(), quats, d.qvel.copy()


def _ours(name, T, projection=Projection(), unconverged=0):
    """Moreau–Jean's run of the file over T: (q (rows, bodies, 7), the last u, q0 (bodies, 7)); at most
    ``unconverged`` steps whose cone solve stopped above its tolerance (and then below 1e-5)."""
    m = load(name)
    q0, u0 = m.initial_state(m.params)
    n = round(T / m.dt)
    tr = simulate(m.system, m.params, q0, u0, dt=m.dt, n_steps=n, scheme=MoreauJean(projection=projection))
    stalled = ~np.asarray(tr.diagnostics.converged)
    assert np.sum(stalled) <= unconverged and np.all(np.asarray(tr.diagnostics.residual)[stalled] < 1e-5)
    return np.asarray(tr.q).reshape(n + 1, -1, 7), np.asarray(tr.u[-1]), np.asarray(q0).reshape(-1, 7)


def _tilt(quat):
    """The angle between each body's principal axes and the vertical (rad), (n, 3): which face is down,
    whatever the turn about the vertical."""
    return np.array([np.arccos(np.clip(np.abs(mjcf_matrix(qq)[2]), 0, 1)) for qq in quat])


def mjcf_matrix(quat):
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.asarray(quat, float))
    return out.reshape(3, 3)


@pytest.mark.slow  # minutes of compile; resting where MuJoCo's do runs by default on a mesh and a capsule
def test_boxes_and_cylinders_dropped_on_a_plane_rest_where_mujocos_do():
    """drop.xml: a box and two cylinders dropped from tilted poses (Moreau–Jean with the resting contacts
    projected onto their surfaces, restitution 0) come to rest on the faces MuJoCo's soft contacts put them
    on: heights within MuJoCo's rest penetration (0.2 mm), the principal axes' tilts within 0.1°; where
    each slid on landing differs by millimetres (a rigid impact against a soft one)."""
    T = 1.0
    centres, quats, qvel = _mujoco_run("drop.xml", T)
    q, u, _ = _ours("drop.xml", T)
    assert np.max(np.abs(u)) < 1e-9 and np.max(np.abs(qvel)) < 1e-2  # both at rest
    np.testing.assert_allclose(q[-1, :, 2], [0.03, 0.1, 0.04], atol=1e-9)  # on a face, on a face, on its side
    np.testing.assert_allclose(q[-1, :, 2], centres[:, 2], atol=2e-4)
    np.testing.assert_allclose(_tilt(q[-1, :, 3:]), _tilt(quats), atol=np.radians(0.1))
    assert np.max(np.abs(q[-1, :, :2] - centres[:, :2])) < 1e-2


def test_a_cylinder_rolls_down_an_incline_where_a_box_and_a_standing_cylinder_stay():
    """incline.xml (20°, μ = 0.6 > tan 20°): the lying cylinder rolls without slipping, 1/2 (2/3 g sin 20°) T²
    down the slope (MuJoCo's soft contacts: within 1 mm), the standing cylinder and the box do not move (in
    MuJoCo they creep by about a millimetre: a soft contact's friction holds only while it slips)."""
    T = 0.5
    centres, _, _ = _mujoco_run("incline.xml", T)
    q, u, q0 = _ours("incline.xml", T)
    rolled = np.linalg.norm(q[-1, 0, :3] - q0[0, :3])
    assert rolled == pytest.approx(0.5 * 2 / 3 * 9.81 * np.sin(np.radians(20)) * T**2, rel=1e-3)
    assert np.linalg.norm(centres[0] - q0[0, :3]) == pytest.approx(rolled, abs=1e-3)
    np.testing.assert_allclose(q[-1, 1:, 3:], q0[1:, 3:], atol=1e-9)  # neither turns
    assert np.max(np.abs(q[-1, 1:, :3] - q0[1:, :3])) < 2e-4  # nor moves but for the 0.1 mm drop to the plane
    assert np.max(np.abs(u[6:])) < 1e-9


def test_a_mesh_and_a_capsule_on_a_box_rest_where_mujocos_do():
    """mesh.xml: a tetrahedron (a convex mesh: contacts at its hull's vertices, ``tetra_scale`` a parameter)
    dropped tilted onto the floor rests on its base, its centroid a quarter of its height up; a capsule dropped
    across a table (a box of the ground) rests on it at the table's top plus its radius. Plain Moreau–Jean:
    heights within the landing's penetration (a step of the fastest approach of a point of the body), the tilts
    as MuJoCo's. The pairs not built (mesh–box, mesh–capsule) are named in the warning."""
    with pytest.warns(mjcf.ImportWarning, match="table–tetra \\(box–mesh\\); contact tetra–rod \\(mesh–capsule\\)"):
        get_model(path("mesh.xml"))
    assert load("mesh.xml").param_table.unit("rod_half_length") == "m"
    T = 0.6
    centres, quats, _ = _mujoco_run("mesh.xml", T)
    m = load("mesh.xml")
    q0, u0 = m.initial_state(m.params)
    tr = simulate(m.system, m.params, q0, u0, dt=1e-3, n_steps=round(T / 1e-3), scheme=MoreauJean())
    # The step where the tetrahedron's face lands (three vertices closing with friction) leaves the cone solve at
    # a residual of a few 1e-6 however many sweeps it gets: allowed here, open in the solver.
    stalled = ~np.asarray(tr.diagnostics.converged)
    assert np.sum(stalled) <= 1 and np.all(np.asarray(tr.diagnostics.residual)[stalled] < 1e-5)
    q, u = np.asarray(tr.q[-1]).reshape(-1, 7), np.asarray(tr.u)
    assert np.max(np.abs(u[-1])) < 1e-9
    reach = np.array([0.065, 0.1])  # the farthest contact point from each centre [m]
    speed = np.max(
        np.linalg.norm(u.reshape(len(u), -1, 6)[:, :, :3], axis=2)
        + reach * np.linalg.norm(u.reshape(len(u), -1, 6)[:, :, 3:], axis=2),
        axis=0,
    )
    landing = speed * 1e-3
    np.testing.assert_array_less(np.abs(q[:, 2] - [0.085 / 4, 0.22]), landing)
    np.testing.assert_array_less(np.abs(q[:, 2] - centres[:, 2]), landing + 1e-4)
    # The tetrahedron's axis of symmetry leans by at most the landing's penetration across its base; the rod's
    # axes as MuJoCo's within 0.2°.
    assert abs(_tilt(q[:1, 3:])[0, 2] - _tilt(quats[:1])[0, 2]) < 2 * landing[0] / 0.09
    np.testing.assert_allclose(_tilt(q[1:, 3:]), _tilt(quats[1:]), atol=np.radians(0.2))


BALL = """<mujoco model="rolling_ball">
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" friction="0.4"/>
    <body name="ball" pos="0 0 0.05">
      <freejoint/>
      <geom name="ball" type="sphere" size="0.05" mass="1" friction="0.1"/>
    </body>
  </worldbody>
  <keyframe><key qpos="0 0 0.05 1 0 0 0" qvel="1 0 0 0 0 0"/></keyframe>
</mujoco>
"""


@pytest.mark.slow  # ~2 min on 2 loaded cores: compiling identify's L-BFGS and line search through the spatial step
def test_simulate_identify_and_mc_take_a_files_path_on_the_command_line(tmp_path):
    """A ball sent along the floor at v = 1 m/s slips, then rolls at 5/7 v once μ g t = 2/7 v: by T it has
    gone 5/7 v T + 2 v²/(49 μ g). Through ``jaxcontact.cli.main``, the file's path in place of a model name:
    ``simulate`` at μ = 0.45 writes the data; ``identify`` fits the floor's friction from 0.3 with the same
    scheme (impacts on the step grid, as simulate's), so the noise-free data are reproduced exactly at 0.45
    and nowhere else; ``mc`` over μ ~ U(0.3, 0.6) gives each sample's distance. Moreau–Jean (θ = 1/2)
    integrates a constant deceleration and the rolling exactly; only the step in which the slip ends is off,
    by at most the deceleration times h²."""
    import json

    from jaxcontact import cli

    xml = tmp_path / "ball.xml"
    xml.write_text(BALL)
    dt, T, v, g = 2e-3, 0.12, 1.0, 9.81
    common = ["--dt", str(dt), "--no-plots", "--no-compile-cache"]
    sim, fit, mc = tmp_path / "sim", tmp_path / "fit", tmp_path / "mc"
    argv = ["simulate", str(xml), "--set", "floor_friction=0.45", "--t-final", "0.06", "--out", str(sim)]
    assert cli.main(argv + common) == 0
    argv = ["identify", str(xml), "--data", str(sim / "trajectory.npz"), "--fit", "floor_friction=0.3"]
    argv += ["--impact-location", "step", "--steps", "15", "--out", str(fit)]
    assert cli.main(argv + common) == 0
    summary = json.loads((fit / "fit.json").read_text())
    assert summary["estimates"]["floor_friction"] == pytest.approx(0.45, rel=1e-9)
    argv = ["mc", str(xml), "--param", "floor_friction=uniform(0.3,0.6)", "--only", "--n", "8", "--no-sobol"]
    argv += ["--outcome", "final:ball.x", "--t-final", str(T), "--devices", "1", "--quiet", "--out", str(mc)]
    assert cli.main(argv + common) == 0
    assert json.loads((mc / "summary.json").read_text())["failures"]["n_failed"] == 0
    with np.load(mc / "samples.npz") as samples:
        mu, x = samples["param:floor_friction"], samples["out:final:ball.x"]
    assert np.all(2 * v / (7 * mu * g) < T)  # every sample rolls by T
    np.testing.assert_array_less(np.abs(x - (5 / 7 * v * T + 2 * v**2 / (49 * mu * g))), mu * g * dt**2)
    assert np.ptp(x) > 100 * np.max(mu * g * dt**2)  # the distance tells the frictions apart


BLOCK_ON_TABLE = """<mujoco model="block_on_table">
  <worldbody>
    <geom name="table" type="box" size="0.5 0.5 0.1" friction="0.5"/>
    <body name="block" pos="0 0 0.13">
      <freejoint/>
      <geom name="block" type="box" size="0.05 0.04 0.03" mass="1" friction="0.2"/>
    </body>
  </worldbody>
  <keyframe><key qpos="0 0 0.13 1 0 0 0" qvel="1 0 0 0 0 0"/></keyframe>
</mujoco>
"""


def test_a_box_sliding_on_a_box_stops_after_v2_over_2_mu_g(tmp_path):
    """A block resting flat on a table (a box of the ground), sent along x at v = 1 m/s: its four lower vertices
    on the table's face carry it; it decelerates at μ g and stops after v²/(2 μ g), without turning or leaving
    the face. Moreau–Jean (θ = 1/2) integrates the constant deceleration exactly; only the step in which it
    stops is off, by at most μ g h²."""
    xml = tmp_path / "block.xml"
    xml.write_text(BLOCK_ON_TABLE)
    m = load(str(xml))
    assert float(m.params["table_friction"]) == 0.5 and m.system.contact_names[0].startswith("table__block")
    q0, u0 = m.initial_state(m.params)
    dt, mu, g, v = 2e-3, 0.5, 9.81, 1.0
    tr = simulate(m.system, m.params, q0, u0, dt=dt, n_steps=125, scheme=MoreauJean(), save_every=125)
    q, u = np.asarray(tr.q[-1]), np.asarray(tr.u[-1])
    assert abs(q[0] - q0[0] - v**2 / (2 * mu * g)) < mu * g * dt**2
    np.testing.assert_allclose(q[1:], np.asarray(q0)[1:], atol=1e-9)  # neither sinks, lifts nor turns
    assert np.max(np.abs(u)) < 1e-9 and bool(np.all(np.asarray(tr.diagnostics.converged)))
