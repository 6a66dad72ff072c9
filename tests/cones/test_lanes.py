"""The batch-last ("lanes") sweeps: a vmapped solve is the problems solved one by one, flags included; the
stragglers' rescue by the cones' Newton."""

import dataclasses
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import delassus, fc3d_error, jacobi, lanes, nsgs
from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.studies.runner import calls_lapack
from tests.cones.test_properties import known_solution_problem


def batch_of_problems(n=12, nc=4, seed=3):
    rng = np.random.default_rng(seed)
    Ws, qs, mus = [], [], []
    for _ in range(n):
        mu = rng.uniform(0.1, 1.0, nc)
        W, q, _ = known_solution_problem(rng, list(rng.choice(["separate", "stick", "slide"], nc)), mu)
        Ws.append(W), qs.append(q), mus.append(mu)
    return (jnp.asarray(np.array(x)) for x in (Ws, qs, mus))


@pytest.mark.slow  # four compiles; NSGS batch = single (counts included) runs by default in test_properties
def test_batched_solve_equals_one_by_one_with_its_own_sweep_counts():
    W, q, mu = batch_of_problems()
    for solver in (nsgs, jacobi):
        solve = jax.jit(lambda W, q, mu: solver(W, q, mu, tol=1e-12))
        batched = jax.jit(jax.vmap(lambda W, q, mu: solver(W, q, mu, tol=1e-12)))(W, q, mu)
        for i in range(len(mu)):
            one = solve(W[i], q[i], mu[i])
            assert int(batched.iterations[i]) == int(one.iterations)
            np.testing.assert_allclose(batched.r[i], one.r, rtol=0, atol=1e-12)
            assert bool(batched.converged[i]) == bool(one.converged)
        assert len(set(np.asarray(batched.iterations).tolist())) > 1  # lanes stopped at different sweeps


def test_a_lane_that_cannot_converge_in_the_budget_is_reported_and_the_others_are_not():
    W, q, mu = batch_of_problems()
    solve = lambda budget: jax.jit(
        jax.vmap(  # noqa: E731
            lambda W, q, mu: nsgs(W, q, mu, tol=1e-12, iterations=budget, check_every=1)
        )
    )(W, q, mu)
    need = np.asarray(solve(1000).iterations)  # the sweeps each problem needs
    budget = int(need.max()) - 1
    assert budget >= 2 and np.sum(need > budget) >= 1 and np.sum(need <= budget) >= 1
    sol = solve(budget)
    ok = np.asarray(sol.converged)
    np.testing.assert_array_equal(ok, need <= budget)
    np.testing.assert_array_equal(np.asarray(sol.iterations), np.minimum(need, budget))
    assert np.all(np.asarray(sol.residual)[~ok] > 1e-12) and np.all(np.asarray(sol.residual)[ok] <= 1e-12)


def box_toss_batch():
    """The box-toss model and three tosses (speeds and tilts apart): (model, params, q0, u0)."""
    m = get_model("box-toss")
    params = {k: jnp.full((3,), float(v)) for k, v in m.params.items()}
    params["speed"] = jnp.asarray([0.5, 1.0, 1.5])
    params["tilt_deg"] = jnp.asarray([0.0, 30.0, 50.0])
    q0, u0 = jax.vmap(m.initial_state)(params)
    return m, params, q0, u0


def test_box_toss_batch_equals_single_runs_sample_by_sample():
    m, params, q0, u0 = box_toss_batch()
    B, n = 3, 400
    scheme = MoreauJean(diagnostics=False).for_forward_runs()
    run = lambda p, q, u: simulate(m.system, p, q, u, dt=1e-3, n_steps=n, scheme=scheme, save_every=n)  # noqa: E731
    compiled = jax.jit(run).lower(params, q0, u0).compile()
    # The rescue's Newton solves by LU in jax: the batched forward program needs no LAPACK (so a study of it
    # can run on several CPU devices).
    assert not calls_lapack(compiled)
    batched = compiled(params, q0, u0)
    for i in range(B):
        one = jax.jit(run)(jax.tree.map(lambda x: x[i], params), q0[i], u0[i])
        np.testing.assert_allclose(batched.q[i], one.q, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(batched.diagnostics.iterations[i], one.diagnostics.iterations)
        np.testing.assert_array_equal(batched.diagnostics.converged[i], one.diagnostics.converged)


def redundant_contacts():
    """Six step problems of a tossed box resting on 4 vertex contacts (12 unknowns, 6 degrees of freedom),
    taken from the box-toss study (friction, restitution and tilt drawn as it draws them), with the warm
    start the step had: Gauss–Seidel does not reach Siconos' error 1e-4 on any of them in 500 sweeps."""
    data = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "box_redundant_contacts.npz"))
    return (jnp.asarray(data[k]) for k in ("W", "q", "mu", "r0"))


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_stragglers_handed_to_newton_converge_where_the_sweeps_stall():
    W, q, mu, r0 = redundant_contacts()
    solve = lambda **kw: jax.jit(
        jax.vmap(  # noqa: E731
            lambda W, q, mu, r0: nsgs(W, q, mu, r0=r0, tol=1e-4, iterations=500, check_every=3, **kw)
        )
    )(W, q, mu, r0)
    sweeps = solve()
    assert not np.any(np.asarray(sweeps.converged))
    rescued = solve(rescue_after=9)
    assert np.all(np.asarray(rescued.converged))
    errors = jax.vmap(lambda W, q, mu, r: fc3d_error(r, W @ r + q, mu, q))(W, q, mu, rescued.r)
    assert float(jnp.max(errors)) <= 1e-4
    assert np.all(np.asarray(rescued.iterations) < 500)


def warm_start_stragglers():
    """Four step problems of the box-toss study's n = 10 000 design (samples 182, 586, 608 and 625: a box on a
    face, 4 of its 8 vertex contacts active, W by its factors) with the step's warm start: the only steps of
    those samples the study's solve (tol 1e-4, 500 sweeps, rescue after 9) left unsolved while its Newton
    started from the sweeps' iterate alone (errors 1.06e-4 to 1.28e-4)."""
    data = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "box_rescue_warm_start.npz"))
    W = delassus.Factored(*(jnp.asarray(data[k]) for k in ("H", "X", "s")))
    return (W,) + tuple(jnp.asarray(data[k]) for k in ("q", "mu", "r0"))


def test_stragglers_newton_from_the_warm_start_solves_what_it_leaves_from_the_iterate(monkeypatch):
    W, q, mu, r0 = warm_start_stragglers()

    def solve():  # traced anew: the rescue's starts are read when it is traced
        one = lambda W, q, mu, r0: nsgs(  # noqa: E731 (the study's solve)
            W, q, mu, r0=r0, tol=1e-4, iterations=500, check_every=1, rescue_after=9
        )
        return jax.jit(jax.vmap(one))(W, q, mu, r0)

    sol = solve()
    assert np.all(np.asarray(sol.converged))
    errors = jax.vmap(lambda W, q, mu, r: fc3d_error(r, delassus.matvec(W, r) + q, mu, q))(W, q, mu, sol.r)
    assert float(jnp.max(errors)) <= 1e-4
    assert np.all(np.asarray(sol.iterations) < 500)
    monkeypatch.setattr(lanes, "RESCUE_STARTS", ("iterate",))
    assert not np.any(np.asarray(solve().converged))


@pytest.mark.slow  # compiles the rescue twice more
def test_rescued_batch_equals_rescued_problems_one_by_one():
    """Every straggler is rescued as it would be alone, whichever group of the stages it lands in (six
    problems: groups of 2, then 1)."""
    W, q, mu, r0 = redundant_contacts()
    solve = lambda W, q, mu, r0: nsgs(
        W,
        q,
        mu,
        r0=r0,
        tol=1e-4,
        iterations=500,
        check_every=3,  # noqa: E731
        rescue_after=9,
    )
    batched = jax.jit(jax.vmap(solve))(W, q, mu, r0)
    one = jax.jit(solve)
    for i in range(len(mu)):
        alone = one(W[i], q[i], mu[i], r0[i])
        assert int(alone.iterations) == int(batched.iterations[i])
        np.testing.assert_allclose(alone.r, batched.r[i], rtol=0, atol=1e-10)


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_stragglers_that_a_short_budget_leaves_unsolved_are_reported_as_alone():
    W, q, mu, r0 = redundant_contacts()
    solve = lambda W, q, mu, r0: nsgs(  # noqa: E731
        W, q, mu, r0=r0, tol=1e-4, iterations=12, check_every=1, rescue_after=9
    )
    sol = jax.jit(jax.vmap(solve))(W, q, mu, r0)
    ok = np.asarray(sol.converged)
    np.testing.assert_array_equal(ok, np.asarray(sol.residual) <= 1e-4)
    one = jax.jit(solve)
    alone = [bool(one(W[i], q[i], mu[i], r0[i]).converged) for i in range(len(mu))]
    np.testing.assert_array_equal(ok, alone)


def factored_problems(n=6, nc=4, n_u=5, seed=7):
    """Problems W = Hᵀ M⁻¹ H + s I (n_u < 3 nc velocities) around known solutions, with their factors."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        mu = rng.uniform(0.1, 1.0, nc)
        H = rng.normal(size=(n_u, 3 * nc))
        A = rng.normal(size=(n_u, n_u))
        X = np.linalg.solve(A @ A.T + np.eye(n_u), H)
        s = np.full(3 * nc, 0.2)
        W = H.T @ X + np.diag(s)
        W0, q0, r = known_solution_problem(rng, list(rng.choice(["separate", "stick", "slide"], nc)), mu)
        u = q0 + W0 @ r  # the known solution's local velocities, complementary to r on the cones
        out.append((H, X, s, W, u - W @ r, mu, r))
    return [jnp.asarray(np.array(x)) for x in zip(*out)]


def test_nsgs_on_the_factors_of_w_solves_what_nsgs_on_w_solves():
    from jaxcontact.cones import Factored

    H, X, s, W, q, mu, r_true = factored_problems()
    dense = jax.jit(jax.vmap(lambda W, q, mu: nsgs(W, q, mu, tol=1e-12, iterations=5000)))(W, q, mu)
    factored = jax.jit(jax.vmap(lambda H, X, s, q, mu: nsgs(Factored(H, X, s), q, mu, tol=1e-12, iterations=5000)))
    fac = factored(H, X, s, q, mu)
    assert np.all(np.asarray(dense.converged)) and np.all(np.asarray(fac.converged))
    np.testing.assert_allclose(fac.r, r_true, atol=1e-9)
    np.testing.assert_allclose(fac.r, dense.r, atol=1e-9)
    np.testing.assert_allclose(fac.u, jax.vmap(lambda W, r, q: W @ r + q)(W, fac.r, q), atol=1e-12)
    one = jax.jit(lambda H, X, s, q, mu: nsgs(Factored(H, X, s), q, mu, tol=1e-12, iterations=5000))
    for i in range(len(mu)):  # batched on the factors = one by one, sweep counts included
        alone = one(H[i], X[i], s[i], q[i], mu[i])
        assert int(alone.iterations) == int(fac.iterations[i])
        np.testing.assert_allclose(alone.r, fac.r[i], rtol=0, atol=1e-13)


@pytest.mark.slow  # a minute of compile; the factored solve is checked against the dense one just above
def test_box_toss_on_the_factors_of_w_follows_the_dense_delassus_matrix(monkeypatch):
    """The box (6 velocities, 24 cone unknowns) is solved on W's factors; the same steps on the dense W give
    the same motion to the solve's tolerance."""
    from jaxcontact.cones import delassus

    m = get_model("box-toss")
    scheme = MoreauJean(diagnostics=False, tol=1e-10, iterations=500).for_forward_runs()
    assert "with W by its factors" in scheme.plan(m.system)["contacts"]
    q0, u0 = m.initial_state(m.params)
    run = lambda s: simulate(m.system, m.params, q0, u0, dt=1e-3, n_steps=700, scheme=s)  # noqa: E731
    factored = run(scheme)
    monkeypatch.setattr(delassus, "factored_pays", lambda n_u, n: False)
    dense = run(dataclasses.replace(scheme, iterations=501))  # another scheme: traced anew, not a cached program
    assert np.all(np.asarray(factored.diagnostics.converged)) and np.all(np.asarray(dense.diagnostics.converged))
    assert float(np.abs(np.asarray(factored.q) - np.asarray(dense.q)).max()) < 1e-7


def chain_problems(n=5, nc=8, seed=11):
    """Problems of a pressed chain of contacts (a column's Delassus matrix: each contact couples with its
    neighbours only, the spread of a Laplacian), which Gauss–Seidel solves slowly: W vanishes beyond 5 diagonals."""
    rng = np.random.default_rng(seed)
    laplacian = 2.0 * np.eye(nc) - np.eye(nc, k=1) - np.eye(nc, k=-1)
    blocks = np.abs(np.arange(nc)[:, None] - np.arange(nc)[None, :]) <= 1
    Ws, qs = [], []
    for _ in range(n):
        E = rng.normal(size=(3 * nc, 3 * nc)) * np.kron(blocks, np.ones((3, 3))) * 0.05
        Ws.append(np.kron(laplacian, np.eye(3)) + E + E.T + 0.05 * np.eye(3 * nc))
        q = rng.normal(size=(nc, 3)) * 0.2
        q[:, 0] = -1.0 - rng.uniform(size=nc)
        qs.append(q.reshape(-1))
    mu = rng.uniform(0.3, 0.8, size=(n, nc))
    return jnp.asarray(np.stack(Ws)), jnp.asarray(np.stack(qs)), jnp.asarray(mu)


def test_stragglers_newton_within_the_band_of_a_chain_solves_as_the_dense_one():
    from jaxcontact.cones import BandedLU, DenseLU

    W, q, mu = chain_problems()

    def solve(rescue_solver):
        run = lambda W, q, mu: nsgs(  # noqa: E731
            W, q, mu, tol=1e-10, iterations=40, check_every=1, rescue_after=9, rescue_solver=rescue_solver
        )
        return jax.jit(jax.vmap(run))(W, q, mu)

    dense, banded = solve(DenseLU()), solve(BandedLU(5, 5))
    assert np.all(np.asarray(banded.converged)) and np.all(np.asarray(dense.converged))
    assert int(np.max(banded.iterations)) > 9  # the sweeps left them to the rescue
    np.testing.assert_array_equal(banded.iterations, dense.iterations)
    np.testing.assert_allclose(banded.r, dense.r, rtol=0, atol=1e-9)


def test_a_rescue_solver_other_than_an_lu_is_refused_by_name():
    from jaxcontact.cones import GMRES

    W, q, mu = chain_problems(n=1)
    with pytest.raises(ValueError, match=r"nsgs: rescue_solver must be DenseLU\(\) or BandedLU\(lower, upper\)"):
        nsgs(W[0], q[0], mu[0], rescue_after=9, rescue_solver=GMRES())


def test_later_stages_gather_their_stragglers_into_groups_of_a_floor_width():
    widths = lambda L: [lanes.stage_width(L, j) for j in range(4)]  # noqa: E731
    assert widths(256) == [256, 16, 16, 16] and widths(1024) == [1024, 64, 16, 16]
    assert widths(16) == [16, 1, 1, 1] and widths(65536) == [65536, 4096, 256, 16]


def test_the_first_stage_sweeps_on_at_full_width_while_more_than_half_the_batch_is_unsolved():
    """A batch whose problems all need many sweeps sweeps on in one group past the first chunk (narrow groups
    would each pay a sweep's fixed cost), checking at the later stages' counts, until half of it is solved; a
    batch mostly solved stops at the first limit and leaves its stragglers to the groups."""
    W, q, mu = chain_problems(n=4)  # at ω = 1 they need 171, 171, 558 and 108 sweeps
    lane = lambda x: jnp.moveaxis(x, 0, -1)  # noqa: E731
    stages = ((1, 1), (9, 1), (81, 9), (729, 9))

    def run(done, stages_to):
        zero = jnp.zeros_like(lane(q))
        args = (lane(W), lane(q), lane(mu), jnp.ones((2, 4)), zero, zero, done, jnp.zeros(4, jnp.int32), 0)
        return lanes._group_sweeps(lanes.gs_sweep_lanes, 1e-10, stages[:stages_to], 1, None, None, *args)

    run = jax.jit(run, static_argnums=1)
    _, done, work, k = run(jnp.zeros(4, bool), 3)
    assert int(k) == 81 and not np.any(np.asarray(done))  # to the last limit it was given, all unsolved
    _, done, work, k = run(jnp.zeros(4, bool), 4)
    assert int(k) == 171  # 81 + 10 × 9: three of the four solved, the last left to the groups
    np.testing.assert_array_equal(np.asarray(done), [True, True, False, True])
    np.testing.assert_array_equal(np.asarray(work), [171, 171, 171, 108])
    _, done, work, k = run(jnp.array([True, True, True, False]), 4)
    assert int(k) == 1 and np.asarray(work).tolist() == [0, 0, 0, 1]


def test_later_omega_over_relaxes_a_chain_s_later_sweeps_each_problem_as_alone():
    """Over-relaxing the sweeps after the first chunk solves a pressed chain's problems (Gauss–Seidel's slow
    case) in fewer sweeps, to the same impulses, and a batch still equals its problems one by one."""
    W, q, mu = chain_problems(n=6)

    def solver(later_omega):
        return lambda W, q, mu: nsgs(W, q, mu, tol=1e-10, iterations=3000, check_every=1, later_omega=later_omega)

    plain = jax.jit(jax.vmap(solver(None)))(W, q, mu)
    relaxed = jax.jit(jax.vmap(solver(1.3)))(W, q, mu)
    assert np.all(np.asarray(plain.converged)) and np.all(np.asarray(relaxed.converged))
    assert np.all(np.asarray(relaxed.iterations) < 0.7 * np.asarray(plain.iterations))
    # Both solved to a Siconos error of 1e-10: the impulses agree to what that bounds on these chains.
    scale = float(np.abs(np.asarray(plain.r)).max())
    np.testing.assert_allclose(relaxed.r, plain.r, rtol=0, atol=1e-8 * scale)
    one = jax.jit(solver(1.3))
    for i in range(len(mu)):
        alone = one(W[i], q[i], mu[i])
        assert int(alone.iterations) == int(relaxed.iterations[i])
        np.testing.assert_allclose(alone.r, relaxed.r[i], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "options, rule",
    [
        ({"later_omega": 2.0}, r"later_omega must be None or a static float in \(0, 2\); got 2.0"),
        ({"later_omega": "1.3"}, r"later_omega must be None or a static float in \(0, 2\); got '1.3'"),
        ({"later_omega": 1.3, "differentiation": "unroll"}, r"later_omega applies to the staged sweeps"),
        ({"later_omega": 1.3, "fused": "interpret"}, r"later_omega applies to the staged sweeps"),
    ],
)
def test_later_omega_outside_the_staged_sweeps_or_its_range_is_refused_by_name(options, rule):
    W, q, mu = chain_problems(n=1)
    with pytest.raises(ValueError, match="nsgs: " + rule):
        nsgs(W[0], q[0], mu[0], **options)


def masked_problems(layout, n=6, nc=5):
    """Factored problems (:func:`factored_problems`) in which some contacts are inactive the way a step's solve
    masks them (zero rows and columns, a unit diagonal, q = (1, 0, 0), μ = 0): contact 2 in every problem,
    contact 0 or 4 in some; dense W or its factors."""
    H, X, s, W, q, mu, _ = (np.array(a) for a in factored_problems(n=n, nc=nc))
    inactive = np.zeros((n, nc), bool)
    inactive[:, 2] = True
    inactive[::2, 0] = True
    inactive[1::3, 4] = True
    act = ~np.repeat(inactive, 3, axis=1)
    H, X = np.where(act[:, None], H, 0.0), np.where(act[:, None], X, 0.0)
    s = np.where(act, s, 1.0)
    W = np.where(act[:, :, None] & act[:, None, :], W, 0.0) + np.stack([np.diag(np.where(a, 0.0, 1.0)) for a in act])
    q = np.where(act, q, np.tile([1.0, 0.0, 0.0], nc))
    mu = np.where(inactive, 0.0, mu)
    D = delassus.Factored(*map(jnp.asarray, (H, X, s))) if layout == "factored" else jnp.asarray(W)
    return D, jnp.asarray(q), jnp.asarray(mu), inactive


@pytest.mark.parametrize("layout", ["dense", "factored"])
def test_the_sweeps_skip_idle_contacts_without_changing_a_bit(layout, monkeypatch):
    """A step's inactive contacts are idle (r = 0, a separating q_N, no coupling): the sweeps visit only the
    others, and every problem's impulses and counts are the same to the bit as with every contact visited."""
    D, q, mu, inactive = masked_problems(layout)
    L = q.shape[0]
    lane = lambda x: jnp.moveaxis(x, 0, -1)  # noqa: E731
    D_lanes = jax.tree.map(lane, D)
    idle = lanes.idle_contacts(D_lanes, lane(q), jnp.zeros((q.shape[1], L)), mu.shape[1], 3)
    np.testing.assert_array_equal(idle, inactive.all(axis=0))  # idle in every lane: contact 2 only
    r_some = jnp.zeros((q.shape[1], L)).at[6, 0].set(0.1)  # contact 2 holds an impulse in one lane: not idle
    assert not np.asarray(lanes.idle_contacts(D_lanes, lane(q), r_some, mu.shape[1], 3)).any()

    solve = lambda D, q, mu: nsgs(D, q, mu, tol=1e-10, iterations=300, check_every=1, rescue_after=9)  # noqa: E731
    skipped = jax.jit(jax.vmap(solve))(D, q, mu)
    monkeypatch.setattr(lanes, "live_order", lambda idle: (jnp.arange(idle.shape[0], dtype=jnp.int32), idle.shape[0]))
    every = jax.jit(jax.vmap(lambda D, q, mu: solve(D, q, mu)))(D, q, mu)  # a new function: traced anew
    assert np.all(np.asarray(every.converged))
    np.testing.assert_array_equal(skipped.r, every.r)
    np.testing.assert_array_equal(skipped.iterations, every.iterations)


def test_each_lane_has_its_own_live_contacts_first():
    """Lane by lane (a sweep by factors): each lane's live contacts first, in their own order, and a sweep as long
    as the most live contacts of a lane, not their union."""
    idle = jnp.array([[True, False], [False, True], [True, True], [False, False]])  # (contacts 4, lanes 2)
    order, count = lanes.live_order(idle)
    assert int(count) == 2  # two live contacts in each lane, three in their union
    np.testing.assert_array_equal(order, [[1, 0], [3, 3], [0, 1], [2, 2]])
    order, count = lanes.live_order(idle.all(axis=-1))  # one order for every lane: the union's
    np.testing.assert_array_equal(order, [0, 1, 3, 2])
    assert int(count) == 3


@pytest.mark.parametrize("shape", [(1,), (8,), (8, 37), (1, 5), (40, 3)])  # 40: past LANE_SUM_UNROLL's chain
def test_the_live_order_is_the_stable_argsort_of_idle(shape):
    """The order by counting equals NumPy's stable argsort of ``idle`` (live contacts first, each kind in its own
    order), in int32, for none, some and every contact idle."""
    rng = np.random.default_rng(sum(shape))
    for p in (0.0, 0.3, 0.8, 1.0):
        idle = rng.random(shape) < p
        order, count = lanes.live_order(jnp.asarray(idle))
        np.testing.assert_array_equal(order, np.argsort(idle, axis=0, kind="stable"))
        assert int(count) == np.max(np.sum(~idle, axis=0))
        assert order.dtype == jnp.int32 and count.dtype == jnp.int32


def test_stages_of_one_width_run_as_one():
    """A study's sub-batch of 64 gathers its second and third stages' stragglers into groups of 4 alike: one run,
    one compiled copy of the sweep; a problem alone runs every stage as one; a wide batch narrows stage by stage."""
    assert lanes.merged_stages(64, 3) == ((0, 0), (1, 2))
    assert lanes.merged_stages(1, 3) == ((0, 2),)
    assert lanes.merged_stages(65536, 4) == ((0, 0), (1, 1), (2, 2), (3, 3))
    assert lanes.merged_stages(1024, 4) == ((0, 0), (1, 1), (2, 3))  # to the floor width
