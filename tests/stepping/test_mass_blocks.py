"""A block-diagonal mass (``LagrangianSystem.mass_blocks``): the block solve, the declaration's rules, and
every scheme on a declared system equal to the same system solved with the dense M."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import flexible_arm, flexible_slider_crank
from jaxcontact.simulate import simulate
from jaxcontact.smoothing.beam import flexible_double_pendulum
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.stepping.kernels import block_spd_solve, mass_solver, mass_structure
from jaxcontact.stepping.projection import Projection
from jaxcontact.system import LagrangianSystem, energy, mass_block_groups

BLOCKS = ((4, 0), (2,), (1, 5, 6), (3,), (7, 8))


def _block_spd(rng, n, blocks):
    """A random SPD matrix with no entry between blocks."""
    A = np.zeros((n, n))
    for b in blocks:
        X = rng.normal(size=(len(b), len(b)))
        A[np.ix_(b, b)] = X @ X.T + len(b) * np.eye(len(b))
    return A


@pytest.mark.parametrize("shape", [(9,), (9, 4)])
def test_block_solve_equals_the_dense_solve(shape):
    """Blocks of sizes 1, 2 and 3, unsorted and interleaved indices, one or several right-hand sides."""
    rng = np.random.default_rng(0)
    A = _block_spd(rng, 9, BLOCKS)
    B = rng.normal(size=shape)
    x = block_spd_solve(jnp.asarray(A), jnp.asarray(B), BLOCKS)
    assert x.shape == shape
    np.testing.assert_allclose(x, np.linalg.solve(A, B), rtol=1e-12, atol=1e-12)


def test_block_solve_never_reads_entries_between_blocks():
    """The partition is a promise: entries outside the blocks are ignored, not folded in."""
    rng = np.random.default_rng(1)
    A = _block_spd(rng, 9, BLOCKS)
    B = rng.normal(size=(9, 2))
    noisy = A + 1e3 * (np.abs(A) == 0)
    np.testing.assert_array_equal(
        block_spd_solve(jnp.asarray(noisy), jnp.asarray(B), BLOCKS), block_spd_solve(jnp.asarray(A), B, BLOCKS)
    )


def test_block_solve_batches_and_differentiates():
    """vmap over a batch of matrices = one by one; its derivative along a symmetric block-structured
    direction = the dense solve's (the Cholesky reads one triangle, so compare derivatives, not gradients)."""
    rng = np.random.default_rng(2)
    As = jnp.asarray(np.stack([_block_spd(rng, 9, BLOCKS) for _ in range(3)]))
    b = jnp.asarray(rng.normal(size=9))
    batched = jax.vmap(lambda A: block_spd_solve(A, b, BLOCKS))(As)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], block_spd_solve(As[i], b, BLOCKS))
    dA = jnp.asarray(_block_spd(rng, 9, BLOCKS))
    _, d_blocks = jax.jvp(lambda A: block_spd_solve(A, b, BLOCKS), (As[0],), (dA,))
    _, d_dense = jax.jvp(lambda A: jnp.linalg.solve(A, b), (As[0],), (dA,))
    np.testing.assert_allclose(d_blocks, d_dense, rtol=1e-10, atol=1e-12)


def _system(**kw):
    return LagrangianSystem(n_dof=3, mass=lambda q, p: jnp.eye(3), forces=lambda q, u, t, p: jnp.zeros(3), **kw)


@pytest.mark.parametrize(
    "blocks, words",
    [
        (((0, 1),), "exactly once"),  # index 2 missing
        (((0, 1), (1, 2)), "exactly once"),  # index 1 twice
        (((0, 1, 2, 3),), "exactly once"),  # out of range
        (((0, 1), ()), "non-empty"),
        ([(0, 1), (2,)], "tuples"),  # a list is not hashable: the solve's groups are cached by the partition
        (((0, 1), (2.0,)), "velocity indices"),
    ],
)
def test_a_wrong_partition_is_refused_by_name(blocks, words):
    with pytest.raises(ValueError, match="mass_blocks") as err:
        _system(mass_blocks=blocks)
    assert words in str(err.value)


def test_diagonal_and_blocks_are_not_declared_together():
    with pytest.raises(ValueError, match="diagonal_mass or mass_blocks"):
        _system(diagonal_mass=True, mass_blocks=((0,), (1,), (2,)))


def test_the_structure_a_solve_uses():
    assert mass_structure(_system()) is None
    assert mass_structure(_system(), diagonal=True) == "diagonal"
    assert mass_structure(_system(mass_blocks=((0, 2), (1,)))) == ((0, 2), (1,))


def test_block_values_are_refused_without_their_partition():
    with pytest.raises(ValueError, match="mass_block_values given without mass_blocks"):
        _system(mass_block_values=lambda q, p: (jnp.ones((3, 1, 1)),))


def _flexible_systems():
    arm = flexible_arm.model("rigid", 3, n_elements=2)
    oiled = flexible_arm.model("lubricated", 2)
    crank = flexible_slider_crank.model("rigid", n_elements=2)
    pendulum, params, y0 = flexible_double_pendulum(n_elements=2, h=0.01)
    yield "arm of 2-element links", arm.system, arm.params, arm.initial_state(arm.params)[0]
    yield "lubricated arm", oiled.system, oiled.params, oiled.initial_state(oiled.params)[0]
    yield "slider-crank (a rigid crank and slider)", crank.system, crank.params, crank.initial_state(crank.params)[0]
    yield "double pendulum (no rigid bodies)", pendulum, params, y0[: pendulum.n_dof]


@pytest.mark.parametrize("case", list(_flexible_systems()), ids=lambda c: c[0])
def test_flexible_builders_give_the_blocks_of_the_assembled_mass(case):
    """The beam builder's blocks (summed from the elements, never assembling M) equal the blocks of its M at a
    deformed configuration, in mass_block_groups' order; the solve and the kinetic energy by them equal the dense
    ones."""
    _, system, params, q0 = case
    assert system.mass_block_values is not None
    q = q0 + 1e-3 * jnp.sin(jnp.arange(q0.size))
    M = np.asarray(system.mass(q, params))
    values = system.mass_block_values(q, params)
    groups = mass_block_groups(system.mass_blocks)
    assert len(values) == len(groups)
    for v, idx in zip(values, groups):
        np.testing.assert_array_equal(v, M[idx[:, :, None], idx[:, None, :]])
    B = jnp.asarray(np.random.default_rng(3).normal(size=(q.size, 4)))
    np.testing.assert_allclose(mass_solver(system, q, params)(B), np.linalg.solve(M, B), rtol=1e-9, atol=1e-12)
    u = jnp.cos(jnp.arange(q.size))
    dense = dataclasses.replace(system, mass_block_values=None)
    np.testing.assert_allclose(energy(system, q, u, 0.0, params), energy(dense, q, u, 0.0, params), rtol=1e-13)


def test_flexible_systems_declare_one_block_per_beam():
    """The arm: its hub's three coordinates (a diagonal planar body) alone, then each link's 8; the mass
    has nothing outside those blocks at a deformed configuration."""
    m = flexible_arm.model("rigid", 3)
    blocks = m.system.mass_blocks
    assert blocks[:3] == ((0,), (1,), (2,)) and [len(b) for b in blocks[3:]] == [8, 8, 8]
    q0, _ = m.initial_state(m.params)
    q = q0 + 1e-3 * jnp.sin(jnp.arange(q0.size))
    M = np.asarray(m.system.mass(q, m.params))
    inside = np.zeros(M.shape, bool)
    for blk in blocks:
        inside[np.ix_(blk, blk)] = True
    assert np.all(M[~inside] == 0.0) and np.all(np.diagonal(M) > 0)


def _dense(system):
    return dataclasses.replace(system, mass_blocks=None, mass_block_values=None)


@pytest.mark.parametrize(
    "dense",
    [dict(mass_blocks=None, mass_block_values=None), dict(gap_columns=None)],
    ids=["dense mass", "dense joint rows (stepping/sparse_rows.py)"],
)
def test_moreau_jean_with_projection_on_blocks_equals_the_dense_mass(dense):
    """The two-link arm's clearance joints (contacts, friction, the projection onto the joints) over
    300 steps: the block path and the dense Cholesky, and the projections' joint rows by their pattern and
    dense, give the same motion to rounding."""
    m = flexible_arm.model("rigid", 2)
    q0, u0 = m.initial_state(m.params)
    run = dict(dt=m.dt, n_steps=300, scheme=MoreauJean(projection=Projection()), save_every=10)
    a = simulate(m.system, m.params, q0, u0, **run)
    b = simulate(dataclasses.replace(m.system, **dense), m.params, q0, u0, **run)
    assert bool(jnp.all(a.diagnostics.converged)) and bool(jnp.any(a.impulse_normal > 0))
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.u, b.u, rtol=0, atol=1e-8)


def test_penalty_scheme_on_blocks_equals_the_dense_mass():
    """Two beams pinned to the ground and to each other (bilateral rows, Baumgarte) by the penalty
    scheme's RK4: the constrained acceleration through the block solve = through the dense one."""
    system, params, y0 = flexible_double_pendulum(n_elements=2, h=0.01)
    assert [len(b) for b in system.mass_blocks] == [12, 12]
    q0, u0 = y0[: system.n_dof], y0[system.n_dof :]
    run = dict(dt=1e-4, n_steps=300, scheme=Penalty(), save_every=300)
    a = simulate(system, params, q0, u0, **run)
    b = simulate(_dense(system), params, q0, u0, **run)
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.u, b.u, rtol=0, atol=1e-8)
