"""Resting contacts of spatial bodies projected back onto their surfaces after each Moreau–Jean step.

Without projection a resting body stays about g·h² inside the plane (the velocity-level law holds γ_N = 0, not
g_N = 0). The projection moves the bodies through their position update (quaternions stay unit) and zeroes the
resting contacts' normal velocities; impacts keep Newton's law.
"""

import jax
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.projection import Projection
from tests.spatial.conftest import BOX_TOSS_SCHEME


def _gaps(m, traj):
    return np.asarray(jax.vmap(lambda q, t: m.system.gaps(q, t, m.params))(traj.q, traj.t))


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_tossed_box_comes_to_rest_on_the_plane_with_four_vertices(box_toss_run):
    """The box lands, tumbles and rests on a face: with the projection its four lower vertices end on the plane
    (each of them, although the impulses that hold it are not unique), where the plain step leaves them ~1e-5 m
    inside; the motion before rest is the same."""
    m, plain = box_toss_run
    projected = simulate_model(m, scheme=BOX_TOSS_SCHEME.with_projection(Projection()))
    g_plain, g_proj = np.sort(_gaps(m, plain)[-1]), np.sort(_gaps(m, projected)[-1])
    assert np.all(g_plain[:4] < -1e-6)
    assert np.max(np.abs(g_proj[:4])) < 1e-12 and g_proj[4] > 0.09  # the upper face is 2 half_z above
    q = np.asarray(projected.q)
    assert np.max(np.abs(np.linalg.norm(q[:, 3:], axis=1) - 1.0)) < 1e-14
    # At rest up to the solve: its error (Siconos', relative) stops at 1e-12, which leaves contact-point speeds of
    # that order; spread over lever arms of 0.05–0.15 m that is up to ~1e-11 in ω.
    assert np.max(np.abs(np.asarray(projected.u[-1]))) < 1e-11
    # Same flight and first impact; where it rests differs by the sinking it no longer has (tens of µm).
    first = np.flatnonzero(np.asarray(plain.impulse_normal).any(axis=1))[0]
    assert first == np.flatnonzero(np.asarray(projected.impulse_normal).any(axis=1))[0]
    np.testing.assert_allclose(q[first], np.asarray(plain.q[first]), atol=1e-12)
    assert np.max(np.abs(q[-1, :3] - np.asarray(plain.q[-1, :3]))) < 1e-4
    assert np.all(np.asarray(projected.diagnostics.converged))


def test_projected_sphere_bounces_with_its_restitution_and_rests_on_the_plane():
    """Dropped from 0.2 m with ε = 0.7: the same rebound heights as the plain step (Newton's law untouched), and at
    rest the centre exactly one radius above the plane."""
    m = get_model("sphere-on-plane", drop=0.2, restitution=0.7, speed=0.0)
    runs = [simulate_model(m, dt=1e-3, t_final=1.5, scheme=MoreauJean(projection=p)) for p in (None, Projection())]
    heights = []
    for traj in runs:
        gap = np.asarray(traj.q[:, 2]) - float(m.params["radius"])
        hits = np.flatnonzero(np.asarray(traj.impulse_normal[:, 0]) > 1e-9)
        second = hits[hits > hits[0] + 10][0]
        heights.append(gap[hits[0] : second].max())
    assert abs(heights[0] - 0.49 * 0.2) < 3e-3  # h = 1e-3: the impact is on the step grid
    assert heights[1] == heights[0]
    plain_rest, projected_rest = (np.asarray(tr.q[-1, 2]) - float(m.params["radius"]) for tr in runs)
    assert plain_rest < -1e-6 and abs(projected_rest) < 1e-15
