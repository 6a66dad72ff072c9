"""Linear complementarity solvers: find z ≥ 0 with w = M z + q ≥ 0, zᵀw = 0.

All solvers take one problem (M (n, n), q (n,)), work under ``jax.jit`` and
``jax.vmap`` in float32 and float64, never raise inside jit, and return an
:class:`LCPSolution` with diagnostics.
"""

from jaxcontact.lcp.solution import LCPSolution, natural_residual, siconos_error

__all__ = ["LCPSolution", "natural_residual", "siconos_error"]

from jaxcontact.lcp.pgs import pgs  # noqa: E402
from jaxcontact.lcp.jacobi import projected_jacobi  # noqa: E402
from jaxcontact.lcp.implicit import implicit_solution, implicit_solve  # noqa: E402

__all__ += ["pgs", "projected_jacobi", "implicit_solution", "implicit_solve"]

from jaxcontact.lcp.friction2d import (  # noqa: E402
    FrictionSolution, coulomb_residual, fc2d_error, friction_lcp, from_lcp_solution, nsgs)

__all__ += ["FrictionSolution", "coulomb_residual", "fc2d_error", "friction_lcp", "from_lcp_solution", "nsgs"]

from jaxcontact.lcp.lemke import lemke  # noqa: E402
from jaxcontact.lcp.newton import newton_fb  # noqa: E402
from jaxcontact.lcp.enumeration import enumerate_lcp  # noqa: E402
from jaxcontact.lcp.robust import robust_solve  # noqa: E402

__all__ += ["lemke", "newton_fb", "enumerate_lcp", "robust_solve"]
