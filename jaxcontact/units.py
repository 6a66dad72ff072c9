"""Conventional units (SI) of parameters and coordinates by name, for tables and axis labels.

"1" marks a dimensionless value. A coordinate named ``*theta`` is an angle
(rad); every other coordinate of the built-in models is a position (m). A
parameter's own declared unit (:class:`jaxcontact.params.Param`) comes first;
these names are the fallback for a parameter that declares none.
"""

from __future__ import annotations

PARAM_UNITS = {
    "mass": "kg",
    "m1": "kg",
    "m2": "kg",
    "m3": "kg",
    "J1": "kg·m²",
    "J2": "kg·m²",
    "J3": "kg·m²",
    "radius": "m",
    "height": "m",
    "width": "m",
    "l1": "m",
    "l2": "m",
    "l3": "m",
    "ground_length": "m",
    "wall_distance": "m",
    "bar_length": "m",
    "e": "m",
    "ax": "m",
    "ay": "m",
    "pin_radius": "m",
    "clearance": "m",
    "restitution": "1",
    "friction": "1",
    "static_friction": "1",
    "exponent": "1",
    "gravity": "m/s²",
    "g": "m/s²",
    "torque": "N·m",
    "omega": "rad/s",
    "initial_angle": "rad",
    "tilt": "rad",
    "slope_deg": "deg",
    "speed": "m/s",
    "push_rate": "N/s",
    "slip_width": "m/s",
    "slip_width0": "m/s",
    "stiffness": "N/m^exponent",
    "half_x": "m",
    "half_y": "m",
    "half_z": "m",
    "length": "m",
    "drop": "m",
    "tilt_deg": "deg",
    "angle_deg": "deg",
    "vertical_speed": "m/s",
    "ball_radius": "m",
    "offset": "m",
    "axial_inertia": "1",
    "inertia_ratio": "1",
    "offset_y": "m",
    "offset_z": "m",
    "spin": "rad/s",
    "spin_x": "rad/s",
    "spin_y": "rad/s",
    "spin_z": "rad/s",
}


def conventional_unit(name: str) -> str:
    """The conventional unit of a parameter name ("?" when the table does not know it)."""
    return PARAM_UNITS.get(name, "?")


def coordinate_unit(name: str) -> str:
    """rad for an angle coordinate (``…theta``), 1 for a quaternion component (``…qw`` … ``…qz``), m for a position."""
    last = name.split(".")[-1]
    if last in ("qw", "qx", "qy", "qz"):
        return "1"
    return "rad" if last.startswith("theta") else "m"


def velocity_unit(name: str) -> str:
    """m/s or rad/s: a spatial body's velocity (``…vx`` … ``…vz`` translational, ``…wx`` … ``…wz`` angular),
    else the rate of the coordinate ``name``."""
    last = name.split(".")[-1]
    if last in ("vx", "vy", "vz"):
        return "m/s"
    if last in ("wx", "wy", "wz"):
        return "rad/s"
    return f"{coordinate_unit(name)}/s"
