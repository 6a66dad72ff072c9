"""jaxcontact: batched, differentiable nonsmooth multibody dynamics in JAX.

Layers (each calls only the one below it):
``lcp`` (complementarity solvers) → ``system`` (Lagrangian systems, planar
builder) → ``stepping`` (time-stepping schemes) → ``simulate`` (scan/vmap)
→ ``studies`` (Monte Carlo, sensitivity, identification).
"""

__version__ = "0.1.0"
