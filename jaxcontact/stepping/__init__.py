"""Time-stepping schemes: one pure ``step(system, scheme, params, state, dt)`` per scheme."""

from jaxcontact.stepping.moreau_jean import MoreauJean, State, StepInfo, initial_state, step

__all__ = ["MoreauJean", "State", "StepInfo", "initial_state", "step"]
