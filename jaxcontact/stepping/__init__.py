"""Time-stepping schemes behind one interface (:class:`jaxcontact.stepping.base.Scheme`).

Moreau–Jean (rigid contacts, impulses), penalty (compliant contacts, an ODE) and
event-driven (rigid and compliant contacts, stick–slip located inside the step) are
siblings built on the shared kernels of :mod:`jaxcontact.stepping.kernels`.
"""

from jaxcontact.stepping.base import PRESETS, SCHEMES, Scheme, StepInfo, scheme_named, schemes_for
from jaxcontact.stepping.baumgarte import baumgarte_acceleration_rhs, baumgarte_rates, baumgarte_velocity_target
from jaxcontact.stepping.event_driven import EventDriven
from jaxcontact.stepping.impact_projection import ImpactProjection
from jaxcontact.stepping.moreau_jean import MoreauJean, MoreauJeanSiconos, State, initial_state, step
from jaxcontact.stepping.penalty import Penalty
from jaxcontact.stepping.projection import Projection, project, project_position, project_velocity, resting_contacts

__all__ = [
    "Scheme",
    "SCHEMES",
    "PRESETS",
    "scheme_named",
    "schemes_for",
    "MoreauJean",
    "MoreauJeanSiconos",
    "State",
    "StepInfo",
    "initial_state",
    "step",
    "ImpactProjection",
    "baumgarte_rates",
    "baumgarte_velocity_target",
    "baumgarte_acceleration_rhs",
    "Projection",
    "project",
    "project_position",
    "project_velocity",
    "resting_contacts",
    "Penalty",
    "EventDriven",
]
