"""Frictional contact on Coulomb cones (3D, and planar as its 2D case): batched, differentiable solvers.

Problem: nc contacts, u = W r + q with unknowns interleaved per contact
(r_N, r_T…) as Siconos orders them, friction coefficients μ; find r with
K* ∋ û ⟂ r ∈ K (De Saxcé's form of Coulomb's law, :mod:`.laws`). Every
solver takes one problem (vmap for a batch), works under jit in float32 and
float64, and returns a :class:`ContactSolution` (r, u, residual = Siconos'
``fc3d_compute_error``, iterations, converged).

* :func:`nsgs` — nonsmooth block Gauss–Seidel with an exact local solve;
  :func:`jacobi` — the all-contacts-at-once variant with relaxation
  (:mod:`.sweeps`); both take W dense, by block rows (:class:`BlockRows`,
  a sweep in O(nnz)) or by its factors (:class:`Factored`, W = Hᵀ X + diag(s): a sweep in
  O(n_u) per contact, for systems with fewer velocities than contact unknowns).
* :func:`newton` — global semismooth Newton on the Alart–Curnier function
  (or the Fischer–Burmeister function of the cone, ``function=`` option),
  line search, proximal regularisation; the Newton system by the
  ``linear_solver=`` object: :class:`DenseLU`, :class:`BandedLU` (W within a band),
  :class:`GMRES` or :class:`SparseLU` on W's block rows (:mod:`.linear_solvers`);
  :func:`proximal_newton` — proximal point iterations around it, for semidefinite W (:mod:`.newton`).
* Gradients of r in (W, q, μ) by the implicit function theorem on each
  contact's regime (:mod:`.implicit`), or by unrolling the sweeps.
* :func:`read_problem` — Siconos text files (dense, sparse block) and FCLIB
  HDF5 (:mod:`.problem`).
"""

from jaxcontact.cones.delassus import BlockRows, Factored, block_rows
from jaxcontact.cones.laws import ConeViolations, alart_curnier, cone_violations, fc3d_error, project_cone
from jaxcontact.cones.linear_solvers import GMRES, BandedLU, DenseLU, SparseLU
from jaxcontact.cones.newton import newton, proximal_newton
from jaxcontact.cones.problem import BlockMatrix, ContactProblem, bundled_dir, bundled_files, read_problem
from jaxcontact.cones.solution import ContactSolution
from jaxcontact.cones.sweeps import jacobi, nsgs

__all__ = [
    "BlockRows",
    "Factored",
    "block_rows",
    "ConeViolations",
    "alart_curnier",
    "cone_violations",
    "fc3d_error",
    "project_cone",
    "newton",
    "DenseLU",
    "BandedLU",
    "GMRES",
    "SparseLU",
    "proximal_newton",
    "BlockMatrix",
    "ContactProblem",
    "bundled_dir",
    "bundled_files",
    "read_problem",
    "ContactSolution",
    "jacobi",
    "nsgs",
]
