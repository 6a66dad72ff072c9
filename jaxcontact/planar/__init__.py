"""Planar rigid multibody builder: bodies in absolute coordinates, joints, drivers, loads,
contact geometry → a :class:`jaxcontact.system.LagrangianSystem` and its parameter dict.

Start with :class:`Mechanism`; value specs are described in :mod:`jaxcontact.planar.values`,
contact sign conventions in :mod:`jaxcontact.planar.contacts`.
"""

from jaxcontact.planar.bodies import Body, Point, safe_norm, safe_unit
from jaxcontact.planar.contacts import CircleCircle, CircleLine, ClearanceJoint, Line, PointLine
from jaxcontact.planar.forces import Gravity, PointForce, SpringDamper, Torque
from jaxcontact.planar.joints import Driver, Prismatic, Revolute
from jaxcontact.planar.mechanism import Mechanism
from jaxcontact.planar.values import Value

__all__ = [
    "Body", "CircleCircle", "CircleLine", "ClearanceJoint", "Driver", "Gravity", "Line", "Mechanism", "Point",
    "PointForce", "PointLine", "Prismatic", "Revolute", "SpringDamper", "Torque", "Value", "safe_norm", "safe_unit",
]
