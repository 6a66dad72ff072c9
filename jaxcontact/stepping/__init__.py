"""Time-stepping schemes: one pure ``step(system, scheme, params, state, dt)`` per scheme."""

from jaxcontact.stepping.baumgarte import baumgarte_acceleration_rhs, baumgarte_velocity_target
from jaxcontact.stepping.event_driven import EventDriven
from jaxcontact.stepping.impact_projection import ImpactProjection
from jaxcontact.stepping.moreau_jean import MoreauJean, State, StepInfo, baumgarte_rates, initial_state, step
from jaxcontact.stepping.penalty import Penalty
from jaxcontact.stepping.projection import project, project_position, project_velocity, resting_contacts

__all__ = ["MoreauJean", "State", "StepInfo", "initial_state", "step",
           "ImpactProjection", "baumgarte_rates", "baumgarte_velocity_target", "baumgarte_acceleration_rhs",
           "project", "project_position", "project_velocity", "resting_contacts", "Penalty", "EventDriven"]
