"""Built-in models, looked up by name (``jaxcontact simulate <name>``).

Each model module defines ``model(**overrides) -> Model``. Parameters are
named array leaves of ``Model.params`` (a flat dict), so any of them can be
overridden by name or batched for a study; ``initial_state(params)`` derives
the initial (q, u) from the parameters (a longer bar moves its joints).

Everything a model knows about itself is declared in its own file and carried
by its :class:`Model`: its parameters' units, rules and bounds (``table``, a
:class:`jaxcontact.params.ParamTable`), its default Monte Carlo study
(``study``, a :class:`DefaultStudy`) and its variants by contact kind
(``variants``). Adding a built-in model is its file plus one line in
:data:`REGISTRY`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from jaxcontact.params import ParamTable
from jaxcontact.system import LagrangianSystem

# name -> module under jaxcontact.models, whose ``model`` builds it (``module:function``: that function)
REGISTRY: dict[str, str] = {
    "bouncing-ball": "bouncing_ball",
    "sliding-block": "sliding_block",
    "four-bar": "four_bar",
    "rocking-block": "rocking_block",
    "slider-bar": "slider_bar",
    "slider-crank-clearance": "slider_crank",
    "slider-crank-lubricated": "slider_crank:lubricated",
    "flexible-slider-crank": "flexible_slider_crank",
    "flexible-slider-crank-lubricated": "flexible_slider_crank:lubricated",
    "flexible-arm-6": "flexible_arm:arm6",
    "flexible-arm-60": "flexible_arm:arm60",
    "flexible-arm-6-ideal": "flexible_arm:ideal6",
    "flexible-arm-6-lubricated": "flexible_arm:lubricated6",
    "pushed-block": "pushed_block",
    "sphere-on-plane": "sphere_on_plane",
    "box-toss": "box_toss",
    "tippe-top": "tippe_top",
    "newton-cradle": "newton_cradle",
    "spatial-slider-crank": "spatial_slider_crank",
}


class DefaultStudy(NamedTuple):
    """A model's default Monte Carlo study: what ``jaxcontact mc MODEL`` runs with no options.

    params: uncertain parameters as ``name=dist(args)`` texts; outcomes: outcome names; n: simulations;
    dt, t_final, save_every: the time grid and series thinning (None: the model's, or the study's default);
    scheme: the registered scheme name run by default, with ``scheme_options`` (keyword options of it).
    overrides: fixed parameter values the study runs at (name -> value, as ``--set``; a user's ``--set`` of
      the same name wins, and a ``--param`` of it makes it uncertain instead).
    """

    params: tuple[str, ...]
    outcomes: tuple[str, ...] = ("peak_impulse", "impacts", "rest_time")
    n: int = 1024
    dt: float | None = None
    t_final: float | None = None
    save_every: int | None = None
    scheme: str = "moreau-jean"
    scheme_options: Mapping = {}
    overrides: Mapping = {}


class Model(NamedTuple):
    """A ready-to-simulate model.

    name: its name; system: the LagrangianSystem; params: dict name -> float array leaf;
    initial_state: ``params -> (q0, u0)``; dt, t_final: the default time grid;
    description: one paragraph for ``--help`` and summaries.
    derive: None, or ``params -> params`` (pure jnp) recomputing the parameters that follow
      from others (a contact stiffness from the clearance): a study applies it to every
      sample after setting the sampled values, as building the model does.
    observables: None, or name -> ``fn(q, params)`` scalar quantities beside the
      coordinates (a journal's eccentricity), usable in outcomes (``series:<name>``, ``max:<name>``…).
    picture: None, or ``(trajectory, params, path) -> path`` drawing the model's own figure
      (spatial models: 3D snapshots), written by ``jaxcontact simulate`` beside the plots.
    view: None, or ``(trajectory, params, path) -> path`` writing a page that plays the motion (spatial
      models: :func:`jaxcontact.spatial.view.write_html`), written by ``jaxcontact simulate`` as view.html.
    animation: None, or ``(trajectory, params, path) -> path`` writing an animated GIF of the motion (spatial
      models: :func:`jaxcontact.spatial.view.write_gif`), written by ``jaxcontact simulate --gif`` as motion.gif.
    resting_projection: False when resting contacts must not be projected onto their surfaces after a
      step (a light body spinning fast in persistent contact, the tippe top: the mass-metric correction
      turns it instead of lifting it); identification's default then projects the joints only.
    table: the parameters' :class:`jaxcontact.params.ParamTable` (units, rules, bounds); None: the
      conventions by name (:attr:`param_table`).
    study: None, or the model's :class:`DefaultStudy` (without one, ``mc`` needs ``--param``).
    variants: contact kind ("rigid", "compliant") -> keyword options of ``build`` giving the model with
      contacts of that kind; a study runs the variant its scheme treats.
    build: ``(**options_and_overrides) -> Model``, the function that built this model (set by
      :func:`get_model`): a study rebuilds through it with its overrides and sampled values.
    source: the name the model was resolved from (a registry name or ``FILE.py:FUNCTION``; set by
      :func:`get_model`): a study is known by it.
    references: name -> ``(**overrides) -> Model``: the models its path outcomes
      (``path_rms:…@name``) compare with (the flexible arm: its ideal-joint arm).
    """

    name: str
    system: LagrangianSystem
    params: dict
    initial_state: Callable[[dict], tuple[Any, Any]]
    dt: float
    t_final: float
    description: str
    derive: Callable[[dict], dict] | None = None
    observables: dict | None = None
    picture: Callable | None = None
    view: Callable | None = None
    animation: Callable | None = None
    resting_projection: bool = True
    table: ParamTable | None = None
    study: DefaultStudy | None = None
    variants: Mapping[str, Mapping] = {}
    build: Callable[..., Model] | None = None
    source: str | None = None
    references: Mapping[str, Callable[..., Model]] = {}

    @property
    def param_table(self) -> ParamTable:
        """The declared table, or one from ``params`` with the conventional units and bounds of their names."""
        return self.table if self.table is not None else ParamTable.of(self.params)

    @property
    def label(self) -> str:
        """How the model is named in a study's identity, titles and messages: its source, else its name."""
        return self.source or self.name


def apply_overrides(defaults: dict, overrides: dict, rules: dict | None = None) -> dict:
    """Defaults with named overrides applied; unknown names and broken rules raise ValueError.

    ``rules`` maps a name to ``(predicate, text)``; e.g. ``{"mass": (lambda v: v > 0, "> 0")}``.
    The same as ``ParamTable.of(defaults, rules).apply(overrides)``.
    """
    return ParamTable.of(defaults, rules).apply(overrides)


def is_user_model(name: str) -> bool:
    """``name`` names a user model file, ``path/to/file.py:function``."""
    path, colon, fn = name.rpartition(":")
    return bool(colon and path.endswith(".py") and fn)


def get_model(name: str, **overrides) -> Model:
    """Build the model ``name`` with parameter overrides by name.

    ``name`` is a built-in model (``REGISTRY``), a user file ``path/to/file.py:function``
    (``function(**overrides)`` must return a :class:`Model`, see ``examples/user_model.py``), or an MJCF/URDF
    file (:mod:`jaxcontact.io.mjcf`).
    The model comes back with ``build`` (its builder, to rebuild it with other overrides) and
    ``source`` (``name``) set.
    """
    return builder(name)(**overrides)


def builder(name: str) -> Callable[..., Model]:
    """The function ``(**overrides) -> Model`` building the model ``name`` (ValueError for an unknown one)."""
    from jaxcontact.io import mjcf  # here: it builds Models

    if is_user_model(name):
        path, _, fn = name.rpartition(":")
        built = getattr(_user_module(path), fn, None)
        if not callable(built):
            raise ValueError(f"model {name!r}: {path} defines no function {fn!r}")

        def make(**overrides):
            try:
                inspect.signature(built).bind(**overrides)
            except TypeError as e:
                raise ValueError(
                    f"model {name!r}: {fn} cannot be called with the parameters {sorted(overrides)}: {e}"
                ) from None
            model = built(**overrides)
            if not isinstance(model, Model):
                raise ValueError(
                    f"model {name!r}: {fn}(...) must return a jaxcontact.models.Model; got {type(model).__name__}"
                )
            return model

    elif name in REGISTRY:
        module, _, function = REGISTRY[name].partition(":")
        make = getattr(importlib.import_module(f"jaxcontact.models.{module}"), function or "model")
    elif mjcf.is_model_file(name):
        make = mjcf.builder(name)
    else:
        raise ValueError(
            f"unknown model {name!r}; built-in models: {sorted(REGISTRY)}, a user model FILE.py:FUNCTION, "
            "or an MJCF/URDF file (.xml, .urdf)"
        )

    def build(**overrides) -> Model:
        return make(**overrides)._replace(build=build, source=name)

    return build


_USER_MODULES: dict = {}


def user_model_error(e: BaseException) -> str | None:
    """``error in user model FILE:LINE: Type: message`` for an exception raised in a loaded user model
    file (the last frame of its traceback inside one, or a syntax error in one); None for any other.

    The user's line is what they can fix; the frames of jaxcontact and JAX around it are noise to them.
    """
    import os
    import traceback

    files = {full for full, _ in _USER_MODULES} | {getattr(e, "jaxcontact_user_file", None)}
    where = None
    if isinstance(e, SyntaxError) and e.filename and os.path.abspath(e.filename) in files:
        where = (e.filename, e.lineno)
    for frame in traceback.extract_tb(e.__traceback__):
        if os.path.abspath(frame.filename) in files:
            where = (frame.filename, frame.lineno)
    if where is None:
        return None
    message = e.msg if isinstance(e, SyntaxError) else str(e)
    shown = os.path.relpath(where[0])
    shown = where[0] if shown.startswith("..") else shown  # a file outside the working folder: its full path
    return f"error in user model {shown}:{where[1]}: {type(e).__name__}: {message}"


def _user_module(path: str):
    """The module of a user model file, loaded once per :func:`jaxcontact.io.model_file_key` (its path and the
    digest of its contents): a model built twice from it shares its system object, so compiled programs are reused."""
    import importlib.util

    from jaxcontact.io import model_file_key

    key = model_file_key(path)
    full = key[0]
    if key not in _USER_MODULES:
        spec = importlib.util.spec_from_file_location(f"jaxcontact_user_model_{len(_USER_MODULES)}", full)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            # A file that fails to load is not in _USER_MODULES: the exception names it to user_model_error.
            e.jaxcontact_user_file = full
            raise
        _USER_MODULES[key] = module
    return _USER_MODULES[key]
