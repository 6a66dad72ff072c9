"""The fused sweeps (one GPU kernel per solve, :mod:`jaxcontact.cones.fused`), run here through Pallas'
interpreter: they solve what the staged lanes sweeps solve, report what they cannot, lower to one Triton
kernel whose code does not grow with the contacts, and are refused by name where they do not apply."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import delassus, fc3d_error, nsgs
from jaxcontact.cones.fused import gs_sweeps_fused
from jaxcontact.cones.lanes import diagonal_lanes
from jaxcontact.simulate import simulate
from jaxcontact.stepping import cone_contacts
from jaxcontact.stepping.moreau_jean import MoreauJean
from tests.cones.test_lanes import batch_of_problems, box_toss_batch, warm_start_stragglers


def factored_problems(n=6, nc=8, n_u=6, seed=0, s=0.3):
    """Box-like problems, W = Jᵀ J + s I by its factors: nc contacts on n_u velocities (the rank-n_u part:
    redundant contacts), s a compliance that keeps Gauss–Seidel convergent."""
    rng = np.random.default_rng(seed)
    H, q, mu = [], [], []
    for _ in range(n):
        J = rng.normal(size=(3 * nc, n_u))
        H.append(J.T)
        qi = rng.normal(size=3 * nc)
        qi[0::3] = -np.abs(qi[0::3])
        q.append(qi)
        mu.append(rng.uniform(0.2, 0.6, nc))
    H = jnp.asarray(np.array(H))
    W = delassus.Factored(H, H, jnp.full((n, 3 * nc), s))
    return W, jnp.asarray(np.array(q)), jnp.asarray(np.array(mu))


def solve_all(W, q, mu, **kw):
    return jax.jit(jax.vmap(lambda W, q, mu: nsgs(W, q, mu, **kw)))(W, q, mu)


@pytest.mark.parametrize("kind", ["dense", "factored"])
def test_fused_sweeps_solve_what_the_staged_sweeps_solve(kind):
    if kind == "dense":
        W, q, mu = batch_of_problems(n=6, nc=4)
        if q.shape[-1] // mu.shape[-1] != 3:
            pytest.skip("planar problems")
        kw = dict(tol=1e-10, iterations=2000)
    else:
        W, q, mu = factored_problems()
        kw = dict(tol=1e-6, iterations=500, rescue_after=9)
    staged = solve_all(W, q, mu, **kw)
    fused = solve_all(W, q, mu, fused="interpret", **kw)
    ok = np.asarray(staged.converged)
    assert ok.sum() >= 2
    np.testing.assert_array_equal(np.asarray(fused.converged), ok)
    # each converged answer passes Siconos' error by itself, recomputed here from r
    u = jax.vmap(lambda W, r, q: delassus.matvec(W, r) + q)
    for sol in (staged, fused):
        err = jax.vmap(fc3d_error)(sol.r, u(W, sol.r, q), mu, q)
        assert np.all(np.asarray(err)[ok] <= kw["tol"])
    # redundant contacts leave r non-unique; the velocities agree to the tolerance's scale
    scale = np.max(np.abs(np.asarray(q)), axis=1)
    du = np.max(np.abs(np.asarray(u(W, staged.r, q) - u(W, fused.r, q))), axis=1)
    assert np.all(du[ok] <= 100 * kw["tol"] * scale[ok] + 1e-12)


def test_factored_and_dense_kernels_agree():
    W, q, mu = factored_problems(n=4)
    Wd = jax.vmap(delassus.to_dense)(W)
    kw = dict(tol=1e-6, iterations=300, fused="interpret")
    a, b = solve_all(W, q, mu, **kw), solve_all(Wd, q, mu, **kw)
    np.testing.assert_array_equal(np.asarray(a.converged), np.asarray(b.converged))
    np.testing.assert_allclose(a.r, b.r, rtol=0, atol=1e-8 * float(jnp.max(jnp.abs(a.r))))


def test_a_problem_the_budget_cannot_solve_is_reported_with_its_sweeps():
    W, q, mu = factored_problems()
    need = np.asarray(solve_all(W, q, mu, tol=1e-6, iterations=2000, fused="interpret").iterations)
    budget = int(np.min(need[need > 1])) - 1
    sol = solve_all(W, q, mu, tol=1e-6, iterations=budget, fused="interpret")
    ok = np.asarray(sol.converged)
    np.testing.assert_array_equal(ok, need <= budget)
    np.testing.assert_array_equal(np.asarray(sol.iterations), np.minimum(need, budget))
    assert np.all(np.asarray(sol.residual)[~ok] > 1e-6)


def lowered_kernel(nc, factored, dtype=jnp.float64):
    L, n_u, n = 96, 6, 3 * nc
    ones = lambda *s: jnp.ones(s, dtype)  # noqa: E731
    W = delassus.Factored(ones(n_u, n, L), ones(n_u, n, L), ones(n, L)) if factored else ones(n, n, L)
    diag = diagonal_lanes(W, nc, 3)

    def f(W, q, mu, diag, r):
        done, work = jnp.zeros((L,), bool), jnp.zeros((L,), jnp.int32)
        return gs_sweeps_fused(W, q, mu, diag, r, ones(L), done, work, tol=1e-6, limit=50)

    text = jax.jit(f).trace(W, ones(n, L), ones(nc, L), diag, ones(n, L)).lower(lowering_platforms=("cuda",)).as_text()
    kernels = re.findall(r'custom_call @__gpu\$xla\.gpu\.triton.*?ir = "([^"]*)"', text)
    return kernels


@pytest.mark.slow  # the GPU kernel through Pallas' interpreter, twice: minutes on a 2-core machine
def test_stragglers_of_the_fused_sweeps_are_rescued_in_gathered_groups():
    """The study's four step problems that Gauss–Seidel leaves unsolved: the kernel's sweeps stop short, and
    the rescue, run on gathered groups narrower than the batch, solves each, as the staged sweeps do."""
    W, q, mu, r0 = warm_start_stragglers()
    W, q, mu, r0 = jax.tree.map(lambda x: jnp.concatenate([x] * 5), (W, q, mu, r0))  # 20 lanes: groups of 2
    kw = dict(tol=1e-4, iterations=500, check_every=1)
    one = lambda fused, rescue: jax.jit(  # noqa: E731
        jax.vmap(lambda W, q, mu, r0: nsgs(W, q, mu, r0=r0, rescue_after=rescue, fused=fused, **kw))
    )(W, q, mu, r0)
    alone = one("interpret", None)
    assert not np.any(np.asarray(alone.converged))
    sol = one("interpret", 9)
    assert np.all(np.asarray(sol.converged))
    errors = jax.vmap(lambda W, q, mu, r: fc3d_error(r, delassus.matvec(W, r) + q, mu, q))(W, q, mu, sol.r)
    assert float(jnp.max(errors)) <= 1e-4
    # the fused kernel's sweeps before the rescue, plus Newton steps: far below the budget
    assert np.all(np.asarray(sol.iterations) < 500)


@pytest.mark.parametrize("factored", [True, False])
def test_the_kernel_lowers_to_one_triton_kernel_whose_code_does_not_grow_with_the_contacts(factored):
    with jax.enable_x64(True):
        small, large = lowered_kernel(8, factored), lowered_kernel(24, factored)
    assert len(small) == 1 and len(large) == 1
    # the loops over contacts and unknowns stay loops: three times the contacts, the same program (± the sizes)
    assert abs(len(large[0]) - len(small[0])) < 0.01 * len(small[0])


def test_fused_sweeps_are_refused_where_they_do_not_apply():
    W, q, mu = batch_of_problems(n=1, nc=3)
    W3, q3, mu3 = factored_problems(n=1)
    with pytest.raises(ValueError, match="fused must be True, False or 'interpret'"):
        nsgs(W[0], q[0], mu[0], fused="yes")
    with pytest.raises(ValueError, match="differentiation = 'unroll'"):
        nsgs(jax.tree.map(lambda x: x[0], W3), q3[0], mu3[0], fused=True, differentiation="unroll")
    if jax.default_backend() != "gpu":
        with pytest.raises(ValueError, match="fused=True compiles its kernel with Triton, for a GPU"):
            nsgs(jax.tree.map(lambda x: x[0], W3), q3[0], mu3[0], fused=True)
    planar = jnp.eye(4)
    with pytest.raises(ValueError, match="d = 2"):
        nsgs(planar, -jnp.ones(4), jnp.full((2,), 0.3), fused=True)


@pytest.mark.slow  # box-toss steps through Pallas' interpreter: minutes on a 2-core machine (solves checked above)
def test_box_toss_with_fused_sweeps_follows_the_staged_trajectories(monkeypatch):
    m, params, q0, u0 = box_toss_batch()
    n = 600
    scheme = MoreauJean(diagnostics=False).for_forward_runs()

    def run():
        tr = jax.jit(lambda p, q, u: simulate(m.system, p, q, u, dt=1e-3, n_steps=n, scheme=scheme))(params, q0, u0)
        return np.asarray(tr.q), np.asarray(tr.diagnostics.converged)

    q_staged, ok_staged = run()
    monkeypatch.setattr(cone_contacts, "FUSED", "interpret")
    jax.clear_caches()
    q_fused, ok_fused = run()
    # default forward tolerance (1e-8): the poses agree to well under a micrometre over the toss
    assert np.max(np.abs(q_fused - q_staged)) < 2e-6
    # about as many steps stop unconverged at the sweep cap (the fused path rescues after half the cap)
    assert abs(int((~ok_fused).sum()) - int((~ok_staged).sum())) <= 3


def test_the_schemes_use_the_kernel_on_a_gpu_where_it_applies_and_the_staged_sweeps_elsewhere(monkeypatch):
    W, q, mu = factored_problems(n=1)
    W, q, mu = jax.tree.map(lambda x: x[0], (W, q, mu))
    blocks = delassus.BlockRows(jnp.zeros((8, 1), jnp.int32), jnp.zeros((8, 1, 3, 3)))
    assert cone_contacts.FUSED == "auto"
    assert cone_contacts.fused_for(W, q, mu, "implicit") is False  # this backend is a CPU
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert cone_contacts.fused_for(W, q, mu, "implicit")
    assert not cone_contacts.fused_for(W, q, mu, "unroll")  # the kernel is forward only
    assert not cone_contacts.fused_for(blocks, q, mu, "implicit")  # W by block rows
    assert not cone_contacts.fused_for(W, q[:16], mu, "implicit")  # planar cones: d = 2
    monkeypatch.setattr(cone_contacts, "FUSED", False)
    assert not cone_contacts.fused_for(W, q, mu, "implicit")


@pytest.mark.slow  # minutes; fused and staged sweeps share the implicit adjoint (test_gradients checks it)
def test_gradients_through_the_fused_sweeps_are_the_staged_sweeps_gradients():
    """The kernel is forward only; the implicit rule differentiates its answer as it does the staged sweeps'
    (reverse mode, what identification asks on a GPU), so the two gradients agree to the solve's tolerance."""
    W, q, mu = factored_problems(n=3)
    c = jnp.linspace(0.5, 1.5, q.shape[-1])

    def loss(q, fused):
        sol = jax.vmap(lambda W, q, mu: nsgs(W, q, mu, tol=1e-11, iterations=1000, fused=fused))(W, q, mu)
        return jnp.sum(jnp.where(sol.converged[:, None], sol.r * c, 0.0)), sol.converged

    (_, ok), staged = jax.value_and_grad(loss, has_aux=True)(q, False)
    assert np.asarray(ok).sum() >= 2
    (_, ok_fused), fused = jax.value_and_grad(loss, has_aux=True)(q, "interpret")
    np.testing.assert_array_equal(np.asarray(ok_fused), np.asarray(ok))
    assert np.all(np.isfinite(np.asarray(fused)))
    np.testing.assert_allclose(np.asarray(fused), np.asarray(staged), rtol=1e-6, atol=1e-6)
