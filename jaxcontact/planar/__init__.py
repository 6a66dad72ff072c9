"""Planar rigid multibody builder → :class:`jaxcontact.system.LagrangianSystem` + parameter dict.

    mech = Mechanism("four-bar")
    bar1 = mech.body("bar1", mass="m1", inertia="m1*l1**2/12")
    mech.revolute(bar1, ("-l1/2", 0.0))                     # to the ground at (0, 0)
    ...
    wall = mech.line(point=("-wall_distance", 0.0), normal=(1.0, 0.0))
    mech.point_contact("wall", bar1, ("l1/2", 0.0), wall, restitution="restitution", friction="friction")
    system, params = mech.build(defaults)

Conventions:

* Coordinates: body i owns q[3i:3i+3] = (x, y, θ) of its centre of mass, in the
  order bodies were added; θ counter-clockwise from the world x-axis to the
  body x-axis; M = diag(m, m, J) per body.
* Values (:mod:`.values`): a parameter name, an expression over names
  ("m1*l1**2/12", "omega*t" for drivers and loads), a callable, or a number;
  numbers given for physical scalars become parameters ``<element>_<field>``.
  Everything is resolved inside the jitted functions: batchable leaves.
* Joints (:mod:`.joints`): revolute, prismatic, coordinate drivers (rheonomic);
  Φ_q and Φ_t come from ``jax.jacfwd`` in :func:`jaxcontact.system.kinematics`.
* Loads (:mod:`.forces`): gravity, point forces, torques, spring–dampers, user
  generalized forces; constant loads enter the potential (energy diagnostic).
* Contacts (:mod:`.contacts`): point–line, circle–line, circle–circle, revolute
  joint with clearance; n from the second body to the first, t = (n_y, −n_x),
  γ_T = t · (v_A − v_B) at the material contact points (disk on the ground:
  γ_T = ẋ + r θ̇). ``friction=None`` makes a contact frictionless by structure.
* Errors: builder calls raise ValueError naming the element, field, value and
  rule (unknown body or parameter, mass ≤ 0, restitution outside [0, 1] …) and
  leave the mechanism unchanged; :meth:`Mechanism.validate` re-checks a
  (possibly batched) parameter dict, :meth:`Mechanism.check_state` an initial state.
"""

from jaxcontact.planar.bodies import Body, Point, safe_norm, safe_unit
from jaxcontact.planar.contacts import CircleCircle, CircleLine, ClearanceJoint, Line, PointLine
from jaxcontact.planar.forces import GeneralizedForce, Gravity, PointForce, SpringDamper, Torque
from jaxcontact.planar.joints import Driver, Prismatic, Revolute
from jaxcontact.planar.mechanism import Mechanism
from jaxcontact.values import Value

__all__ = [
    "Body",
    "CircleCircle",
    "CircleLine",
    "ClearanceJoint",
    "Driver",
    "GeneralizedForce",
    "Gravity",
    "Line",
    "Mechanism",
    "Point",
    "PointForce",
    "PointLine",
    "Prismatic",
    "Revolute",
    "SpringDamper",
    "Torque",
    "Value",
    "safe_norm",
    "safe_unit",
]
