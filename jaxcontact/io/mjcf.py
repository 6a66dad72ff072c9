"""MJCF and URDF mechanisms as jaxcontact models: parsed and compiled by MuJoCo, rebuilt as a spatial Assembly.

``load(path)`` reads an MJCF (``.xml``) or URDF (``.urdf``) file with the ``mujoco`` package (its compiler
resolves defaults, frames, ``fromto`` and the inertias computed from the geoms), and builds the same
mechanism with :class:`jaxcontact.spatial.Assembly`: rigid Coulomb cones with Newton restitution, in place
of MuJoCo's soft contacts.

What is imported:

* **bodies**: every body with a joint, in file order, as a free rigid body whose coordinates are its
  centre of mass and the orientation of its principal axes (MuJoCo's inertial frame): 7 coordinates per
  body. A body fixed to the world (no joint, world parent, or a mocap body) is part of the ground;
* **joints**: ``free`` (no constraint), ``hinge`` (:class:`~jaxcontact.spatial.Revolute`), ``ball``
  (:class:`~jaxcontact.spatial.Spherical`), ``slide`` (:class:`~jaxcontact.spatial.Prismatic`, where the
  two inertial frames are aligned); a body without a joint under a moving body is welded to it
  (:class:`~jaxcontact.spatial.Fixed`). One joint per body. A hinge's or slide's ``range`` is a pair of
  frictionless unilateral contacts on its angle or travel (:class:`~jaxcontact.spatial.JointLimit`): its stops,
  with Newton's restitution;
* **equality constraints**: ``connect`` (a ball joint between two bodies) and ``weld``;
* **contacts**: every pair of geoms MuJoCo would collide (contype/conaffinity, its parent–child exclusion,
  ``<exclude>``, explicit ``<pair>``) whose shapes jaxcontact has: a sphere, capsule, box, cylinder or convex
  mesh (its hull's vertices) on a plane of the ground, two spheres, a sphere and a box, a capsule and a box,
  two boxes (by their vertices), two capsules;
* **gravity** (along −z) and the time step;
* **the initial state**: the file's first keyframe (``qpos``, ``qvel``), else its drawn pose at rest.

Every number that matters is a named parameter (``jaxcontact params model.xml`` lists them): ``<body>_mass``
(the inertia scales with it: uniform density), ``<geom>_friction`` (a pair's friction is its geoms' as MuJoCo
combines them: the larger, that of the geom of higher priority, none where both say ``condim="1"``),
``<geom>_radius``, ``<geom>_half_length`` (capsules, cylinders), ``<geom>_half_x``/``_y``/``_z`` (boxes),
``<geom>_scale`` (a mesh's contact vertices, about its body's centre of mass), ``<joint>_lower`` and
``<joint>_upper`` (a range's stops, rad or m), ``restitution`` (Newton's coefficient of every contact and stop,
which MJCF cannot say; 0 by default) and ``gravity``.
Names are the file's, with characters other than letters, digits and ``_`` replaced by ``_``; an unnamed body
is ``body<i>``, an unnamed geom ``<body>_geom<k>``.

What is not imported is named in one warning: a ball joint's cone limit, torsional and rolling friction
(condim 4 and 6), an explicit pair's own friction and solver settings, actuators, tendons, sensors, and the
geom pairs whose shapes jaxcontact lacks (cylinder–box, mesh–box, a moving box against a sphere or capsule of
the ground …). A body with several joints, a slide
joint or weld whose frames are not aligned, another equality type, or a gravity not along −z is refused with
its name.
"""

from __future__ import annotations

import functools
import os
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.io import model_file_key
from jaxcontact.params import ANY, POSITIVE, law_range_rule
from jaxcontact.spatial import (
    Assembly,
    BoxBox,
    BoxPlane,
    CapsuleBox,
    CapsuleCapsule,
    CapsulePlane,
    CylinderPlane,
    Fixed,
    JointLimit,
    MeshPlane,
    Plane,
    Prismatic,
    Revolute,
    SphereBox,
    SpherePlane,
    SphereSphere,
    Spherical,
)
from jaxcontact.spatial.pictures import snapshots
from jaxcontact.spatial.view import write_gif, write_html

SUFFIXES = (".xml", ".mjcf", ".urdf")
RESTITUTION = 0.0  # MJCF has no restitution; a plastic impact is the closest to MuJoCo's default contacts
T_FINAL = 1.0


class ImportWarning(UserWarning):
    """What a model file holds that the import leaves out (one warning per file, naming each element)."""


def is_model_file(name: str) -> bool:
    """``name`` is the path of an MJCF or URDF file (by its suffix)."""
    return isinstance(name, str) and name.lower().endswith(SUFFIXES)


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ValueError("reading MJCF/URDF files needs the mujoco package: pip install 'jaxcontact[mjcf]'") from None
    return mujoco


def _identifier(name: str) -> str:
    s = re.sub(r"\W", "_", name, flags=re.ASCII)
    return s if s and not s[0].isdigit() else f"n_{s}"


def _quat(mujoco, matrix) -> np.ndarray:
    out = np.zeros(4)
    mujoco.mju_mat2Quat(out, np.asarray(matrix, float).reshape(9))
    return out / np.linalg.norm(out)


def _numbers(v) -> tuple:
    return tuple(float(x) for x in np.asarray(v, float))


class _Reader:
    """One compiled MuJoCo model read into an Assembly, its parameter defaults and its initial pose."""

    def __init__(self, path: str):
        mujoco = self.mj = _mujoco()
        try:
            m = mujoco.MjModel.from_xml_path(path)
        except Exception as e:  # MuJoCo's compiler names the element and line of a bad file
            raise ValueError(f"model file {path!r}: MuJoCo cannot read it: {e}") from None
        self.m, self.d = m, mujoco.MjData(m)
        if m.nkey:  # the file's first keyframe is the initial state, else qpos0 at rest
            mujoco.mj_resetDataKeyframe(m, self.d, 0)
        mujoco.mj_forward(m, self.d)
        self.skipped: list[str] = []
        self.defaults: dict = {}
        self.uses: list = []  # (parameter, element field, rule): the table's units and rules
        self.path = path
        g = np.asarray(m.opt.gravity, float)
        if abs(g[0]) + abs(g[1]) > 1e-12 * (1 + abs(g[2])) or g[2] > 0:
            raise ValueError(f"model file {path!r}: gravity {g.tolist()} is not along -z (jaxcontact's gravity is)")
        self.defaults["gravity"] = float(-g[2])
        self.defaults["restitution"] = RESTITUTION
        self.asm = Assembly(gravity="gravity")
        self._bodies()
        self._joints()
        self._equalities()
        self._contacts()
        self._unsupported()

    # --- names ------------------------------------------------------------------------------------------------

    def _name(self, kind: str, i: int, fallback: str) -> str:
        raw = self.m.body(i).name if kind == "body" else self.m.geom(i).name
        return _identifier(raw) if raw else fallback

    def body_name(self, i: int) -> str:
        return "ground" if i == 0 else self._name("body", i, f"body{i}")

    def geom_name(self, i: int) -> str:
        b = int(self.m.geom_bodyid[i])
        k = int(i - np.flatnonzero(self.m.geom_bodyid == b)[0])
        return self._name("geom", i, f"{self.body_name(b)}_geom{k}")

    def _param(self, name: str, value: float, field: str, rule) -> str:
        """Register the parameter ``name`` (default ``value``), with the rule and unit of the element field it
        fills (also where it enters an expression: a mass scaling an inertia, a friction in a pair's)."""
        if name in self.defaults and self.defaults[name] != value:
            raise ValueError(f"model file {self.path!r}: two elements give the parameter {name!r}; rename one")
        self.defaults[name] = float(value)
        self.uses.append((name, field, rule))
        return name

    # --- bodies and joints ----------------------------------------------------------------------------------

    def _static(self, i: int) -> bool:
        m = self.m
        return i == 0 or m.body_mocapid[i] >= 0 or int(m.body_weldid[i]) == 0

    def _bodies(self):
        m, d = self.m, self.d
        self.body = {0: None}  # MuJoCo body index -> our Body (None: the ground)
        self.frame = {0: (np.zeros(3), np.eye(3))}  # world pose of each body's inertial frame at qpos0
        q0, u0 = [], []
        for i in range(1, m.nbody):
            R = np.asarray(d.ximat[i], float).reshape(3, 3)
            self.frame[i] = (np.asarray(d.xipos[i], float), R)
            if self._static(i):
                self.body[i] = None
                continue
            name = self.body_name(i)
            mass0 = float(m.body_mass[i])
            if mass0 <= 0:
                raise ValueError(f"model file {self.path!r}: body {name!r} has mass {mass0}: a moving body needs mass")
            mass = self._param(f"{name}_mass", mass0, "mass", POSITIVE)
            ratios = np.asarray(m.body_inertia[i], float) / mass0
            self.body[i] = self.asm.add_body(name, mass=mass, inertia=tuple(f"{mass}*{float(r)!r}" for r in ratios))
            q0.append(np.concatenate([self.frame[i][0], _quat(self.mj, R)]))
            twist = np.zeros(6)  # (ω, v) of the inertial frame, world axes
            self.mj.mj_objectVelocity(m, d, self.mj.mjtObj.mjOBJ_BODY, i, twist, 0)
            u0.append(np.concatenate([twist[3:], R.T @ twist[:3]]))
        if not q0:
            raise ValueError(f"model file {self.path!r} has no moving body")
        self.q0, self.u0 = np.concatenate(q0), np.concatenate(u0)

    def _local(self, i: int, point=None, axis=None):
        """A world point/direction at qpos0 in body i's inertial frame (the world's for the ground)."""
        x, R = self.frame[i] if self.body[i] is not None else (np.zeros(3), np.eye(3))
        if point is not None:
            return _numbers(R.T @ (np.asarray(point, float) - x))
        return _numbers(R.T @ np.asarray(axis, float))

    def _relative(self, a: int, b: int) -> tuple:
        """The quaternion of b's inertial frame in a's at qpos0."""
        Ra = self.frame[a][1] if self.body[a] is not None else np.eye(3)
        return _numbers(_quat(self.mj, Ra.T @ self.frame[b][1]))

    def _joints(self):
        m, d, mj = self.m, self.d, self.mj
        for i in range(1, m.nbody):
            if self.body[i] is None:
                continue
            name, n = self.body_name(i), int(m.body_jntnum[i])
            parent = int(m.body_parentid[i])
            parent = 0 if self._static(parent) else parent
            if n > 1:
                raise ValueError(
                    f"model file {self.path!r}: body {name!r} has {n} joints; one joint per body is imported "
                    "(split it into bodies joined by one joint each)"
                )
            if n == 0:  # welded to its moving parent
                self._add(Fixed, f"{name}_weld", parent, i, self.frame[i][0], None)
                continue
            j = int(m.body_jntadr[i])
            kind = int(m.jnt_type[j])
            jname = m.joint(j).name or f"{name}_joint"
            if kind == mj.mjtJoint.mjJNT_FREE:
                continue
            anchor, axis = np.asarray(d.xanchor[j], float), np.asarray(d.xaxis[j], float)
            if bool(m.jnt_limited[j]):
                if kind == mj.mjtJoint.mjJNT_BALL:
                    self.skipped.append(f"the cone limit of ball joint {jname!r}")
                else:
                    self._limit(j, _identifier(jname), kind == mj.mjtJoint.mjJNT_HINGE, parent, i, anchor, axis)
            joint = {
                mj.mjtJoint.mjJNT_HINGE: Revolute,
                mj.mjtJoint.mjJNT_BALL: Spherical,
                mj.mjtJoint.mjJNT_SLIDE: Prismatic,
            }[kind]
            self._add(joint, _identifier(jname), parent, i, anchor, axis)

    def _limit(self, j: int, name: str, hinge: bool, a: int, b: int, point, axis):
        """Joint j's range as a frictionless unilateral contact (:class:`~jaxcontact.spatial.JointLimit`) with
        the parameters ``<joint>_lower`` and ``<joint>_upper`` (rad or m) and the restitution ``restitution``."""
        field = "angle" if hinge else "travel"
        lower, upper = (
            self._param(f"{name}_{end}", float(self.m.jnt_range[j, k]), field, ANY)
            for k, end in enumerate(("lower", "upper"))
        )
        limit = JointLimit(
            name=f"{name}_limit",
            restitution="restitution",
            friction=0.0,
            kind="hinge" if hinge else "slide",
            a=self.body[a],
            b=self.body[b],
            axis=self._local(a, axis=axis),
            point_a=self._local(a, point=point),
            point_b=self._local(b, point=point),
            orientation=self._relative(a, b),
            reference=float(self.d.qpos[self.m.jnt_qposadr[j]]),
            lower=lower,
            upper=upper,
        )
        self.asm.add_contact(limit)

    def _add(self, kind, name, a: int, b: int, point, axis):
        fields = dict(
            name=name,
            a=self.body[a],
            point_a=self._local(a, point=point),
            b=self.body[b],
            point_b=self._local(b, point=point),
        )
        if axis is not None and kind is not Spherical:
            fields.update(axis_a=self._local(a, axis=axis), axis_b=self._local(b, axis=axis))
        if kind is Fixed:
            fields["orientation"] = self._relative(a, b)
        joint = self.asm.add_joint(kind(**fields))
        with jax.enable_x64(True):  # the check is of the drawing, not of the run's precision
            residual = np.max(np.abs(np.asarray(joint.rows(jnp.asarray(self.q0, jnp.float64), 0.0, {}))))
        if residual > 1e-9:
            raise ValueError(
                f"model file {self.path!r}: joint {name!r} ({kind.__name__}) is not assembled in jaxcontact's "
                f"frames (residual {residual:.2g}): a slide joint needs its two bodies' principal axes aligned"
            )

    def _equalities(self):
        m, mj = self.m, self.mj
        for k in range(m.neq):
            name = _identifier(m.eq(k).name or f"equality{k}")
            kind = int(m.eq_type[k])
            if kind not in (mj.mjtEq.mjEQ_CONNECT, mj.mjtEq.mjEQ_WELD) or int(m.eq_objtype[k]) != mj.mjtObj.mjOBJ_BODY:
                raise ValueError(
                    f"model file {self.path!r}: equality {name!r} is of a type not imported "
                    "(connect and weld between bodies are)"
                )
            b1, b2 = int(m.eq_obj1id[k]), int(m.eq_obj2id[k])
            if self.body[b1] is None and self.body[b2] is None:
                continue
            if self.body[b1] is None:
                b1, b2 = b2, b1
            # connect: eq_data[0:3] is the anchor in body 1's frame; weld: body 2's frame follows body 1's.
            x1 = self.d.xpos[b1] + np.asarray(self.d.xmat[b1]).reshape(3, 3) @ np.asarray(m.eq_data[k, :3])
            kind_ = Spherical if kind == mj.mjtEq.mjEQ_CONNECT else Fixed
            self._add(kind_, name, b2, b1, x1, None)

    # --- contacts -----------------------------------------------------------------------------------------------

    def _pairs(self):
        """The geom pairs MuJoCo's collision filter keeps, in its order."""
        m = self.m
        excluded = {(int(s >> 16), int(s & 0xFFFF)) for s in np.asarray(m.exclude_signature)}
        pairs = []
        for g1 in range(m.ngeom):
            for g2 in range(g1 + 1, m.ngeom):
                b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
                w1, w2 = int(m.body_weldid[b1]), int(m.body_weldid[b2])
                if w1 == w2:
                    continue  # the same rigid body (or both fixed to the world)
                if not (m.geom_contype[g1] & m.geom_conaffinity[g2] or m.geom_contype[g2] & m.geom_conaffinity[g1]):
                    continue
                p1, p2 = int(m.body_weldid[m.body_parentid[w1]]), int(m.body_weldid[m.body_parentid[w2]])
                if (p1 == w2 and w2 != 0) or (p2 == w1 and w1 != 0):
                    continue  # parent and child: MuJoCo's filterparent
                if (b1, b2) in excluded or (b2, b1) in excluded:
                    continue
                pairs.append((g1, g2))
        for k in range(m.npair):
            g = (int(m.pair_geom1[k]), int(m.pair_geom2[k]))
            if g not in pairs and g[::-1] not in pairs:
                pairs.append(g)
            self.skipped.append(f"the friction and solver settings of the explicit pair {self._pair_name(*g)}")
        return pairs

    def _pair_name(self, g1: int, g2: int) -> str:
        return f"{self.geom_name(g1)}–{self.geom_name(g2)}"

    def _geom(self, g: int):
        """(kind, our body index side, centre and rotation in the body's inertial frame) of geom g."""
        m, d = self.m, self.d
        b = int(m.geom_bodyid[g])
        b = 0 if self._static(b) else b
        x, R = self.frame[b] if b else (np.zeros(3), np.eye(3))
        Rg = np.asarray(d.geom_xmat[g], float).reshape(3, 3)
        return b, R.T @ (np.asarray(d.geom_xpos[g], float) - x), R.T @ Rg

    def _half_extents(self, g: int) -> tuple:
        """The parameters ``<geom>_half_x``, ``_y``, ``_z`` of box geom g."""
        return tuple(self._size(g, f"half_{a}", self.m.geom_size[g, i]) for i, a in enumerate("xyz"))

    def _size(self, g: int, field: str, value: float) -> str:
        """The parameter ``<geom>_<field>``: a length (> 0, m) or the geom's friction (in the law's range)."""
        if field == "friction":
            return self._param(f"{self.geom_name(g)}_friction", float(value), "friction", law_range_rule("friction"))
        unit_field = "half_extents" if field.startswith("half_") and field != "half_length" else field
        return self._param(f"{self.geom_name(g)}_{field}", float(value), unit_field, POSITIVE)

    def _contacts(self):
        m, mj = self.m, self.mj
        T = mj.mjtGeom
        shapes = {
            T.mjGEOM_PLANE: "plane",
            T.mjGEOM_SPHERE: "sphere",
            T.mjGEOM_CAPSULE: "capsule",
            T.mjGEOM_BOX: "box",
            T.mjGEOM_CYLINDER: "cylinder",
            T.mjGEOM_MESH: "mesh",
        }
        for g1, g2 in self._pairs():
            k1, k2 = shapes.get(int(m.geom_type[g1])), shapes.get(int(m.geom_type[g2]))
            if k2 == "plane" or (k1, k2) in (("sphere", "box"), ("capsule", "box")):
                g1, g2, k1, k2 = g2, g1, k2, k1
            contact = self._contact(g1, g2, k1, k2)
            if contact is None:
                t1, t2 = (mj.mjtGeom(int(m.geom_type[g])).name[7:].lower() for g in (g1, g2))
                self.skipped.append(f"contact {self._pair_name(g1, g2)} ({t1}–{t2})")
            else:
                self.asm.add_contact(contact)

    def _friction(self, g1: int, g2: int):
        """The pair's sliding friction as MuJoCo combines its geoms': none where both geoms say condim 1, the
        geom of higher priority's, else the larger of the two."""
        m = self.m
        condim = max(int(m.geom_condim[g1]), int(m.geom_condim[g2]))
        if condim == 1:
            return 0.0
        if condim > 3:
            self.skipped.append(f"the torsional/rolling friction (condim {condim}) of {self._pair_name(g1, g2)}")
        f = [self._size(g, "friction", m.geom_friction[g, 0]) for g in (g1, g2)]
        p1, p2 = int(m.geom_priority[g1]), int(m.geom_priority[g2])
        if p1 != p2:
            return f[0] if p1 > p2 else f[1]
        return f"maximum({f[0]}, {f[1]})"

    def _contact(self, g1, g2, k1, k2):
        m = self.m
        b1, c1, R1 = self._geom(g1)
        b2, c2, R2 = self._geom(g2)
        name = f"{self.geom_name(g1)}__{self.geom_name(g2)}"
        law = dict(name=name, restitution="restitution", friction=self._friction(g1, g2))
        if k1 == "plane":
            if b1 != 0:
                return None  # a plane on a moving body
            plane = Plane(normal=_numbers(R1[:, 2]), offset=float(R1[:, 2] @ c1))
            body = self.body[b2]
            if k2 == "sphere":
                return SpherePlane(
                    **law,
                    body=body,
                    radius=self._size(g2, "radius", m.geom_size[g2, 0]),
                    plane=plane,
                    centre=_numbers(c2),
                )
            if k2 == "capsule":
                return CapsulePlane(
                    **law,
                    body=body,
                    radius=self._size(g2, "radius", m.geom_size[g2, 0]),
                    half_length=self._size(g2, "half_length", m.geom_size[g2, 1]),
                    axis=_numbers(R2[:, 2]),
                    centre=_numbers(c2),
                    plane=plane,
                )
            if k2 == "cylinder":
                return CylinderPlane(
                    **law,
                    body=body,
                    radius=self._size(g2, "radius", m.geom_size[g2, 0]),
                    half_length=self._size(g2, "half_length", m.geom_size[g2, 1]),
                    axis=_numbers(R2[:, 2]),
                    centre=_numbers(c2),
                    plane=plane,
                )
            if k2 == "mesh":
                return MeshPlane(
                    **law,
                    body=body,
                    vertices=self._mesh_vertices(g2, c2, R2),
                    scale=self._param(f"{self.geom_name(g2)}_scale", 1.0, "scale", POSITIVE),
                    plane=plane,
                )
            if k2 == "box":
                half = self._half_extents(g2)
                return BoxPlane(
                    **law,
                    body=body,
                    half_extents=half,
                    plane=plane,
                    centre=_numbers(c2),
                    orientation=_numbers(_quat(self.mj, R2)),
                )
            return None
        if k1 == k2 == "box":
            halves = [self._half_extents(g) for g in (g1, g2)]
            return BoxBox(
                **law,
                a=self.body[b1],
                half_extents_a=halves[0],
                centre_a=_numbers(c1),
                orientation_a=_numbers(_quat(self.mj, R1)),
                b=self.body[b2],
                half_extents_b=halves[1],
                centre_b=_numbers(c2),
                orientation_b=_numbers(_quat(self.mj, R2)),
            )
        if k1 == "box" and k2 in ("sphere", "capsule"):
            if b2 == 0:
                return None  # a moving box against a sphere or capsule of the ground: not built
            box_and_round = dict(  # the fields SphereBox and CapsuleBox share
                a=self.body[b1],
                half_extents=self._half_extents(g1),
                box_centre=_numbers(c1),
                box_orientation=_numbers(_quat(self.mj, R1)),
                b=self.body[b2],
                radius=self._size(g2, "radius", m.geom_size[g2, 0]),
                centre_b=_numbers(c2),
            )
            if k2 == "sphere":
                return SphereBox(**law, **box_and_round)
            return CapsuleBox(
                **law,
                **box_and_round,
                half_length=self._size(g2, "half_length", m.geom_size[g2, 1]),
                axis_b=_numbers(R2[:, 2]),
            )
        if k1 == k2 == "sphere":
            return SphereSphere(
                **law,
                a=self.body[b1],
                b=self.body[b2],
                radius_a=self._size(g1, "radius", m.geom_size[g1, 0]),
                radius_b=self._size(g2, "radius", m.geom_size[g2, 0]),
                centre_a=_numbers(c1),
                centre_b=_numbers(c2),
            )
        if k1 == k2 == "capsule":
            return CapsuleCapsule(
                **law,
                a=self.body[b1],
                b=self.body[b2],
                radius_a=self._size(g1, "radius", m.geom_size[g1, 0]),
                radius_b=self._size(g2, "radius", m.geom_size[g2, 0]),
                half_length_a=self._size(g1, "half_length", m.geom_size[g1, 1]),
                half_length_b=self._size(g2, "half_length", m.geom_size[g2, 1]),
                axis_a=_numbers(R1[:, 2]),
                axis_b=_numbers(R2[:, 2]),
                centre_a=_numbers(c1),
                centre_b=_numbers(c2),
            )
        return None

    def _mesh_vertices(self, g: int, centre, rotation) -> np.ndarray:
        """The vertices (n, 3) of mesh geom g in its body's inertial frame (MuJoCo's compiled mesh: scaled, in
        the geom's frame)."""
        k = int(self.m.geom_dataid[g])
        start, count = int(self.m.mesh_vertadr[k]), int(self.m.mesh_vertnum[k])
        local = np.asarray(self.m.mesh_vert[start : start + count], float)
        return centre + local @ np.asarray(rotation).T

    def _unsupported(self):
        m = self.m
        for what, count in (("actuators", m.nu), ("tendons", m.ntendon), ("sensors", m.nsensor)):
            if count:
                self.skipped.append(f"{count} {what}")


@functools.lru_cache(maxsize=16)
def _read(path: str, full: str, digest: str) -> _Reader:
    """One read per (file as named, :func:`jaxcontact.io.model_file_key`): a model built twice from it shares
    its system object, so compiled programs are reused."""
    return _Reader(path)


def builder(path: str):
    """``(**overrides) -> Model`` of the mechanism in the MJCF/URDF file ``path`` (ValueError for a missing,
    unreadable or unsupported file; one :class:`ImportWarning` naming what is not imported)."""
    from jaxcontact.models import Model

    reader = _read(path, *model_file_key(path))
    if reader.skipped:
        warnings.warn(f"{path}: not imported: " + "; ".join(reader.skipped), ImportWarning, stacklevel=3)
    asm = reader.asm
    table = asm.param_table(reader.defaults, reader.uses)
    system = asm.system()
    q0, u0 = reader.q0, reader.u0
    name = os.path.splitext(os.path.basename(path))[0]

    def initial_state(p):
        dtype = jnp.result_type(float)
        return jnp.asarray(q0, dtype), jnp.asarray(u0, dtype)

    def make(**overrides) -> Model:
        params = table.apply(overrides)
        asm.validate(params)
        return Model(
            name,
            system,
            params,
            initial_state,
            dt=float(reader.m.opt.timestep),
            t_final=T_FINAL,
            description=f"{os.path.basename(path)}, imported from MJCF/URDF: {asm.n_bodies} bodies, "
            f"{len(asm.joints)} joints, {asm.n_contacts} contact points (rigid, restitution 'restitution').",
            table=table,
            picture=functools.partial(snapshots, assembly=asm),
            view=functools.partial(write_html, assembly=asm, title=name),
            animation=functools.partial(write_gif, assembly=asm),
        )

    return make


def load(path: str, **overrides):
    """The :class:`jaxcontact.models.Model` of the MJCF/URDF file ``path`` with parameter overrides by name."""
    from jaxcontact.models import get_model

    return get_model(path, **overrides)
