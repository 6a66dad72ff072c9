"""Capsule closest points: accuracy of the distance and of its gradient near parallel segments (float64).

    python bench/accuracy/capsule_geometry.py     # prints the figures recorded in bench/RESULTS.md ("Spatial contacts")

* distance of random segment pairs (general, nearly parallel at 1e-12 … 1e-3 rad, parallel, collinear) against a
  bounded 1D minimiser of the convex function s ↦ dist(p1 + s d1, segment 2);
* the gap's gradient by Danskin's rule (:func:`jaxcontact.spatial.geometry.segment_distance`) against plain
  automatic differentiation through the closest points' parameters, by tilt, over generic poses;
* where the closest points are: how far rounding moves them, by tilt (the location's conditioning ε h / sin²θ).
"""

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import minimize_scalar

jax.config.update("jax_enable_x64", True)

from jaxcontact.spatial import rotations  # noqa: E402
from jaxcontact.spatial.geometry import safe_norm, segment_distance, segment_parameters  # noqa: E402


def brute(p1, d1, p2, d2):
    def to_b(s):
        x = p1 + s * d1
        t = np.clip((x - p2) @ d2 / (d2 @ d2), 0.0, 1.0)
        return np.linalg.norm(x - p2 - t * d2)

    res = minimize_scalar(to_b, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-13})
    return min(res.fun, to_b(0.0), to_b(1.0))


def distance_accuracy(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    p1, p2, d1, d2 = (rng.normal(size=(n, 3)) for _ in range(4))
    k = n // 4
    tilt = 10.0 ** rng.uniform(-12, -3, size=(k, 1))
    d2[k : 2 * k] = d1[k : 2 * k] * rng.uniform(-2, 2, size=(k, 1)) + tilt * rng.normal(size=(k, 3))
    d2[2 * k : 3 * k] = d1[2 * k : 3 * k] * rng.uniform(-2, 2, size=(k, 1))
    p2[2 * k : 2 * k + k // 2] = p1[2 * k : 2 * k + k // 2] + d1[2 * k : 2 * k + k // 2] * rng.uniform(
        -2, 2, (k // 2, 1)
    )
    dist = np.asarray(jax.jit(jax.vmap(segment_distance))(*(jnp.asarray(v) for v in (p1, d1, p2, d2))))
    err = np.array([dist[i] - brute(p1[i], d1[i], p2[i], d2[i]) for i in range(n)])
    groups = {
        "general": slice(0, k),
        "nearly parallel": slice(k, 2 * k),
        "parallel / collinear": slice(2 * k, 3 * k),
        "general (2)": slice(3 * k, n),
    }
    print("| pairs | count | max (ours − minimiser) | min (ours − minimiser) |\n|---|---|---|---|")
    for name, sl in groups.items():
        print(f"| {name} | {err[sl].size} | {err[sl].max():.1e} | {err[sl].min():.1e} |")


def plain(p1, d1, p2, d2):
    s, t = segment_parameters(p1, d1, p2, d2)
    return safe_norm(p2 + t * d2 - p1 - s * d1)


def gradients(poses=50, seed=1):
    """a: x ∈ [−0.5, 0.5]; b: 0.2 above, centre at x = 0.1, half length 0.3, turned by the tilt about its centre;
    the pair in a random pose. Exact closest points: under b's centre."""
    rng = np.random.default_rng(seed)
    grad_d = jax.jit(jax.grad(segment_distance, argnums=(0, 1, 2, 3)))
    grad_p = jax.jit(jax.grad(plain, argnums=(0, 1, 2, 3)))
    params = jax.jit(segment_parameters)
    print("| tilt (rad) | max \\|plain − Danskin\\| | max \\|s* − exact\\| · ‖d1‖ (m) | ε h / sin²θ (m) |")
    print("|---|---|---|---|")
    for tilt in [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 2e-7, 1e-7, 1e-9, 1e-12]:
        diff, loc = 0.0, 0.0
        for _ in range(poses):
            R = np.asarray(rotations.matrix(rotations.from_axis_angle(rng.normal(size=3), rng.uniform(0, 3))))
            off = rng.normal(size=3)
            p1, d1 = R @ np.array([-0.5, 0, 0.0]) + off, R @ np.array([1.0, 0, 0])
            h = R @ (0.3 * np.array([np.cos(tilt), np.sin(tilt), 0.0]))
            cb = R @ np.array([0.1, 0, 0.2]) + off
            args = [jnp.asarray(v) for v in (p1, d1, cb - h, 2 * h)]
            diff = max(diff, max(float(jnp.max(jnp.abs(a - b))) for a, b in zip(grad_d(*args), grad_p(*args))))
            loc = max(loc, abs(float(params(*args)[0]) - 0.6))
        print(f"| {tilt:.0e} | {diff:.1e} | {loc:.1e} | {np.finfo(float).eps * 0.2 / np.sin(tilt) ** 2:.1e} |")


if __name__ == "__main__":
    distance_accuracy()
    print()
    gradients()
