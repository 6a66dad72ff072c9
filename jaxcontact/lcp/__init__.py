"""Linear complementarity solvers: find z ≥ 0 with w = M z + q ≥ 0, zᵀw = 0.

All solvers take one problem (M (n, n), q (n,)), work under ``jax.jit`` and
``jax.vmap`` in float32 and float64, never raise inside jit, and return an
:class:`LCPSolution` with diagnostics.

* :func:`lemke` — complementary pivoting, the exact reference;
  :func:`newton_fb`, :func:`enumerate_lcp` and :func:`robust_solve` for the
  problems pivoting misses.
* :func:`pgs`, :func:`projected_jacobi` — fixed-sweep iterative solvers,
  differentiable by unrolling or implicitly (:mod:`.implicit`).
* :func:`nsgs`, :func:`friction_lcp` — the planar Coulomb frictional contact
  problem (block Gauss–Seidel, and Moreau–Jean's planar friction LCP for Lemke).

Note: the solver functions shadow their module names here
(``jaxcontact.lcp.lemke`` is the function); import module internals with
``from jaxcontact.lcp.lemke import ...``.
"""

from jaxcontact.lcp.enumeration import enumerate_lcp
from jaxcontact.lcp.friction2d import (
    FrictionSolution,
    coulomb_residual,
    fc2d_error,
    friction_lcp,
    from_lcp_solution,
    nsgs,
)
from jaxcontact.lcp.implicit import implicit_solution, implicit_solve
from jaxcontact.lcp.jacobi import projected_jacobi
from jaxcontact.lcp.lemke import lemke
from jaxcontact.lcp.newton import newton_fb
from jaxcontact.lcp.pgs import pgs
from jaxcontact.lcp.robust import robust_solve
from jaxcontact.lcp.solution import LCPSolution, natural_residual, siconos_error

__all__ = [
    "LCPSolution",
    "natural_residual",
    "siconos_error",
    "lemke",
    "newton_fb",
    "enumerate_lcp",
    "robust_solve",
    "pgs",
    "projected_jacobi",
    "implicit_solution",
    "implicit_solve",
    "FrictionSolution",
    "coulomb_residual",
    "fc2d_error",
    "friction_lcp",
    "from_lcp_solution",
    "nsgs",
]
