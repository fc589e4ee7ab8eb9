"""Maximising an acquisition function over the mixed search space.

No analytic gradients: configurations mix integers, categoricals and booleans, and the
structured model is sampled, not differentiated. Instead: a scrambled Sobol design plus the best
observed configurations (or, in a run's early phase, a trust region: many configurations that
change a few parameters of the best observed ones, where a model fitted to few trials is
trustworthy), then rounds of local search (:meth:`Space.neighbours`) around the best
candidates with a shrinking step, then a finite-difference ascent that moves every continuous
parameter of the incumbent and of the best candidates at once (the score is a deterministic
function of the configuration: shared draws), then, when the graph separates the parameters
into independent groups, block-coordinate rounds that search one group at a time (BOAT's
decomposition). Candidates are screened with few Monte-Carlo samples and the finalists
re-scored with many, so sampling noise does not pick the winner."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from boanon.space import Float, Space
from boanon.ties import better, first_best, stable_order

Score = Callable[[list[dict[str, Any]], int], np.ndarray]


def config_key(config: dict[str, Any]) -> str:
    """A hashable identity of a configuration (values as JSON, names sorted)."""
    return json.dumps({k: (v.item() if isinstance(v, np.generic) else v) for k, v in config.items()},
                      sort_keys=True)


@dataclass
class SearchSettings:
    """How hard to search; the defaults keep one proposal under about a second at 100 trials."""

    n_sobol: int = 256
    n_local: int = 48
    local_rounds: int = 3
    top: int = 6
    group_rounds: int = 1
    screen_samples: int = 8
    final_samples: int = 64
    n_final: int = 8
    trust_region: float | None = None
    """Early phase: no global design; the search starts from changes of up to ``trust_changes``
    parameters of the starts, with this step (unit scale), and its local rounds go on from there
    (so a proposal can differ from its start in a few more)."""
    trust_changes: int = 4
    hold_switches: bool = False
    """In the trust region, keep the starts' booleans and categoricals (only numbers move): set
    when the run's own flips have stopped paying (:mod:`boanon.acquisition.switch_record`)."""
    gradient_starts: int = 2
    """Candidates refined by finite-difference ascent over the continuous parameters, after the
    first start (the incumbent: where a model fitted to few trials is most trustworthy)."""
    gradient_steps: int = 6
    """Gradient steps per ascent, each with its line search (0: no ascent)."""


@dataclass
class _Pool:
    """Every scored candidate, keyed by configuration; observed and pending ones are excluded."""

    space: Space
    score: Score
    samples: int
    exclude: set[str]
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)

    def add(self, candidates: Sequence[dict[str, Any]]) -> None:
        new: dict[str, dict[str, Any]] = {}
        for c in candidates:
            k = config_key(c)
            if k not in self.values and k not in self.exclude and k not in new \
                    and self.space.is_feasible(c):
                new[k] = {n: c[n] for n in self.space.names}
        if new:
            scores = self.score(list(new.values()), self.samples)
            self.configs.update(new)
            self.values.update(zip(new, map(float, scores), strict=True))

    def scores(self, candidates: Sequence[dict[str, Any]]) -> np.ndarray:
        """Each candidate's score, scoring the new ones (-inf: excluded or infeasible)."""
        self.add(candidates)
        return np.array([self.values.get(config_key(c), -np.inf) for c in candidates])

    def best(self, k: int) -> list[dict[str, Any]]:
        keys = list(self.values)
        order = stable_order(-np.array([self.values[key] for key in keys]))[:k]  # ties: the first scored
        return [self.configs[keys[i]] for i in order]


def _ascend(pool: _Pool, start: dict[str, Any], steps: int, max_step: float, h: float = 1e-3) -> None:
    """Move every continuous parameter of ``start`` at once along the score's finite-difference
    gradient, with a line search, adding what it visits to ``pool``: in many dimensions the best
    nearby configuration changes all of them a little, which random moves of a few rarely find
    (in 40 dimensions Optuna's gradient-based search found such steps where ours did not)."""
    names = [n for n, p in pool.space.params.items() if type(p) is Float]  # not Int: a step rounds away
    if not names:
        return
    params = [pool.space.params[n] for n in names]

    def at(u: np.ndarray) -> dict[str, Any]:
        return {**start, **{n: p.from_unit(float(x)) for n, p, x in zip(names, params, u, strict=True)}}

    u = np.array([p.to_unit(start[n]) for n, p in zip(names, params, strict=True)])
    here = pool.scores([start])[0]
    if not np.isfinite(here):  # an observed start: scored, not proposed
        here = float(pool.score([start], pool.samples)[0])
    for _ in range(steps if np.isfinite(here) else 0):
        delta = np.where(u + h <= 1.0, h, -h)
        probes = [at(np.where(np.arange(len(u)) == i, u + delta, u)) for i in range(len(u))]
        gradient = np.nan_to_num((pool.scores(probes) - here) / delta, posinf=0.0, neginf=0.0)
        if not np.any(gradient):
            return
        moves = [np.clip(u + step * gradient / np.max(np.abs(gradient)), 0.0, 1.0)
                 for step in max_step * 0.5 ** np.arange(6)]
        values = pool.scores([at(m) for m in moves])
        best = first_best(values)
        if not better(values[best], here):
            return
        u, here = moves[best], values[best]


class SpaceExhausted(ValueError):
    """Every candidate configuration was excluded (already run or running)."""


def maximize(space: Space, score: Score, rng: np.random.Generator, starts: Sequence[dict[str, Any]] = (),
             groups: Sequence[Sequence[str]] = (), exclude: Sequence[dict[str, Any]] = (),
             settings: SearchSettings | None = None) -> tuple[dict[str, Any], float, dict[str, Any]]:
    """The best configuration found, its score (with ``final_samples``), and search statistics.

    ``score(configs, n_samples)`` returns one value per configuration, higher is better;
    ``starts`` seed the local search (e.g. the best observed configurations); ``exclude``
    are never proposed (configurations already run or running).
    """
    s = settings or SearchSettings()
    pool = _Pool(space, score, s.screen_samples, {config_key(dict(c)) for c in exclude})
    # a boolean or a categorical cannot move a little (a flip is the whole range): held, only
    # the numbers move and the starts' switch values stay (a space of switches alone moves them)
    movable = (space.numeric_names or None) if s.trust_region is not None and s.hold_switches else None
    if s.trust_region is None:
        pool.add(space.sample(s.n_sobol, rng) + [dict(c) for c in starts])
    else:
        pool.add([dict(c) for c in starts])
        for c in starts:
            pool.add(space.neighbours(dict(c), s.n_sobol // max(len(starts), 1), rng, scale=s.trust_region,
                                      names=movable, max_changes=s.trust_changes))
    for c in starts:
        pool.add(space.neighbours(dict(c), s.n_local // max(len(starts), 1) + 1, rng, scale=0.1,
                                  names=movable))
    for r in range(s.local_rounds):
        for c in pool.best(s.top):
            pool.add(space.neighbours(c, max(s.n_local // s.top, 1), rng, scale=0.15 * 0.5**r, names=movable))
    ascents = {config_key(c): dict(c) for c in [*starts[:1], *pool.best(s.gradient_starts)]}
    for c in ascents.values():  # once each: the incumbent can also be among the best candidates
        _ascend(pool, c, s.gradient_steps, s.trust_region or 0.3)
    if len(groups) > 1:
        for _ in range(s.group_rounds):
            for grp in groups:
                current = pool.best(1)[0]
                if s.trust_region is None:
                    fresh = space.sample(max(s.n_sobol // (2 * len(groups)), 8), rng)
                    pool.add([{**current, **{n: f[n] for n in grp}} for f in fresh])
                in_group = [n for n in grp if movable is None or n in movable]
                if in_group:
                    pool.add(space.neighbours(pool.best(1)[0], s.n_local // 2, rng, scale=0.05,
                                              names=in_group))
    if not pool.values:
        raise SpaceExhausted("no feasible configuration left to propose: every candidate was excluded")
    finalists = pool.best(s.n_final)
    final = np.asarray(score(finalists, s.final_samples), dtype=float)
    i = first_best(final)
    info = {"n_scored": len(pool.values), "n_groups": len(groups) if len(groups) > 1 else 1,
            "screen_best": max(pool.values.values())}
    return finalists[i], float(final[i]), info
