"""Spatial (3D) rigid multibody systems: quaternion bodies, contacts on Coulomb cones, joints.

* :mod:`.rotations` — unit quaternions [w, x, y, z], body-frame angular velocity, exponential map;
* :mod:`.bodies` — the coordinates (7 per body) and velocities (6 per body) of free rigid bodies;
* :mod:`.contacts` — sphere–plane, sphere–sphere, sphere–box, box–plane, box–box, mesh–plane, capsule–plane,
  capsule–box, cylinder–plane, capsule–capsule, pin-in-hole and ball-in-socket contacts with two tangent
  directions;
* :mod:`.geometry` — their world-frame gaps, contact points and normals (closest points of segments …);
* :mod:`.joints` — spherical, universal, revolute, cylindrical, prismatic and fixed joints, drivers;
* :mod:`.limits` — a hinge's or slide's range as unilateral contacts on the joint coordinate;
* :mod:`.forces` — applied forces and torques, spring–dampers;
* :mod:`.assembly` — the builder of a :class:`jaxcontact.system.LagrangianSystem` from them.
"""

from jaxcontact.spatial import rotations
from jaxcontact.spatial.assembly import Assembly
from jaxcontact.spatial.bodies import Body
from jaxcontact.spatial.contacts import (
    BoxBox,
    BoxPlane,
    CapsuleBox,
    CapsuleCapsule,
    CapsulePlane,
    CylinderPlane,
    MeshPlane,
    PinInHole,
    Plane,
    SphereBox,
    SphereInSphere,
    SpherePlane,
    SphereSphere,
)
from jaxcontact.spatial.forces import Load, SpringDamper
from jaxcontact.spatial.joints import Cylindrical, Driver, Fixed, Prismatic, Revolute, Spherical, Universal
from jaxcontact.spatial.limits import JointLimit

__all__ = [
    "Assembly",
    "Body",
    "BoxBox",
    "BoxPlane",
    "CapsuleBox",
    "CapsuleCapsule",
    "CapsulePlane",
    "CylinderPlane",
    "Cylindrical",
    "Driver",
    "Fixed",
    "JointLimit",
    "MeshPlane",
    "PinInHole",
    "Plane",
    "Prismatic",
    "Revolute",
    "Spherical",
    "SphereInSphere",
    "SphereBox",
    "SpherePlane",
    "SphereSphere",
    "Universal",
    "rotations",
    "Load",
    "SpringDamper",
]
