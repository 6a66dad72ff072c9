"""The multi-experiment npz format: the shared real cube tosses read as they are, bad files are refused
with one line naming the key and the rule."""

from pathlib import Path

import numpy as np
import pytest

from jaxcontact.experiments import check_experiments, parse_range, read_experiments, uniform_step

CUBES = Path(__file__).resolve().parents[2] / "shared" / "data" / "contactnets" / "cube_tosses.npz"


def _good(n=3, width=6):
    """A small valid file: n experiments of lengths 4, 5, 6 (NaN past them), known values."""
    length = np.arange(4, 4 + n)
    mask = np.arange(width)[None, :] < length[:, None]
    pos = np.where(mask[..., None], np.arange(n * width * 3, dtype=float).reshape(n, width, 3), np.nan)
    quat = np.where(mask[..., None], np.array([0.0, 0.6, 0.0, 0.8]), np.nan)
    return {"length": length, "dt": np.asarray(0.01), "position": pos, "quaternion_wxyz": quat, "toss_id": length * 10}


def _write(tmp_path, d, name="e.npz"):
    path = tmp_path / name
    np.savez(path, **d)
    return str(path)


def test_reads_a_valid_file_with_masks_times_inputs_and_info(tmp_path):
    d = _good() | {"input_speed": np.array([1.0, 2.0, 3.0])}
    ex = read_experiments(_write(tmp_path, d))
    assert ex.n == 3 and ex.t.shape == (3, 6)
    np.testing.assert_array_equal(ex.mask.sum(axis=1), [4, 5, 6])
    np.testing.assert_allclose(ex.t[1], 0.01 * np.arange(6))
    assert sorted(ex.measured) == ["position", "quaternion_wxyz"]
    np.testing.assert_array_equal(ex.inputs["speed"], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ex.info["toss_id"], [40, 50, 60])
    assert uniform_step(ex) == pytest.approx(0.01)
    sub = ex.select(slice(0, 2))
    assert sub.t.shape == (2, 5) and list(sub.info["toss_id"]) == [40, 50]
    assert sub.measured["position"][1, 4, 2] == d["position"][1, 4, 2]


def test_per_experiment_times_start_at_zero(tmp_path):
    d = _good()
    del d["dt"]
    d["t"] = np.where(np.arange(6)[None, :] < d["length"][:, None], 5.0 + 0.02 * np.arange(6), np.nan)
    ex = read_experiments(_write(tmp_path, d))
    np.testing.assert_allclose(ex.t[0, :4], 0.02 * np.arange(4))
    assert np.isfinite(ex.t).all()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("length"), "needs an array 'length'"),
        (lambda d: d.update(length=np.array([4.0, 5.0, 6.0])), "length must be a 1-D integer array"),
        (lambda d: d.update(length=np.array([4, 5, 9])), "length[2] = 9 must lie in 2..6"),
        (lambda d: d.pop("dt"), "needs a sampling step 'dt'"),
        (lambda d: d.update(dt=np.asarray(-1.0)), "dt must be one finite number > 0"),
        (lambda d: (d.pop("position"), d.pop("quaternion_wxyz")), "holds no measured quantity"),
        (lambda d: d.update(position=d["position"][:, :, :2]), "position has shape (3, 6, 2)"),
        (lambda d: d.update(position=d["position"][:2]), "position has shape (2, 6, 3)"),
        (lambda d: d["position"].__setitem__((1, 2, 0), np.nan), "position is not finite at experiment 1, sample 2"),
        (
            lambda d: d["quaternion_wxyz"].__setitem__((2, 3), [1.0, 0.1, 0, 0]),
            "experiment 2, sample 3 has norm 1.00499",
        ),
        (lambda d: d.update(input_speed=np.ones(2)), "input_speed has shape (2,)"),
    ],
)
def test_bad_files_are_refused_naming_the_key_and_rule(tmp_path, change, message):
    d = _good()
    change(d)
    with pytest.raises(ValueError, match="^--data '.*e.npz'") as e:
        read_experiments(_write(tmp_path, d))
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_times_must_increase_within_the_valid_length():
    d = _good()
    del d["dt"]
    d["t"] = np.tile(0.01 * np.arange(6), (3, 1))
    d["t"][0, 2] = d["t"][0, 1]
    with pytest.raises(ValueError, match=r"t must increase strictly within each experiment \(experiment 0, sample 2\)"):
        check_experiments(d)


def test_not_a_file_not_an_npz(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_experiments(str(tmp_path / "missing.npz"))
    (tmp_path / "x.npz").write_text("hello")
    with pytest.raises(ValueError, match="not an npz archive"):
        read_experiments(str(tmp_path / "x.npz"))


def test_parse_range():
    np.testing.assert_array_equal(parse_range("0:3", 10), [0, 1, 2])
    np.testing.assert_array_equal(parse_range("::4", 10), [0, 4, 8])
    np.testing.assert_array_equal(parse_range("1,5,-1", 10), [1, 5, 9])
    for bad, msg in (
        ("a:b", "START:STOP"),
        ("5:5", "selects no experiment"),
        ("0:500", "500 lies past the 10 experiments"),
        ("3,12", "must lie in 0..9"),
    ):
        with pytest.raises(ValueError, match=msg):
            parse_range(bad, 10)


@pytest.mark.skipif(not CUBES.is_file(), reason="the shared cube tosses are not in ../shared/data")
def test_the_shared_cube_tosses_read_as_they_are():
    ex = read_experiments(str(CUBES))
    assert ex.n == 470
    assert sorted(ex.measured) == ["angular_velocity_body", "position", "quaternion_wxyz", "velocity"]
    assert ex.length.min() == 80 and ex.length.max() == 383 == ex.t.shape[1]
    assert uniform_step(ex) == pytest.approx(1 / 148)
    assert float(ex.info["half_width"]) == pytest.approx(0.0524)
    assert np.isfinite(ex.measured["position"][ex.mask]).all()
