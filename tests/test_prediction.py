"""Prediction of measured experiments: the metrics against known errors, the segmented batched simulation
against one straight run, and the ``predict`` command (refusals, and a short run on the real tosses)."""

import contextlib
import io
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact import cli
from jaxcontact.experiments import check_experiments
from jaxcontact.models import get_model
from jaxcontact.prediction import measured_scheme, metrics, parameter_draws, predict, simulate_experiments, summary
from jaxcontact.simulate import simulate
from jaxcontact.spatial import rotations

CUBES = Path(__file__).resolve().parents[2] / "shared" / "data" / "contactnets" / "cube_tosses.npz"
CUBE = {"half_x": 0.05, "half_y": 0.05, "half_z": 0.05, "mass": 0.37, "friction": 0.18, "restitution": 0.125}
SAMPLE = 1 / 148


def _experiments(q, lengths):
    """Experiments measured exactly at the coordinates q (N, T, 7), valid up to ``lengths``."""
    mask = np.arange(q.shape[1])[None, :] < np.asarray(lengths)[:, None]
    keep = np.where(mask[..., None], q, np.nan)
    d = {"length": np.asarray(lengths), "dt": np.asarray(SAMPLE), "position": keep[..., :3]}
    return check_experiments(d | {"quaternion_wxyz": keep[..., 3:]})


def test_metrics_of_known_errors():
    jax.config.update("jax_enable_x64", True)
    model = get_model("box-toss", **CUBE)
    rest = np.array([0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0])  # on the table, a face down
    meas = np.tile(rest, (2, 5, 1))
    sim = meas.copy()
    sim[0, :, 0] += 0.01  # 1 cm off: 10 % of the 10 cm width at every sample
    sim[1, :, 3:] = -np.asarray(rotations.exp(jnp.asarray([0.0, 0.0, np.radians(30.0)])))  # 30°, other sign
    sim[1, 2, 2] -= 0.002  # 2 mm into the table at one sample
    sim[1, 4, 2] -= 0.5  # past experiment 1's valid length (4): ignored
    pos, ang, pen = metrics(model, _experiments(meas, [5, 4]), sim)
    np.testing.assert_allclose(pos, [0.1, 0.002 / 0.1 / 4], rtol=1e-9)
    np.testing.assert_allclose(ang, [0.0, 30.0], atol=1e-5)
    np.testing.assert_allclose(pen, [0.0, 0.002], atol=1e-12)
    assert summary([1.0, 2.0, 6.0])["median"] == 2.0


@pytest.mark.slow  # two compiles of the box's contact solver: about two minutes on the shared 2-core machine
def test_segmented_batches_reproduce_one_straight_run_and_predict_exact_data():
    """Three tosses of unequal length simulated in segments of 8 samples (batch 2, one padded) match one
    straight 40-sample run to 0.1 mm; predicting that noiseless run from its first samples errs by < 1 % and < 1°."""
    jax.config.update("jax_enable_x64", True)
    model = get_model("box-toss", **CUBE)
    q0 = np.array([[0.0, 0.0, 0.15, *np.asarray(rotations.exp(jnp.asarray([0.4, -0.2, 0.1])))]] * 3)
    q0[1, 2], q0[2, 0] = 0.12, 0.3
    u0 = np.array([[-1.0, -0.8, -0.3, -3.4, -0.8, 3.9], [0.8, 0.7, -0.5, 2.1, 0.4, -2.3], [0.2, -1.1, 0.4, -2, -3, 0]])
    params = jax.tree.map(lambda x: jnp.broadcast_to(x, (3,)), model.params)
    straight = simulate(
        model.system, params, q0, u0, dt=SAMPLE / 10, n_steps=390, save_every=10, scheme=measured_scheme(model)
    )
    straight = np.asarray(straight.q)
    lengths = np.array([40, 25, 33])
    segmented = simulate_experiments(model, q0, u0, lengths, SAMPLE, batch=2, segment=8)
    for i, n in enumerate(lengths):
        # Identical in flight; a segment's first solve starts from zero impulses, not the last step's, so in
        # resting and sliding contact the two runs part by the solver's tolerance (about 1e-5 m here).
        np.testing.assert_allclose(segmented[i, :n], straight[i, :n], atol=1e-4)
        np.testing.assert_array_equal(segmented[i, :8], straight[i, :8])
        assert np.isnan(segmented[i, n:]).all()
    pred = predict(model, _experiments(straight, lengths), batch=2)
    assert pred.position_error.max() < 0.01 and pred.orientation_error_deg.max() < 1.0
    assert pred.penetration.max() < 1e-3


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = cli.main([*argv, "--no-compile-cache"])
        except SystemExit as e:  # argparse
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bouncing-ball"], "model 'bouncing-ball' has no state map"),
        (["box-toss", "--set", "mass=-1"], "parameter mass = -1.0 breaks the rule mass > 0"),
        (["box-toss", "--tosses", "1:1"], "selects no experiment"),
        (["box-toss", "--tosses", "0:5"], "5 lies past the 2 experiments"),
        (["box-toss", "--tosses", "x"], "--tosses 'x': expected START:STOP"),
        (["box-toss", "--set", "half_z=0.2"], "experiment 0 would start with a vertex 100.0 mm below the table"),
    ],
)
def test_predict_refuses_mistakes_in_one_line(tmp_path, argv, message):
    d = {"length": np.array([3, 2]), "dt": np.asarray(SAMPLE), "position": np.full((2, 3, 3), 0.1)}
    np.savez(tmp_path / "e.npz", **d, quaternion_wxyz=np.tile([1.0, 0, 0, 0], (2, 3, 1)))
    rc, _, err = _cli(["predict", *argv, "--data", str(tmp_path / "e.npz"), "--out", str(tmp_path / "o")])
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_parameter_draws_follow_the_fit_inside_the_bounds():
    est, bounds = {"friction": 0.2, "restitution": 0.99}, {"friction": (0.0, 1.0), "restitution": (0.0, 1.0)}
    fixed = parameter_draws(est, np.zeros((2, 2)), bounds, 3)
    assert fixed == [est] * 3
    wide = parameter_draws(est, np.diag([1e-4, 1e-2]), bounds, 2000, seed=1)
    mu = np.array([d["friction"] for d in wide])
    assert abs(mu.mean() - 0.2) < 2e-3 and abs(mu.std() - 0.01) < 1e-3
    assert max(d["restitution"] for d in wide) == 1.0  # clipped into [0, 1]
    with pytest.raises(ValueError, match="finite 2 x 2 matrix"):
        parameter_draws(est, np.full((2, 2), np.nan), bounds, 3)


def test_predict_refuses_a_bad_fit_file(tmp_path):
    (tmp_path / "fit.json").write_text('{"estimates": {"friction": 0.2}}')
    d = {"length": np.array([3]), "dt": np.asarray(SAMPLE), "position": np.full((1, 3, 3), 0.1)}
    np.savez(tmp_path / "e.npz", **d, quaternion_wxyz=np.tile([1.0, 0, 0, 0], (1, 3, 1)))
    for extra, message in (
        (["--fit", str(tmp_path / "fit.json")], "is not the fit.json of a fit over experiments"),
        (["--draws", "3"], "--draws 3 needs --fit FIT.json"),
    ):
        rc, _, err = _cli(["predict", "box-toss", "--data", str(tmp_path / "e.npz"), *extra, "--check"])
        assert rc == 2 and message in err, err


def test_predict_refuses_a_bad_data_file(tmp_path):
    rc, _, err = _cli(["predict", "box-toss", "--data", str(tmp_path / "none.npz"), "--check"])
    assert rc == 2 and "none.npz': no such file" in err


@pytest.mark.slow  # compiles the box's contact solver: about a minute on the shared 2-core machine
@pytest.mark.skipif(not CUBES.is_file(), reason="the shared cube tosses are not in ../shared/data")
def test_predict_command_on_the_first_samples_of_real_tosses(tmp_path):
    """Two real tosses cut to their first 20 samples (the first bounce): prediction.json and the picture."""
    with np.load(CUBES) as z:
        d = {k: z[k] for k in z.files}
    short = {k: (v[:2, :20] if np.ndim(v) == 3 else v) for k, v in d.items()}
    short["length"], short["toss_id"] = np.array([20, 20]), d["toss_id"][:2]
    np.savez(tmp_path / "short.npz", **short)
    sets = [f"--set={k}={v}" for k, v in (CUBE | {"half_x": 0.0524, "half_y": 0.0524, "half_z": 0.0524}).items()]
    rc, out, err = _cli(
        ["predict", "box-toss", "--data", str(tmp_path / "short.npz"), *sets, "--out", str(tmp_path / "p")]
    )
    assert rc == 0, err
    result = json.loads((tmp_path / "p" / "prediction.json").read_text())
    assert result["experiments"] == 2 and [e["toss_id"] for e in result["experiments_detail"]] == [0, 1]
    assert result["parameters"]["friction"] == 0.18
    # before and through the first impact the flight is predicted to a few per cent of the width
    assert result["summary"]["position_error"]["max"] < 0.1
    assert (tmp_path / "p" / "prediction.png").is_file()
    assert "simulated 2/2 experiments" in out
    # bands from a fit's covariance: two draws of μ and ε around the nominal values
    fit = {
        "estimates": {"friction": 0.18, "restitution": 0.125},
        "covariance": {"names": ["friction", "restitution"], "matrix": [[1e-4, 0.0], [0.0, 1e-4]]},
        "settings": {"bounds": {"friction": [0.02, 1.0], "restitution": [0.0, 1.0]}},
    }
    (tmp_path / "fit.json").write_text(json.dumps(fit))
    rc, out, err = _cli(
        ["predict", "box-toss", "--data", str(tmp_path / "short.npz"), *sets, "--fit", str(tmp_path / "fit.json")]
        + ["--draws", "2", "--out", str(tmp_path / "b")]
    )
    assert rc == 0, err
    bands = json.loads((tmp_path / "b" / "prediction.json").read_text())["bands"]
    assert len(bands["draws"]) == 2 and 0.0 <= bands["coverage_summary"]["mean"] <= 1.0
    assert "% bands from 2 parameter draws hold" in out
