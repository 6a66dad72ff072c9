"""The scheme interface: what every time-stepping scheme provides and declares.

A scheme is a frozen (hashable) dataclass of static options with three pure methods
— ``init`` builds the scan carry, ``step`` advances it by one step, ``active`` says
which contacts are closed — and one host-side method, ``check(system)``, that refuses
a system the scheme cannot treat with an error naming the scheme and the reason.
Its capabilities are declared, so the generic layers (``simulate``, Monte Carlo,
identification, the CLI) ask the scheme instead of testing its type:

* ``contact_kinds``: the contact kinds it treats — "rigid" (``LagrangianSystem.gaps``,
  set-valued Signorini/Newton laws) and "compliant" (``compliant_gaps``, force laws);
* ``differentiation_modes``: "forward" and/or "reverse" (a scheme whose contact solve
  has a custom VJP, e.g. implicit LCP gradients, is reverse-only);
* ``soft_activation_available`` and :meth:`Scheme.with_soft_activation`: contacts
  switched on smoothly by their gap, the smoothing knob of parameter identification;
* ``impact_location_available`` and :meth:`Scheme.with_impact_location`: impacts located
  inside the step (the trajectory continuous in a restitution), what identification asks for;
* :meth:`Scheme.for_forward_runs`: the variant a study that differentiates nothing runs.

Every scheme holds two parts as options, so the modifiers :meth:`Scheme.with_projection` and
:meth:`Scheme.without_diagnostics` apply to any scheme: ``projection`` (None or a
:class:`jaxcontact.stepping.projection.Projection`, run after the step) and ``diagnostics``.
Parts and modifiers are options of the one frozen dataclass, not wrappers around a scheme:
a wrapper would have to reach into each scheme's state (warm starts, slip modes), its
diagnostics must see the projected state, and the located impacts of Moreau–Jean split its
own step (docs/theory/projection-baumgarte.md).

A *preset* is a scheme with other defaults and its own name (Siconos' step, the four-bar
paper's scheme): a subclass that sets them, registered with :func:`register_preset`. It is
one more ``--scheme`` choice on the command line and the same step underneath;
:meth:`Scheme.family` names the scheme it presets.

Every scheme's state is a pytree with fields ``t``, ``q``, ``u`` (the generic loop
reads only those) and its ``step`` returns a :class:`StepInfo` of fixed shapes.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar, NamedTuple

import jax


class StepInfo(NamedTuple):
    """Per-step outputs: impulses, active flags and diagnostics at the step's end.

    ``P_N``/``P_T`` are impulses over the step: force-based schemes (penalty,
    event-driven) report the contact force integrated over the step, so impulse-based
    and force-based trajectories compare on the same footing. ``converged``: the
    contact solve converged and the new velocity is finite.
    """

    P_N: jax.Array
    P_T: jax.Array
    active: jax.Array
    residual: jax.Array
    converged: jax.Array
    iterations: jax.Array
    phi: jax.Array  # ‖Φ(q_E, t_E)‖₂
    phi_dot: jax.Array  # ‖Φ_q(q_E) u_E + Φ_t‖₂
    energy: jax.Array


CONTACT_KINDS = ("rigid", "compliant")


class Scheme(abc.ABC):
    """Base of every time-stepping scheme (subclasses are frozen dataclasses with a ``diagnostics`` option)."""

    name: ClassVar[str]  # the command-line name, e.g. "moreau-jean"
    summary: ClassVar[str] = ""  # one line for the command line's --scheme help
    contact_kinds: ClassVar[frozenset] = frozenset()
    soft_activation_available: ClassVar[bool] = False
    impact_location_available: ClassVar[bool] = False
    # Treats spatial systems: coordinates advanced through a velocity map (q̇ = T(q) u, quaternions)
    # and frictional contacts on Coulomb cones (two tangent directions).
    spatial: ClassVar[bool] = False
    # Integrates stiff forces explicitly: a step too coarse for one sample can make its answer finite and
    # wrong, so a Monte Carlo study runs its extreme samples again at half the step (studies.step_check).
    step_checked: ClassVar[bool] = False

    @abc.abstractmethod
    def init(self, system, p, q0, u0, t0):
        """The scan carry at (q0, u0, t0): a pytree with fields t, q, u."""

    @abc.abstractmethod
    def step(self, system, p, state, dt) -> tuple[object, StepInfo]:
        """One step of size ``dt`` (pure; jit/vmap-able)."""

    @abc.abstractmethod
    def active(self, system, p, state):
        """(k,) bool: the contacts closed at ``state``, in StepInfo's contact order."""

    @property
    def differentiation_modes(self) -> frozenset:
        """The autodiff modes that pass through a step: {"forward", "reverse"} unless a subclass says less."""
        return frozenset({"forward", "reverse"})

    def check(self, system) -> None:
        """Raise ValueError, naming the scheme and the reason, if it cannot treat ``system``."""
        for kind, present in (("rigid", system.gaps is not None), ("compliant", system.compliant_gaps is not None)):
            if present and kind not in self.contact_kinds:
                other = "compliant" if kind == "rigid" else "rigid"
                raise ValueError(
                    f"the {self.name} scheme treats {' and '.join(sorted(self.contact_kinds))} contacts "
                    f"only, and this system has {kind} contacts: choose a scheme that treats them "
                    f"({', '.join(schemes_for(kind, system.velocity_map is not None))}) or make the "
                    f"contacts {other}"
                )
        spatial = [n for n, s in SCHEMES.items() if s.spatial]
        if system.velocity_map is not None and not self.spatial:
            raise ValueError(
                f"the {self.name} scheme advances q by q̇ = u only, and this system has "
                f"{system.n_dof} coordinates driven by {system.n_u} velocities through a velocity map "
                f"(spatial bodies): choose {', '.join(spatial) or 'a spatial scheme'}"
            )
        if system.tangent_directions == 2 and system.slip_velocity is not None and not self.spatial:
            raise ValueError(
                f"the {self.name} scheme has no Coulomb cone solver, and this system has spatial "
                f"frictional contacts (two tangent directions): choose "
                f"{', '.join(spatial) or 'a spatial scheme'}"
            )

    def with_soft_activation(self, key: str) -> Scheme:
        """This scheme with contacts switched on smoothly by their gap over the width ``p[key]``."""
        raise ValueError(
            f"the {self.name} scheme has no soft contact activation (smoothing); "
            f"use one with it: {', '.join(n for n, s in SCHEMES.items() if s.soft_activation_available)}"
        )

    def with_impact_location(self, mode: str) -> Scheme:
        """This scheme with impacts located by ``mode`` ("interpolated": at the gap crossing inside the step)."""
        raise ValueError(
            f"the {self.name} scheme has no impact_location option; schemes with it: "
            f"{', '.join(n for n, s in SCHEMES.items() if s.impact_location_available)}"
        )

    def with_projection(self, projection) -> Scheme:
        """This scheme with ``projection`` (a :class:`jaxcontact.stepping.projection.Projection`) after each step."""
        return dataclasses.replace(self, projection=projection)

    def plan(self, system) -> dict[str, str]:
        """The path this scheme takes on ``system``, concern -> a short description (as lineax's
        ``select_solver`` says which solver it picked); a scheme adds its own concerns. Call after
        :meth:`check`, which refuses a system the scheme cannot treat."""
        return {"scheme": self.name, "projection": "none" if self.projection is None else repr(self.projection)}

    def samples_per_call(self, system) -> int | None:
        """The most samples of ``system`` a device should step at once in a forward study (the rest wait for
        the next sub-batch, :func:`jaxcontact.studies.runner.in_sub_batches`), or None: its whole share. A
        scheme whose batched step costs more per sample in a wider batch on this backend says how wide; the
        results do not depend on it."""
        return None

    def for_forward_runs(self) -> Scheme:
        """This scheme as it runs best when nothing is differentiated through it (a Monte Carlo study):
        itself, unless a scheme has a cheaper variant with the same motion."""
        return self

    def without_diagnostics(self) -> Scheme:
        """This scheme without per-step ‖Φ‖, ‖Φ̇‖ and energy (a study computes what it reads itself)."""
        return dataclasses.replace(self, diagnostics=False)

    def config(self) -> dict:
        """JSON identity of the scheme and its options (functions by their qualified name)."""
        out = {"scheme": self.name}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if dataclasses.is_dataclass(v):  # a part (e.g. a Projection): its own options
                v = {"part": type(v).__name__} | dataclasses.asdict(v)
            out[f.name] = getattr(v, "__qualname__", repr(v)) if callable(v) else v
        return out

    @classmethod
    def family(cls) -> str:
        """The name of the registered scheme this one is or presets (a preset's own name is not it)."""
        return next(c.name for c in cls.__mro__ if SCHEMES.get(vars(c).get("name")) is c)


# Command-line name -> scheme class; filled by each scheme's module (see ``register``).
SCHEMES: dict[str, type] = {}
# Command-line name -> preset class (a subclass of a registered scheme with other defaults).
PRESETS: dict[str, type] = {}


def register(cls):
    """Class decorator: list a scheme under its ``name`` (for the CLI and error messages)."""
    SCHEMES[cls.name] = cls
    return cls


def register_preset(cls):
    """Class decorator: list a preset (a subclass of a registered scheme) under its ``name`` for the CLI."""
    if not any(issubclass(cls, s) for s in SCHEMES.values()):
        raise TypeError(f"preset {cls.name!r} must subclass a registered scheme ({', '.join(SCHEMES)})")
    PRESETS[cls.name] = cls
    return cls


def scheme_named(name: str) -> type:
    """The scheme or preset class of a command-line name; ValueError naming the value and the choices."""
    found = SCHEMES.get(name) or PRESETS.get(name)
    if found is None:
        raise ValueError(f"scheme {name!r} is not one of {', '.join([*SCHEMES, *PRESETS])}")
    return found


def schemes_for(kind: str, spatial: bool = False) -> list[str]:
    """Names of the registered schemes that treat contacts of ``kind`` ("rigid" or "compliant"), on spatial
    systems if ``spatial``."""
    return [n for n, s in SCHEMES.items() if kind in s.contact_kinds and (s.spatial or not spatial)]
