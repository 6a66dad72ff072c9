"""Readers of Siconos' and FCLIB's frictional contact files, and Siconos' error measure.

The truth is Siconos 4.4 itself: ``bench/references/fc3d_reference.py`` stored the W,
q, μ its own reader builds from each file (W dense for small problems, W v
for a fixed v otherwise) and its ``fc3d_compute_error`` at a fixed probe.
"""

from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import bundled_dir, bundled_files, cone_violations, fc3d_error, read_problem
from jaxcontact.cones.delassus import block_rows, diagonal_blocks, matvec, to_dense

REF = Path(__file__).resolve().parent.parent / "data" / "fc3d_siconos_reference.npz"
FILES = bundled_files()


@pytest.fixture(scope="module")
def ref():
    return np.load(REF)


def test_every_shared_file_is_bundled():
    shared = Path(__file__).resolve().parents[3] / "shared" / "data" / "fc3d_siconos"
    names = {f.name for f in FILES}
    assert len(names) == 20
    if shared.is_dir():
        assert {f.name for f in shared.iterdir()} == names


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_reader_matches_siconos(path, ref):
    p = read_problem(path)
    n = 3 * p.nc
    assert p.dim == 3 and p.W.shape == (n, n) and p.q.shape == (n,)
    np.testing.assert_array_equal(p.q, ref[f"{p.name}/q"])
    np.testing.assert_array_equal(p.mu, ref[f"{p.name}/mu"])
    if f"{p.name}/W" in ref:
        W = ref[f"{p.name}/W"]
        np.testing.assert_allclose(p.W, W, rtol=0, atol=1e-13 * np.abs(W).max())
    v = np.sin(1.0 + np.arange(n))
    Wv = ref[f"{p.name}/Wv"]
    np.testing.assert_allclose(p.W @ v, Wv, rtol=0, atol=1e-13 * np.abs(Wv).max())
    if p.blocks is not None:  # the block storage is the same matrix
        np.testing.assert_array_equal(p.blocks.dense(p.nc), p.W)


def test_sparse_block_file_equals_its_dense_twin():
    a = read_problem(bundled_dir() / "FC3D_Example1.dat")
    b = read_problem(bundled_dir() / "FC3D_Example1_SBM.dat")
    assert a.blocks is None and b.blocks is not None
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.q, b.q)


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_error_is_siconos_fc3d_compute_error(path, ref):
    p = read_problem(path)
    r = ref[f"{p.name}/probe_r"]
    err = fc3d_error(jnp.asarray(r), jnp.asarray(p.W @ r + p.q), jnp.asarray(p.mu), jnp.asarray(p.q))
    np.testing.assert_allclose(float(err), float(ref[f"{p.name}/probe_error"]), rtol=1e-12)


def test_cone_violations_separate_the_parts():
    mu = jnp.array([0.5])
    # r inside K, û in K*, complementary: all zero
    v = cone_violations(jnp.array([1.0, 0.1, 0.0]), jnp.array([0.0, 0.0, 0.0]), mu)
    assert float(v.primal) == float(v.dual) == float(v.complementarity) == 0.0
    v = cone_violations(jnp.array([1.0, 1.0, 0.0]), jnp.array([0.0, 0.0, 0.0]), mu)  # ‖r_T‖ > μ r_N
    assert float(v.primal) == pytest.approx(0.5) and float(v.dual) == 0.0
    v = cone_violations(jnp.array([0.0, 0.0, 0.0]), jnp.array([-1.0, 0.0, 0.0]), mu)  # û_N < 0
    assert float(v.dual) == pytest.approx(1.0) and float(v.primal) == 0.0
    v = cone_violations(jnp.array([1.0, 0.0, 0.0]), jnp.array([2.0, 0.0, 0.0]), mu)  # separating and pushing
    assert float(v.complementarity) == pytest.approx(2.0)


def test_block_rows_match_dense():
    p = read_problem(bundled_dir() / "Confeti-ex13-4contact-Fc3D-SBM.dat")
    B = block_rows(p.blocks, p.nc)
    np.testing.assert_array_equal(np.asarray(to_dense(B)), p.W)
    r = np.cos(np.arange(3 * p.nc))
    np.testing.assert_allclose(np.asarray(matvec(B, jnp.asarray(r))), p.W @ r, rtol=1e-14)
    np.testing.assert_array_equal(
        np.asarray(diagonal_blocks(B, p.nc)), np.asarray(diagonal_blocks(jnp.asarray(p.W), p.nc))
    )


def _write(tmp_path, text, name="bad.dat"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_bad_files_are_named(tmp_path):
    good = (bundled_dir() / "FrictionContact3D_1c.dat").read_text().split()
    with pytest.raises(ValueError, match=r"bad.dat: expected 3 values of q"):
        read_problem(_write(tmp_path, " ".join(good[:-3])))
    with pytest.raises(ValueError, match="contact dimension must be 2 or 3"):
        read_problem(_write(tmp_path, " ".join(["4"] + good[1:])))
    with pytest.raises(ValueError, match="storage type 7"):
        read_problem(_write(tmp_path, " ".join(good[:2] + ["7"] + good[3:])))
    with pytest.raises(ValueError, match="friction coefficients must be >= 0"):
        read_problem(_write(tmp_path, " ".join(good[:-1] + ["-0.1"])))
    with pytest.raises(ValueError, match="expected an integer|expected the number"):
        read_problem(_write(tmp_path, "3 x 0"))
    with pytest.raises(FileNotFoundError, match="no such problem file"):
        read_problem(tmp_path / "missing.dat")


@pytest.mark.parametrize("name", ["Rover1039.dat", "OneObject-i100000-316.hdf5.dat"])
def test_padding_leaves_the_error_normalisation_alone(name):
    """A padded problem's Siconos error at (r, 0…) equals the original's at r, so ``converged`` speaks for it."""
    from jaxcontact.cones.problem import pad_problem

    p = read_problem(bundled_dir() / name)
    Wp, qp, mup = pad_problem(p.W, p.q, p.mu, p.nc + 40)
    rng = np.random.default_rng(0)
    n = p.q.size
    for r in (np.zeros(n), 1e-3 * rng.standard_normal(n), rng.standard_normal(n)):
        rp = np.concatenate([r, np.zeros(qp.size - n)])
        e = float(fc3d_error(jnp.asarray(r), jnp.asarray(p.W @ r + p.q), jnp.asarray(p.mu), jnp.asarray(p.q)))
        ep = float(fc3d_error(jnp.asarray(rp), jnp.asarray(Wp @ rp + qp), jnp.asarray(mup), jnp.asarray(qp)))
        assert ep == pytest.approx(e, rel=1e-12, abs=1e-300)
