"""The 2015 four-bar paper's scheme: impact LCP on the bilateral Schur complement, then projection.

Per step, from a state (q_A, u_A) that lies on the constraint manifold:

1. smooth part and impacts in one velocity-level problem at q_A: the bilateral
   constraints are kept by the saddle-point system, eliminated by blocks
   (M̂ = M⁻¹ − M⁻¹Φ_qᵀ G⁻¹ Φ_q M⁻¹, G = Φ_q M⁻¹ Φ_qᵀ), and the contact/impact
   LCP γ_N⁺ = W_Nᵀ M̂ W_N S_N + (free velocity), S_N ⟂ γ_N⁺ + ε_N γ_N⁻ ≥ 0
   (Newton restitution) is solved by projected Gauss–Seidel;
2. q_E = q_A + h u_E;
3. projection of (q_E, u_E) onto Φ = 0, then Φ_q u + Φ_t = 0 in the mass
   metric (:func:`jaxcontact.stepping.projection.project`), resting contacts
   onto their surface — so the next step's LCP is assembled at a consistent
   state and no drift enters the contact forces.

This is Moreau–Jean's step (:mod:`jaxcontact.stepping.moreau_jean`, which
already eliminates the bilateral impulse by the same Schur complement) with
θ = 1: every matrix of the LCP is evaluated at q_A, the projected state, as
the paper prescribes, instead of at the midpoint q_A + h u_A / 2, which lies
O(h²) off the manifold. The step function is shared: ``step(system,
ImpactProjection(), p, state, dt)`` and ``simulate(..., scheme=ImpactProjection())``.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from jaxcontact.stepping.base import register_preset
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.projection import Projection


@register_preset
@dataclasses.dataclass(frozen=True)
class ImpactProjection(MoreauJean):
    """The four-bar paper's scheme as Moreau–Jean options (all static; see :class:`MoreauJean`).

    Defaults: θ = 1 (LCP at the projected start state), ``solver`` = "auto"
    (projected Gauss–Seidel for frictionless contacts, its friction extension
    NSGS otherwise), Newton's law for every contact (``separating`` =
    "newton"), ``projection`` = ``Projection()``: joints and resting contacts
    projected after every step.
    """

    name: ClassVar[str] = "impact-projection"
    summary: ClassVar[str] = "the four-bar paper's scheme: θ = 1, Newton's law, a projection after each step"

    theta: float = 1.0
    separating: str = "newton"
    projection: Projection | None = Projection()
