"""Impacts located inside the Moreau–Jean step: the step split at the gap crossing.

The hard law of the Moreau–Jean step switches a contact on when its gap at the step's
θ-point is closed, so an impact happens at a step of the grid: between two values of a
restitution (or of anything that moves the impact time) the trajectory either keeps an
impact in the same step or moves it by a whole step. The trajectory, and any misfit built
on it, is then a staircase in those parameters — flat almost everywhere, with zero
gradients and a local curvature that says nothing about the next stair.

``MoreauJean(impact_location="interpolated")`` takes instead, from (t_A, q_A, u_A):

1. a *trial* step of size h in which the contacts open at t_A stay open (free flight, the
   closed ones and the bilateral constraints treated as usual);
2. for every contact open at t_A and closed at the trial's end, the crossing fraction
   s ∈ (0, 1] of the quadratic through g(t_A), ġ(t_A) and g at the trial's end — exact for
   a gap linear in q under constant forces, because the midpoint step is then exact in
   free flight — and the earliest of them, s*;
3. if a contact closes: a step of size s*·h with the same contacts open, then an impact of
   zero duration (the step with h = 0: Newton's law with restitution and Coulomb's law on
   the impulses, applied to the contact that closes at s* and to the ones closed then),
   then an ordinary step of size (1 − s*)·h; else the trial step.

The crossing time moves continuously with the parameters, so the trajectory does too:
when the crossing slides to the end of one step, the same motion is reached by locating
it at the start of the next. Only the first crossing in a step is located; a second contact
closing later in the same step is treated by the last sub-step's ordinary law. Cost: four
evaluations of the step (all are computed, as ``vmap`` computes both sides of a branch), run as one
``lax.scan`` over a single traced step so the program compiles the step once.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcontact.stepping.kernels import gaps_and_rates

IMPACT_LOCATIONS = ("step", "interpolated")


def crossing_fraction(g_A, gdot_A, g_E, h):
    """The fraction s ∈ (0, 1] of the step where the quadratic with g(0) = g_A, g'(0) = gdot_A and
    g(h) = g_E crosses zero (one root in (0, 1] when g_A > 0 ≥ g_E); 1 where there is no such crossing.
    The root is written as 2c / (−b + √(b² − 4ac)) so it stays accurate as the curvature a → 0."""
    closing = (g_A > 0) & (g_E <= 0)
    c = jnp.where(closing, g_A, 1.0)
    b = jnp.where(closing, h * gdot_A, -2.0)
    a = jnp.where(closing, g_E - g_A - h * gdot_A, 0.0)
    disc = jnp.maximum(b * b - 4 * a * c, 0.0)
    den = -b + jnp.sqrt(jnp.where(disc > 0, disc, 1.0))
    den = jnp.where(disc > 0, den, 1.0)
    quadratic = 2 * c / den
    linear = c / (c - jnp.where(closing, g_E, -1.0))  # the chord, if the quadratic degenerates
    s = jnp.where((disc > 0) & (den > 0) & (quadratic > 0) & (quadratic <= 1), quadratic, linear)
    return jnp.where(closing, jnp.clip(s, 0.0, 1.0), 1.0), closing


def _substep(step_fn, state, dt, closed, by_gap):
    """One sub-step of size ``dt`` from ``state`` (its own time origin: the state's grid time is t0 + i·h)."""
    sub = state._replace(t0=state.t, i=jnp.zeros_like(state.i))
    return step_fn(sub, dt, closed, by_gap)


# The sub-steps, in the order they run: the trial, the step to the crossing, the impact, the rest of the step.
TRIAL, BEFORE, IMPACT, AFTER = range(4)


def located_step(system, scheme, p, state, dt, step_fn, is_active):
    """One Moreau–Jean step with the first impact inside it located (see the module docstring).

    ``step_fn(state, dt, closed, by_gap)`` is the scheme's step with the contact set ``closed``, or by gap at
    the θ-point where ``by_gap``; ``is_active(gap, q)`` the scheme's activation test. Returns (state, info).
    The four sub-steps are one ``lax.scan`` over one traced step, each sub-step's inputs chosen from the one
    before: the compiled program holds the step once, not four times.
    """
    h = jnp.asarray(dt, state.q.dtype)
    t_A = jnp.asarray(state.t, state.q.dtype)
    g_A, gdot_A = gaps_and_rates(system, p, state.q, state.u, t_A)
    # A contact closed at t_A that approaches and carried no impulse in the last step has just arrived (its gap
    # crossed zero at the grid node, to rounding): its impact is located at s = 0. The ordinary step's law would
    # instead apply it at the step's θ-point, a different motion from the crossings just before and after the node.
    touching = is_active(g_A, state.q)
    arriving = touching & (gdot_A < 0) & (state.P_N <= 0)
    closed_A = touching & ~arriving
    no = jnp.zeros((), bool)

    def sub_step(carry, k):
        start, dt_k, closed, by_gap, s_first, first = carry
        out, info = _substep(step_fn, start, dt_k, closed, by_gap)
        g_out = system.gaps(out.q, out.t, p)  # the trial's end t_A + h, or the crossing
        # After the trial: where the first contact closes.
        s, closing = crossing_fraction(jnp.where(closed_A, -1.0, g_A), gdot_A, g_out, h)
        s, closing = jnp.where(arriving, 0.0, s), closing | arriving
        s_min = jnp.min(s)
        s_min = jnp.where(jnp.any(closing), s_min, 1.0)
        s_first = jnp.where(k == TRIAL, s_min, s_first)
        first = jnp.where(k == TRIAL, closing & (s <= s_min), first)
        # The next sub-step's start, size and contacts.
        nxt = jax.tree.map(lambda a, b: jnp.where(k == TRIAL, a, b), start, out)
        dt_next = jnp.select([k == TRIAL, k == BEFORE], [s_first * h, jnp.zeros_like(h)], (1.0 - s_first) * h)
        closed_next = jnp.where(k == BEFORE, first | is_active(g_out, out.q), closed_A)
        return (nxt, dt_next, closed_next, k == IMPACT, s_first, first), (out, info)

    init = (state, h, closed_A, no, jnp.ones_like(h), jnp.zeros_like(closed_A))
    (_, _, _, _, _, first), (ends, infos) = jax.lax.scan(sub_step, init, jnp.arange(4))
    any_closing = jnp.any(first)  # the first crossing's contacts: none where no contact closes
    at = lambda tree, k: jax.tree.map(lambda x: x[k], tree)  # noqa: E731
    trial, trial_info = at(ends, TRIAL), at(infos, TRIAL)
    impact_info, after, after_info = at(infos, IMPACT), at(ends, AFTER), at(infos, AFTER)

    pick = lambda a, b: jax.tree.map(lambda x, y: jnp.where(any_closing, x, y), a, b)  # noqa: E731
    info = after_info._replace(
        P_N=after_info.P_N + impact_info.P_N,
        P_T=after_info.P_T + impact_info.P_T,
        active=after_info.active | impact_info.active,
        converged=after_info.converged & impact_info.converged,
    )
    info = pick(info, trial_info)
    end = pick(after, trial)
    end = end._replace(t=state.t0 + (state.i + 1) * h, t0=state.t0, i=state.i + 1)
    return end, info
