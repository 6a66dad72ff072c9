"""Where the cone solvers' time goes: one contact update, one NSGS sweep, whole solves, batched Rovers.

    /work/venv/bin/python bench/perf/fc3d_speed.py

Prints (float64, jit, compile apart, best of a few calls):

* one NSGS contact update (``cones.local.local_solve``) on Rover1039's first
  block, and the tabulated slide search alone, in a 1 000-step ``fori_loop``;
* NSGS sweep and Newton step on Rover1039 and Capsules-i100-889, and their
  solves to Siconos' error 1e-8;
* 256 perturbed Rover1039 (q × (1 ± 5 %), μ × (1 ± 20 %)) vmapped: Newton
  (Alart–Curnier, Fischer–Burmeister), NSGS, Jacobi, in problems/s.

The before/after rows of bench/RESULTS.md ("Cone solvers: speed") come from
this script run on the commit before and after each change.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.cones import (  # noqa: E402
    bundled_dir,
    jacobi,
    local,  # noqa: E402
    newton,
    nsgs,
    read_problem,
)


def best(fn, *args, n=5):
    jax.block_until_ready(fn(*args))
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        ts.append(time.perf_counter() - t0)
    return min(ts)


def contact_update():
    p = read_problem(bundled_dir() / "Rover1039.dat")
    B, c, mu = jnp.asarray(p.W[:3, :3]), jnp.asarray(p.q[:3]), jnp.asarray(p.mu[0])
    N = 1000

    def loop(f):
        return jax.jit(lambda B, c, mu: jax.lax.fori_loop(0, N, lambda i, x: x + f(B, c + x * 1e-9, mu), jnp.zeros(3)))

    one = best(loop(lambda B, c, mu: local.local_solve(B, c, mu, jnp.zeros(3))), B, c, mu, n=20) / N
    search = best(loop(local._slide_3d), B, c, mu, n=20) / N
    print(f"one contact update {one * 1e6:.2f} us; tabulated slide search alone {search * 1e6:.2f} us")


def solves():
    for name in ("Rover1039.dat", "Capsules-i100-889.dat"):
        p = read_problem(bundled_dir() / name)
        S = 20
        t = best(jax.jit(lambda W, q, mu: nsgs(W, q, mu, iterations=S, differentiation="unroll")), p.W, p.q, p.mu)
        print(f"{p.name}: NSGS sweep {t / S * 1e3:.3f} ms ({t / S / p.nc * 1e6:.2f} us per contact)")
        t = best(jax.jit(lambda W, q, mu: newton(W, q, mu, iterations=3, tol=0.0)), p.W, p.q, p.mu)
        print(f"{p.name}: Newton step {t / 3 * 1e3:.2f} ms")
        for label, fn in (
            ("Newton", lambda W, q, mu: newton(W, q, mu, tol=1e-8)),
            ("NSGS", lambda W, q, mu: nsgs(W, q, mu, tol=1e-8, iterations=10000)),
        ):
            f = jax.jit(fn)
            s = f(p.W, p.q, p.mu)
            t = best(f, p.W, p.q, p.mu, n=2)
            print(
                f"{p.name}: {label} to 1e-8: {t * 1e3:.2f} ms, {int(s.iterations)} iterations, "
                f"error {float(s.residual):.1e}"
            )


def batched():
    p = read_problem(bundled_dir() / "Rover1039.dat")
    B = 256
    rng = np.random.default_rng(0)
    qs = p.q * (1 + 0.05 * rng.uniform(-1, 1, (B, p.q.size)))
    mus = p.mu * (1 + 0.2 * rng.uniform(-1, 1, (B, p.nc)))
    W = jnp.asarray(p.W)
    for name, s in (
        ("newton", lambda q, mu: newton(W, q, mu, tol=1e-8)),
        ("newton-fb", lambda q, mu: newton(W, q, mu, tol=1e-8, function="fischer_burmeister")),
        ("nsgs", lambda q, mu: nsgs(W, q, mu, tol=1e-8, iterations=1000)),
        ("jacobi", lambda q, mu: jacobi(W, q, mu, tol=1e-8, iterations=5000)),
    ):
        f = jax.jit(jax.vmap(s))
        sol = f(qs, mus)
        print(
            f"256 Rovers, {name}: {B / best(f, qs, mus):.0f} problems/s, converged {float(np.mean(sol.converged)):.3f}"
        )


if __name__ == "__main__":
    contact_update()
    solves()
    batched()
