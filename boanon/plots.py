"""Figures of a run for people (matplotlib, Agg backend: no display needed).

They draw the plain data of :mod:`boanon.report`; the Pareto front lives with the other
multi-objective code (:func:`boanon.multiobjective.plot.plot_pareto`) and the graph with its
Graphviz rendering (:mod:`boanon.graph_render`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from boanon import units  # noqa: E402
from boanon.objectives import Objective  # noqa: E402

STATUS_STYLE = {"done": ("o", "tab:blue"), "stopped": ("v", "tab:orange")}
UNMEASURED_STYLE = {"failed": "tab:red", "interrupted": "tab:gray"}
"""Trials without a value: a dotted vertical line at their number, never a point at some height."""


def plot_convergence(history: pd.DataFrame, objectives: Sequence[Objective], path: str | Path,
                     default: dict[str, float] | None = None, title: str = "",
                     hypervolume: pd.DataFrame | None = None, default_feasible: bool = True) -> Path:
    """Each trial's objective value and the best so far against the trial number, one panel per
    objective; the default configuration's value (``default[name]``) is a dashed line; failed
    (and interrupted) trials, which have no value, are dotted vertical lines at their number (a
    cross at the panel's bottom read as the lowest value). A default that breaks an output constraint
    (``default_feasible`` False) says so: it is no alternative to deploy. ``hypervolume`` (of
    :func:`boanon.report.hypervolume_history`) adds a panel of the front's hypervolume."""
    panels = len(objectives) + (hypervolume is not None)
    fig, axes = plt.subplots(panels, 1, figsize=(7, 3.2 * panels), squeeze=False, sharex=True)
    x = history["id"].to_numpy()  # the number in the trial's name: t0000 is 0
    if hypervolume is not None:
        ax = axes[-1, 0]
        at = x[history["trial"].isin(hypervolume["trial"]).to_numpy()]
        ax.step(at, hypervolume["hypervolume"].to_numpy(), where="post", c="k", lw=1.5)
        ref = ", ".join(f"{k}={v:.4g}" for k, v in hypervolume.attrs.get("reference_point", {}).items())
        ax.set_ylabel("hypervolume")
        ax.set_title(f"hypervolume of the feasible front, reference point {ref}\n"
                     f"({hypervolume.attrs.get('reference', '')})", fontsize=8)
        ax.grid(alpha=0.3)
    for ax, o in zip(axes[:, 0], objectives, strict=False):
        y = history[o.name].to_numpy(dtype=float)
        for status, (marker, colour) in STATUS_STYLE.items():
            rows = (history["status"] == status).to_numpy()
            if not rows.any():
                continue
            infeasible = rows & ~history["feasible"].to_numpy(dtype=bool) & (status == "done")
            ax.scatter(x[rows & ~infeasible], y[rows & ~infeasible], marker=marker, c=colour, s=18,
                       alpha=0.7, label=f"trial ({status})" if status != "done" else "trial")
            if infeasible.any():
                ax.scatter(x[infeasible], y[infeasible], marker="o", facecolors="none",
                           edgecolors="0.5", s=18, label="infeasible")
        for status, colour in UNMEASURED_STYLE.items():
            for i, at in enumerate(x[(history["status"] == status).to_numpy()]):
                ax.axvline(at, c=colour, ls=":", lw=1.2, label=f"{status} (no value)" if i == 0 else None)
        ax.step(x, history[f"best_{o.name}"].to_numpy(dtype=float), where="post", c="k", lw=1.5,
                label="best so far")
        if default and np.isfinite(default.get(o.name, np.nan)):
            ax.axhline(default[o.name], ls="--", c="tab:green", lw=1.2,
                       label=f"default ({default[o.name]:.4g}{'' if default_feasible else ', infeasible'})")
        ax.set_ylabel(f"{units.objective_label(o)}, {'lower' if o.direction == 'minimize' else 'higher'} "
                      "is better")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("trial (t0000 = 0)")
    axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0, 0].set_title(title or f"convergence over {units.count(len(history), 'trial')}")
    return _save(fig, path)


def plot_effects(effects: pd.DataFrame, sizes: pd.DataFrame, objective: Objective, path: str | Path,
                 at: dict[str, object] | None = None, top: int = 12, title: str = "",
                 unit_of: Mapping[str, str] | None = None) -> Path:
    """The model's mean (and one standard deviation) of ``objective`` as each of the ``top``
    parameters with the largest effect is swept while the others stay put; the value they stay
    at (``at``) is marked; with a ``via`` column (the graph's metrics between the parameter and
    the objective), each panel names the first of them. ``unit_of`` gives the parameters' units
    (declared in the space; the name's ending otherwise)."""
    rows_of = sizes[sizes["objective"] == objective.name].head(top)
    names = rows_of["param"].tolist()
    via = dict(zip(names, rows_of["via"], strict=True)) if "via" in rows_of else {}
    if not names:
        raise ValueError(f"no effects computed for objective {objective.name!r}")
    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    # each panel its own y range: a shared one flattens every panel but the strongest
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.6 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        part = effects[(effects["param"] == name) & (effects["objective"] == objective.name)]
        values, mean, sd = part["value"].tolist(), part["mean"].to_numpy(), part["sd"].to_numpy()
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        xs = np.asarray(values, dtype=float) if numeric else np.arange(len(values))
        ax.plot(xs, mean, c="tab:blue", marker="" if numeric else "o")
        ax.fill_between(xs, mean - sd, mean + sd, alpha=0.2, color="tab:blue")
        if not numeric:
            ax.set_xticks(xs, [str(v) for v in values], rotation=30, fontsize=8)
        elif len(xs) > 2 and xs.min() > 0 and xs.max() / xs.min() > 50:
            ax.set_xscale("log")
        if at is not None and name in at:
            v = at[name]
            ax.axvline(float(v) if numeric else values.index(v), c="k", ls=":", lw=1)
        metrics = via.get(name, "").split(", ") if via.get(name) else []
        more = f" +{len(metrics) - 1}" if len(metrics) > 1 else ""
        unit = units.of(name, (unit_of or {}).get(name)) if numeric else None  # a switch holds no bytes
        ax.set_title(units.label(name, unit)
                     + (f"\nvia {metrics[0]}{more}" if metrics else ""), fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(units.objective_label(objective))
    fig.suptitle(title or f"what the model says each parameter does to {objective.name}: mean and "
                 "± 1 sd band, others fixed at the dotted line (each panel its own scale)", fontsize=10)
    return _save(fig, path)


def _save(fig: plt.Figure, path: str | Path) -> Path:
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
