"""Parameter distributions over named leaves of a model's flat parameter dict.

A study varies some leaves of ``Model.params`` (name -> array) and keeps the
rest at the model's values. Each varied leaf gets one of

    uniform(a, b)                 a < b
    normal(mu, sigma)             sigma > 0
    truncnormal(mu, sigma, lo, hi)  sigma > 0, lo < hi (normal conditioned on [lo, hi])
    lognormal(mu, sigma)          sigma > 0 (log X ~ normal(mu, sigma))
    fixed(v)

written on the command line as ``restitution=uniform(0.6,0.95)``. Samplers
produce points of the unit cube; ``ppf`` (the inverse CDF, numpy/scipy,
outside jit) maps them to parameter values, so one code path serves plain
random, Latin hypercube and Sobol designs.

Physical ranges are checked on the distribution's *support*, before any
compute: a normal restitution (support ℝ) is refused because some samples
would leave [0, 1]; use truncnormal or uniform. A leaf that is an array gets
one scalar per sample broadcast over its shape (all entries move together).

Two further kinds of input are *not* probability laws and have no ``ppf``:

    interval(lo, hi)              lo < hi: only known to lie in [lo, hi]
    triangular(lo, mode, hi)      lo ≤ mode ≤ hi, lo < hi: a fuzzy number (triangular membership)

They are parsed by the same ``parse_distribution`` and checked on their support the same way, but only
the bounding methods take them (``jaxcontact mc --method interval | fuzzy``,
:mod:`jaxcontact.studies.interval_study`); a sampling method refuses them by name
(:meth:`ParamSpace.check_probabilistic`), and the bounding methods refuse probability laws
(:meth:`ParamSpace.check_possibilistic`): a uniform law and an interval are different statements about
what is known.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping

import numpy as np
from scipy import special

from jaxcontact.params import conventional_bounds

INF = math.inf


def _finite(name: str, **values) -> None:
    for k, v in values.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise ValueError(f"{name}: {k} = {v!r} must be a finite number")


def _fmt(x: float) -> str:
    return repr(float(x))


@dataclasses.dataclass(frozen=True)
class Uniform:
    """Uniform on [a, b] (a < b)."""

    a: float
    b: float

    def __post_init__(self):
        _finite("uniform(a, b)", a=self.a, b=self.b)
        if not self.b > self.a:
            raise ValueError(f"uniform(a, b) needs b > a; got a = {self.a}, b = {self.b}")

    def ppf(self, u):
        """Inverse CDF: unit-cube values u ∈ (0, 1) → parameter values."""
        return self.a + (self.b - self.a) * np.asarray(u, float)

    def cdf(self, x):
        """Cumulative distribution function at x."""
        return np.clip((np.asarray(x, float) - self.a) / (self.b - self.a), 0.0, 1.0)

    @property
    def support(self):
        return (float(self.a), float(self.b))

    @property
    def mean(self):
        return 0.5 * (self.a + self.b)

    @property
    def var(self):
        return (self.b - self.a) ** 2 / 12.0

    def __str__(self):
        return f"uniform({_fmt(self.a)}, {_fmt(self.b)})"


@dataclasses.dataclass(frozen=True)
class Normal:
    """Normal with mean mu and standard deviation sigma > 0 (support: all reals)."""

    mu: float
    sigma: float

    def __post_init__(self):
        _finite("normal(mu, sigma)", mu=self.mu, sigma=self.sigma)
        if not self.sigma > 0:
            raise ValueError(f"normal(mu, sigma) needs sigma > 0; got sigma = {self.sigma}")

    def ppf(self, u):
        """Inverse CDF: unit-cube values u ∈ (0, 1) → parameter values."""
        return self.mu + self.sigma * special.ndtri(np.asarray(u, float))

    def cdf(self, x):
        """Cumulative distribution function at x."""
        return special.ndtr((np.asarray(x, float) - self.mu) / self.sigma)

    @property
    def support(self):
        return (-INF, INF)

    @property
    def mean(self):
        return float(self.mu)

    @property
    def var(self):
        return float(self.sigma) ** 2

    def __str__(self):
        return f"normal({_fmt(self.mu)}, {_fmt(self.sigma)})"


@dataclasses.dataclass(frozen=True)
class TruncNormal:
    """Normal(mu, sigma) conditioned on [lo, hi] (sigma > 0, lo < hi)."""

    mu: float
    sigma: float
    lo: float
    hi: float

    def __post_init__(self):
        _finite("truncnormal(mu, sigma, lo, hi)", mu=self.mu, sigma=self.sigma, lo=self.lo, hi=self.hi)
        if not self.sigma > 0:
            raise ValueError(f"truncnormal(mu, sigma, lo, hi) needs sigma > 0; got sigma = {self.sigma}")
        if not self.hi > self.lo:
            raise ValueError(f"truncnormal(mu, sigma, lo, hi) needs hi > lo; got lo = {self.lo}, hi = {self.hi}")

    @property
    def _scipy(self):
        from scipy import stats  # imported here: scipy.stats costs a second of start-up to every command

        a, b = (self.lo - self.mu) / self.sigma, (self.hi - self.mu) / self.sigma
        return stats.truncnorm(a, b, loc=self.mu, scale=self.sigma)

    def ppf(self, u):
        """Inverse CDF: unit-cube values u ∈ (0, 1) → parameter values."""
        # scipy's truncnorm.ppf is accurate in both tails (it works on the far side's log CDF).
        return np.clip(self._scipy.ppf(np.asarray(u, float)), self.lo, self.hi)

    def cdf(self, x):
        """Cumulative distribution function at x."""
        return self._scipy.cdf(np.asarray(x, float))

    @property
    def support(self):
        return (float(self.lo), float(self.hi))

    @property
    def mean(self):
        return float(self._scipy.mean())

    @property
    def var(self):
        return float(self._scipy.var())

    def __str__(self):
        return f"truncnormal({_fmt(self.mu)}, {_fmt(self.sigma)}, {_fmt(self.lo)}, {_fmt(self.hi)})"


@dataclasses.dataclass(frozen=True)
class LogNormal:
    """exp(N(mu, sigma)): mu and sigma are those of log X (sigma > 0); support (0, ∞)."""

    mu: float
    sigma: float

    def __post_init__(self):
        _finite("lognormal(mu, sigma)", mu=self.mu, sigma=self.sigma)
        if not self.sigma > 0:
            raise ValueError(f"lognormal(mu, sigma) needs sigma > 0; got sigma = {self.sigma}")

    def ppf(self, u):
        """Inverse CDF: unit-cube values u ∈ (0, 1) → parameter values."""
        return np.exp(self.mu + self.sigma * special.ndtri(np.asarray(u, float)))

    def cdf(self, x):
        """Cumulative distribution function at x."""
        x = np.asarray(x, float)
        with np.errstate(divide="ignore"):
            return np.where(x > 0, special.ndtr((np.log(np.where(x > 0, x, 1.0)) - self.mu) / self.sigma), 0.0)

    @property
    def support(self):
        return (0.0, INF)

    @property
    def mean(self):
        return math.exp(self.mu + 0.5 * self.sigma**2)

    @property
    def var(self):
        return (math.exp(self.sigma**2) - 1.0) * math.exp(2 * self.mu + self.sigma**2)

    def __str__(self):
        return f"lognormal({_fmt(self.mu)}, {_fmt(self.sigma)})"


@dataclasses.dataclass(frozen=True)
class Fixed:
    """A constant value (a parameter pinned for this study; it takes no sampling dimension)."""

    v: float

    def __post_init__(self):
        _finite("fixed(v)", v=self.v)

    def ppf(self, u):
        """Inverse CDF: unit-cube values u ∈ (0, 1) → parameter values."""
        return np.full(np.shape(u), float(self.v))

    def cdf(self, x):
        """Cumulative distribution function at x."""
        return (np.asarray(x, float) >= self.v).astype(float)

    @property
    def support(self):
        return (float(self.v), float(self.v))

    @property
    def mean(self):
        return float(self.v)

    @property
    def var(self):
        return 0.0

    def __str__(self):
        return f"fixed({_fmt(self.v)})"


@dataclasses.dataclass(frozen=True)
class Interval:
    """An input only known to lie in [lo, hi] (lo < hi): no probability law, bounded by interval methods."""

    lo: float
    hi: float

    def __post_init__(self):
        _finite("interval(lo, hi)", lo=self.lo, hi=self.hi)
        if not self.hi > self.lo:
            raise ValueError(f"interval(lo, hi) needs hi > lo; got lo = {self.lo}, hi = {self.hi}")

    @property
    def support(self):
        return (float(self.lo), float(self.hi))

    def __str__(self):
        return f"interval({_fmt(self.lo)}, {_fmt(self.hi)})"


@dataclasses.dataclass(frozen=True)
class Triangular:
    """A fuzzy number with triangular membership: 0 outside [lo, hi], 1 at mode, linear in between.

    Its α-cut (the values of membership ≥ α) is [lo + α (mode − lo), hi − α (hi − mode)]: the support
    at α = 0, the single value mode at α = 1. Not a probability law (no ppf): bounded by α-cuts.
    """

    lo: float
    mode: float
    hi: float

    def __post_init__(self):
        _finite("triangular(lo, mode, hi)", lo=self.lo, mode=self.mode, hi=self.hi)
        if not self.hi > self.lo:
            raise ValueError(f"triangular(lo, mode, hi) needs hi > lo; got lo = {self.lo}, hi = {self.hi}")
        if not self.lo <= self.mode <= self.hi:
            raise ValueError(
                f"triangular(lo, mode, hi) needs lo ≤ mode ≤ hi; got lo = {self.lo}, mode = {self.mode}, hi = {self.hi}"
            )

    def cut(self, alpha: float) -> tuple[float, float]:
        """The α-cut [a, b] (0 ≤ α ≤ 1): the values whose membership is at least α."""
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha = {alpha} must lie in [0, 1]")
        if alpha == 1.0:
            return (float(self.mode), float(self.mode))
        return (self.lo + alpha * (self.mode - self.lo), self.hi - alpha * (self.hi - self.mode))

    def membership(self, x):
        """Membership of x: 0 outside [lo, hi], 1 at mode, linear in between."""
        x = np.asarray(x, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(self.mode > self.lo, (x - self.lo) / (self.mode - self.lo), 1.0)
            down = np.where(self.hi > self.mode, (self.hi - x) / (self.hi - self.mode), 1.0)
        m = np.where(x <= self.mode, up, down)
        return np.where((x < self.lo) | (x > self.hi), 0.0, np.clip(m, 0.0, 1.0))

    @property
    def support(self):
        return (float(self.lo), float(self.hi))

    def __str__(self):
        return f"triangular({_fmt(self.lo)}, {_fmt(self.mode)}, {_fmt(self.hi)})"


Distribution = Uniform | Normal | TruncNormal | LogNormal | Fixed | Interval | Triangular
PROBABILISTIC = (Uniform, Normal, TruncNormal, LogNormal)
POSSIBILISTIC = (Interval, Triangular)

CONSTRUCTORS = {
    "uniform": Uniform,
    "normal": Normal,
    "truncnormal": TruncNormal,
    "lognormal": LogNormal,
    "fixed": Fixed,
    "interval": Interval,
    "triangular": Triangular,
}
_ARITY = {"uniform": 2, "normal": 2, "truncnormal": 4, "lognormal": 2, "fixed": 1, "interval": 2, "triangular": 3}
_SPEC = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*=\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")


def parse_distribution(text: str) -> tuple[str, Distribution]:
    """Parse ``name=dist(args)``, e.g. ``restitution=uniform(0.6,0.95)`` -> ("restitution", Uniform(0.6, 0.95))."""
    m = _SPEC.match(text)
    if not m:
        raise ValueError(
            f"cannot parse parameter distribution {text!r}; expected name=dist(args), e.g. "
            f"restitution=uniform(0.6,0.95); dists: " + ", ".join(f"{k}({_args_doc(k)})" for k in CONSTRUCTORS)
        )
    name, kind, args = m.group(1), m.group(2).lower(), m.group(3)
    if kind not in CONSTRUCTORS:
        raise ValueError(f"{text!r}: unknown distribution {kind!r}; known: {sorted(CONSTRUCTORS)}")
    parts = [s.strip() for s in args.split(",")] if args.strip() else []
    if len(parts) != _ARITY[kind]:
        raise ValueError(f"{text!r}: {kind} takes {_ARITY[kind]} argument(s) ({_args_doc(kind)}); got {len(parts)}")
    values = []
    for s in parts:
        try:
            values.append(float(s))
        except ValueError:
            raise ValueError(f"{text!r}: argument {s!r} of {kind} is not a number") from None
    try:
        return name, CONSTRUCTORS[kind](*values)
    except ValueError as e:
        raise ValueError(f"{text!r}: {e}") from None


def _args_doc(kind: str) -> str:
    return ", ".join(f.name for f in dataclasses.fields(CONSTRUCTORS[kind]))


@dataclasses.dataclass(frozen=True)
class ParamSpace:
    """An ordered set of named distributions (the uncertain inputs of a study).

    ``names`` / ``dists`` in a fixed order: column j of every design is ``names[j]``.
    ``uncertain`` lists the names whose distribution is not :class:`Fixed`
    (only those take a sampling dimension and a Sobol index).
    """

    names: tuple[str, ...]
    dists: tuple[Distribution, ...]

    def __post_init__(self):
        if len(self.names) != len(self.dists):
            raise ValueError("ParamSpace: names and dists differ in length")
        dup = sorted({n for n in self.names if self.names.count(n) > 1})
        if dup:
            raise ValueError(f"parameter(s) {dup} given more than once")

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Distribution]) -> ParamSpace:
        return cls(tuple(mapping), tuple(mapping.values()))

    @classmethod
    def parse(cls, texts) -> ParamSpace:
        pairs = [parse_distribution(t) for t in texts]
        return cls(tuple(n for n, _ in pairs), tuple(d for _, d in pairs))

    def updated(self, other: ParamSpace) -> ParamSpace:
        """This space with ``other``'s entries replacing or appended (CLI --param over defaults)."""
        d = dict(zip(self.names, self.dists))
        d.update(zip(other.names, other.dists))
        return ParamSpace.from_mapping(d)

    @property
    def uncertain(self) -> tuple[str, ...]:
        return tuple(n for n, d in zip(self.names, self.dists) if not isinstance(d, Fixed))

    def __getitem__(self, name):
        return self.dists[self.names.index(name)]

    def __len__(self):
        return len(self.names)

    def __str__(self):
        return ", ".join(f"{n}={d}" for n, d in zip(self.names, self.dists))

    def to_json(self) -> dict:
        """{name: distribution text} (the study's identity and summary.json)."""
        return {n: str(d) for n, d in zip(self.names, self.dists)}

    def check_probabilistic(self, method: str) -> None:
        """Refuse, by name, an interval or fuzzy input where ``method`` samples from probability laws."""
        for n, d in zip(self.names, self.dists):
            if isinstance(d, POSSIBILISTIC):
                kind = "an interval" if isinstance(d, Interval) else "a fuzzy number"
                other = "interval" if isinstance(d, Interval) else "fuzzy"
                raise ValueError(
                    f"{n}={d} is {kind}, not a probability law: {method} samples from uniform(a,b), normal(mu,sigma), "
                    f"truncnormal(mu,sigma,lo,hi) or lognormal(mu,sigma); bound it with --method {other}"
                )

    def check_possibilistic(self, method: str, kind: type) -> None:
        """Refuse, by name, every uncertain input of ``method`` that is not of ``kind`` (Interval or Triangular)."""
        spelling = "interval(lo,hi)" if kind is Interval else "triangular(lo,mode,hi)"
        for n, d in zip(self.names, self.dists):
            if isinstance(d, Fixed) or isinstance(d, kind):
                continue
            what = "a probability law" if isinstance(d, PROBABILISTIC) else f"not a {kind.__name__.lower()} input"
            raise ValueError(f"{n}={d} is {what}; {method} takes {spelling} (or fixed(v)) for {n}")

    def validate(self, valid_names, bounds=conventional_bounds) -> None:
        """Raise ValueError for an unknown name or a support outside the name's physical range.

        ``bounds``: name -> (lo, hi) or None (a model's ``ParamTable.bounds``; default the conventions by name).
        """
        valid = sorted(valid_names)
        unknown = [n for n in self.names if n not in valid]
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; valid names: {valid}")
        for n, d in zip(self.names, self.dists):
            rng = bounds(n)
            if rng is None:
                continue
            lo, hi = rng
            s_lo, s_hi = d.support
            if s_lo < lo or s_hi > hi:
                hint = (
                    " (use truncnormal(mu, sigma, lo, hi) or uniform(a, b) to stay inside)"
                    if isinstance(d, (Normal, LogNormal))
                    else ""
                )
                raise ValueError(
                    f"{n}={d} has support [{s_lo}, {s_hi}], outside the allowed range [{lo}, {hi}] of {n}{hint}"
                )

    def ppf(self, unit) -> dict[str, np.ndarray]:
        """Map unit-cube points (n, len(uncertain)) to values: name -> (n,) for every name.

        Column j of ``unit`` feeds ``uncertain[j]``; fixed names get their constant.
        """
        self.check_probabilistic("sampling")
        unit = np.asarray(unit, float)
        unc = self.uncertain
        if unit.ndim != 2 or unit.shape[1] != len(unc):
            raise ValueError(f"unit points must have shape (n, {len(unc)}); got {unit.shape}")
        out = {}
        for n, d in zip(self.names, self.dists):
            col = unit[:, unc.index(n)] if n in unc else np.zeros(unit.shape[0])
            out[n] = d.ppf(col)
        return out
