"""Alike contacts evaluated as one: the gaps and slips of a group of contacts by one ``vmap`` over its members.

An assembly's gaps are the concatenation of its contacts' gaps. Traced contact by contact, a column of fifty
spheres is fifty copies of the same geometry in the program (and more under the Jacobian's tangents): the
trace, the compile and the run all grow with the number of contacts. Contacts of one class that differ only in
the bodies they join and in the values of their declared fields are one computation over a leading axis
instead: each member's bodies' coordinates are gathered into a local state, its declared values resolved
into arrays, and one template contact, whose bodies are the local ones and whose varying values are read from
those arrays, runs under ``vmap``.

What may differ between the members of a group (everything else must be the same object or an equal value):

* the bodies, where each member has a body (or the ground) on the same fields;
* the fields a contact declares as values: its physical scalars (:meth:`Contact.physical`, by field name, or
  element by element as ``field[i]``) and its vectors (:meth:`Contact.vectors`);
* its name and its law (restitution, friction), which the geometry does not read.

So a field the class does not declare (a hinge limit's kind, a cylinder's rim count, a mesh's vertices, a
plane) is part of the group's identity: contacts that differ there are computed apart. Only groups of at least
:data:`~jaxcontact.spatial.bodies.VMAP_FROM` members are computed under ``vmap``; the others' contacts run one
by one, as written. The results come back in the assembly's order.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.spatial import bodies
from jaxcontact.spatial.bodies import Body
from jaxcontact.spatial.contacts import Contact
from jaxcontact.values import Value

# Fields no geometry reads: they may differ within a group and the template keeps its first member's.
_FREE = ("name", "restitution", "friction")
# The key under which a group's member values reach its template (not a parameter name: it has a space).
_KEY = "contact group"


def _body_fields(contact: Contact) -> tuple[str, ...]:
    """The fields that hold a body or the ground (None)."""
    return tuple(
        f.name
        for f in dataclasses.fields(contact)
        if isinstance(getattr(contact, f.name), Body) or (getattr(contact, f.name) is None and "Body" in str(f.type))
    )


def _value_fields(contact: Contact) -> dict[str, int | None]:
    """field -> length (None: a scalar) of the fields declared as values that may differ within a group."""
    physical = contact.physical()
    names = [f.name for f in dataclasses.fields(contact) if f.name not in _FREE]
    out = {}
    for name in names:
        value = getattr(contact, name)
        if name in physical:
            out[name] = None
        elif isinstance(value, tuple) and value and all(f"{name}[{i}]" in physical for i in range(len(value))):
            out[name] = len(value)  # declared element by element (a box's half extents)
    out.update({k: len(spec) for k, (spec, _) in contact.vectors().items() if k in names})
    return out


def _static(value):
    """A value as it enters a group's identity: by equality where it can be hashed, else by identity."""
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return ("value", type(value).__name__, value)


def _identity(contact: Contact):
    """What a group's members share: the class, where the ground is, the shapes of the value fields and every
    other field's value."""
    bodies, values = _body_fields(contact), _value_fields(contact)
    ground = tuple(getattr(contact, f) is None or getattr(contact, f).is_ground for f in bodies)
    fixed = tuple(
        (f.name, _static(getattr(contact, f.name)))
        for f in dataclasses.fields(contact)
        if f.name not in bodies and f.name not in values and f.name not in _FREE
    )
    return type(contact), bodies, ground, tuple(sorted(values.items())), fixed


def _reader(field: str, index: int | None):
    """A value spec reading member ``field`` (its component ``index``) from the group's arrays."""
    if index is None:
        return lambda p: p[_KEY][field]
    return lambda p: p[_KEY][field][..., index]


@dataclasses.dataclass(frozen=True, eq=False)
class _Group:
    """Members of one identity: the template and, per member, its bodies (global) and its values' specs."""

    template: Contact
    bodies: tuple  # (members, local bodies) of Body
    varying: dict  # field -> (length or None, one spec per member)

    @classmethod
    def of(cls, members: list[Contact]) -> _Group:
        first = members[0]
        body_fields = _body_fields(first)
        held = [f for f in body_fields if not (getattr(first, f) is None or getattr(first, f).is_ground)]
        varying = {
            f: (length, [getattr(c, f) for c in members])
            for f, length in _value_fields(first).items()
            if any(_static(getattr(c, f)) != _static(getattr(first, f)) for c in members)
        }
        local = {f: Body(f"{first.name} {f}", k) for k, f in enumerate(held)}
        readers = {
            f: _reader(f, None) if length is None else tuple(_reader(f, i) for i in range(length))
            for f, (length, _) in varying.items()
        }
        template = dataclasses.replace(first, **local, **readers)
        return cls(template, tuple(tuple(getattr(c, f) for f in held) for c in members), varying)

    def _local(self, x, width: int):
        """Per local body, the members' slices of x (7 coordinates or 6 velocities a body), each (members, width).

        A strided slice where the members' bodies are evenly spaced (a column's neighbours), else a gather; the
        local state is joined inside the ``vmap``, where the template's slices of it read these arrays directly
        (a joined copy of the Jacobian's tangents, made outside, would cost more than the geometry)."""
        rows = x.reshape(-1, width)
        out = []
        for k in range(len(self.bodies[0])):
            idx = np.asarray([bodies[k].index for bodies in self.bodies])
            step = idx[1] - idx[0] if idx.size > 1 else 1
            if step > 0 and np.array_equal(idx, idx[0] + step * np.arange(idx.size)):
                out.append(rows[idx[0] : idx[-1] + 1 : step])
            else:
                out.append(rows[idx])
        return tuple(out)

    def _values(self, p, dtype):
        """field -> the members' resolved values, (members,) or (members, length)."""
        out = {}
        for f, (length, specs) in self.varying.items():
            where = f"contact {self.template.name!r} {f}"
            if length is None:
                vals = [Value(s, where)(p) for s in specs]
            else:
                vals = [jnp.stack([jnp.asarray(Value(c, where)(p), dtype) for c in s]) for s in specs]
            out[f] = jnp.stack([jnp.asarray(v, jnp.result_type(dtype, v)) for v in vals])
        return out

    def gaps(self, q, p):
        """The members' gaps, (members · size,)."""
        run = lambda ql, vals: self.template.gaps(jnp.concatenate(ql), {**p, _KEY: vals})  # noqa: E731
        return jax.vmap(run)(self._local(q, 7), self._values(p, q.dtype)).reshape(-1)

    def slips(self, q, u, p):
        """The members' slip velocities, (members · size, 2)."""

        def run(ql, ul, vals):
            return self.template.slips(jnp.concatenate(ql), jnp.concatenate(ul), {**p, _KEY: vals})

        return jax.vmap(run)(self._local(q, 7), self._local(u, 6), self._values(p, q.dtype)).reshape(-1, 2)


@dataclasses.dataclass(frozen=True, eq=False)
class ContactGroups:
    """An assembly's contacts (in its order) in groups of alike members; :meth:`gaps` and :meth:`slips` give what
    the contacts give one by one, concatenated in that order."""

    parts: tuple  # a Contact (alone) or a _Group, in the order of their first members
    order: np.ndarray | None  # the assembly's rows from the parts' rows (None: the same order)

    @classmethod
    def of(cls, contacts) -> ContactGroups:
        """The groups of ``contacts`` (a sequence of :class:`Contact`)."""
        groups: dict = {}
        for i, c in enumerate(contacts):
            groups.setdefault(_identity(c), []).append(i)
        if all(len(members) < bodies.VMAP_FROM for members in groups.values()):
            return cls(tuple(contacts), None)
        parts, rows = [], []
        starts = np.cumsum([0] + [c.size for c in contacts])
        for members in groups.values():
            cs = [contacts[i] for i in members]
            if len(cs) >= bodies.VMAP_FROM:
                parts.append(_Group.of(cs))
            else:
                parts += cs
            rows += [np.arange(starts[i], starts[i + 1]) for i in members]
        taken = np.concatenate(rows)  # some group is large enough: not empty
        order = None if np.array_equal(taken, np.arange(taken.size)) else np.argsort(taken)
        return cls(tuple(parts), order)

    def _ordered(self, parts):
        x = jnp.concatenate(parts)
        return x if self.order is None else x[self.order]

    def gaps(self, q, p):
        """Gaps of every contact point (k,)."""
        return self._ordered([c.gaps(q, p) for c in self.parts])

    def slips(self, q, u, p):
        """Slip velocities (k, 2) along each contact's tangent pair."""
        return self._ordered([c.slips(q, u, p) for c in self.parts])
