"""Model smoothing for stiff and flexible components (the 2018 model-smoothing paper; docs/theory/smoothing.md).

* :mod:`.linear` — smoothed linear elastic systems (M + h²K/6) ü + (C + hK/2) u̇ + K u = F,
  the paper's three-mass spring chain, exact modal solutions and the smoothed modes' frequency/amplitude ratios;
* :mod:`.integrate` — explicit RK4, diffrax's adaptive Tsit5/Dopri5 and stiff Kvaerno5 for
  smooth Lagrangian systems (Baumgarte-stabilised joints);
* :mod:`.beam` — planar ANCF beams with smoothed strain and curvature, pinned to the ground,
  to each other or to rigid bodies of a planar Mechanism (the paper's flexible double pendulum);
* :mod:`.stiff_ball` — a ball on a K = 1e8 N/m ground with a smoothed contact spring.
"""

from jaxcontact.smoothing.integrate import Solution, accelerations, rk4, solve, vector_field
from jaxcontact.smoothing.linear import (
    amplitude_ratio,
    chain_stiffness,
    decay_rate,
    frequency_ratio,
    modal_solution,
    smoothed_linear_system,
    spring_chain,
)

__all__ = [
    "Solution",
    "accelerations",
    "amplitude_ratio",
    "chain_stiffness",
    "decay_rate",
    "frequency_ratio",
    "modal_solution",
    "rk4",
    "smoothed_linear_system",
    "solve",
    "spring_chain",
    "vector_field",
]
