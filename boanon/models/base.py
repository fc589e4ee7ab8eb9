"""The surrogate protocol shared by the structured (DAG) model and the plain GP.

A surrogate is fitted on the tidy table of finished trials and answers one question: joint
Monte-Carlo samples of the objectives at given configurations. Everything else (predictive
mean and spread, cross-validation, acquisition) is computed from those samples, so both
surrogates are scored and optimised in exactly the same way.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.exceptions import NotFittedError

from boanon.objectives import Objective
from boanon.space import Space
from boanon.table import TRIAL, Role, column

Config = Mapping[str, Any]
F = TypeVar("F", bound=Callable[..., Any])


def _after_fit(method: F) -> F:
    """``method`` refusing an unfitted surrogate with sklearn's NotFittedError naming it (an
    AttributeError on ``models_`` said nothing of the missing ``fit``). ``table_`` is what
    every ``fit`` sets first."""
    @functools.wraps(method)
    def checked(self: Surrogate, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(self, "table_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(table) "
                                 f"before {method.__name__}()")
        return method(self, *args, **kwargs)
    return checked  # type: ignore[return-value]


class Surrogate(ABC):
    """``fit(table)`` then ``sample(configs, n_samples, rng)``. A subclass's
    :attr:`NEEDS_FIT` methods refuse to run before ``fit`` (:meth:`__init_subclass__`)."""

    NEEDS_FIT: tuple[str, ...] = ("sample", "refit", "describe")

    name: str = ""
    reference: bool = False
    """The model an alternative must clearly beat held out to be used (the plain GP):
    :func:`boanon.acquisition.selection.select_surrogate`."""
    table_: pd.DataFrame  # the trials of the last fit (or refit)

    def __init__(self, space: Space, objectives: Sequence[Objective], outputs: Sequence[str] = ()):
        if not objectives:
            raise ValueError("a surrogate needs at least one objective")
        self.space = space
        self.objectives = list(objectives)
        names = [o.name for o in self.objectives]
        self.outputs = names + [n for n in outputs if n not in names]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each :attr:`NEEDS_FIT` method the subclass defines the one fitted check, as
        sklearn's set_output wraps a subclass's ``transform``: no subclass writes its own."""
        super().__init_subclass__(**kwargs)
        for name in cls.NEEDS_FIT:
            if name in cls.__dict__:
                setattr(cls, name, _after_fit(cls.__dict__[name]))

    def node_column(self, name: str) -> str:
        """The table column of a modelled quantity: the surrogate's objectives are objectives; any
        other quantity keeps the role it was given where it was logged (:meth:`_logged_role`),
        which is already the run's (:func:`~boanon.table.run_role` shaped the table)."""
        if any(o.name == name for o in self.objectives):
            return column("objective", name)
        return column(self._logged_role(name), name)

    def _logged_role(self, name: str) -> Role:
        """The role of ``name`` in the fitted table: a metric unless only an objective column has it."""
        if column("metric", name) in self.table_.columns or column("objective", name) not in self.table_:
            return "metric"
        return "objective"

    @abstractmethod
    def fit(self, table: pd.DataFrame) -> Surrogate:
        """Fit every model on the trials in ``table`` (rows missing a value are skipped per model)."""

    @abstractmethod
    def refit(self, table: pd.DataFrame) -> Surrogate:
        """A copy conditioned on ``table`` with the fitted hyperparameters kept (fast)."""

    @abstractmethod
    def sample(self, configs: Sequence[Config], n_samples: int, rng: np.random.Generator,
               noise: bool = False) -> dict[str, np.ndarray]:
        """Samples (n_samples, n_configs) of each output; ``noise`` adds observation noise to the
        outputs (without it they are the latent values that acquisition compares).

        Each configuration's samples are its marginal distribution (its outputs joint with each
        other); across configurations they are not the joint posterior: the node models share
        their draws (:func:`~boanon.models.nodes.shared_normals`), the coregionalised GP draws
        jointly. Do not compare configurations sample by sample."""

    @_after_fit
    def fantasize(self, configs: Sequence[Config], rng: np.random.Generator,
                  n_samples: int = 64) -> Surrogate:
        """A copy that believes the pending ``configs`` gave their predicted mean (kriging believer).

        Every modelled node gets its Monte-Carlo mean, so a pending trial also informs the
        intermediate metrics; hyperparameters stay fixed, so this costs one refit.
        """
        if not configs:
            return self
        samples = self.sample(configs, n_samples, rng)
        # every column at once: inserted one by one, pandas warns of a fragmented frame past 100
        rows = pd.DataFrame({TRIAL: [f"pending-{i}" for i in range(len(configs))],
                             **{column("param", n): [c[n] for c in configs] for n in self.space.names},
                             **{self.node_column(node): s.mean(axis=0) for node, s in samples.items()}})
        return self.refit(pd.concat([self.table_, rows], ignore_index=True))

    def describe(self) -> dict[str, Any]:
        """Plain data about the fitted models, for reports."""
        return {"surrogate": self.name}

    @_after_fit
    def predict(self, configs: Sequence[Config], rng: np.random.Generator,
                n_samples: int = 256) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Monte-Carlo mean and standard deviation of each objective, drawn from ``rng`` (the
        caller's: a seeded run's predictions then follow its seed)."""
        samples = self.sample(configs, n_samples, rng)
        return {o.name: (samples[o.name].mean(axis=0), samples[o.name].std(axis=0))
                for o in self.objectives}


def heldout_scores(y: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> dict[str, float]:
    """Scores of held-out predictions (arrays (n, outputs)): mean log predictive density of the
    standardised values (summed over outputs), mean Spearman rank correlation, standardised RMSE."""
    y, mu, sd = (np.asarray(a, dtype=float).reshape(len(y), -1) for a in (y, mu, sd))
    scale = np.where(y.std(axis=0) > 0, y.std(axis=0), 1.0)
    lpd = pointwise_log_density(y, mu, sd)
    rank = [float(spearmanr(mu[:, j], y[:, j]).statistic) if np.ptp(mu[:, j]) > 0 else 0.0
            for j in range(y.shape[1])]
    return {"log_predictive_density": float(lpd.mean()),
            "rank_correlation": float(np.nanmean(rank)),
            "rmse_standardised": float(np.sqrt(np.mean(((y - mu) / scale) ** 2)))}


def pointwise_log_density(y: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per row (trial), the log density of its held-out values (arrays (n, outputs)), each output
    standardised by the spread of its observed values and the densities summed over outputs."""
    y, mu, sd = (np.asarray(a, dtype=float).reshape(len(y), -1) for a in (y, mu, sd))
    scale = np.where(y.std(axis=0) > 0, y.std(axis=0), 1.0)
    z_sd = np.maximum(sd / scale, 1e-3)  # a floor keeps one overconfident miss finite, not decisive
    return (-0.5 * ((y - mu) / scale / z_sd) ** 2 - np.log(z_sd) - 0.5 * np.log(2 * np.pi)).sum(axis=1)


def param_configs(space: Space, table: pd.DataFrame, check: bool = True) -> list[dict[str, Any]]:
    """The configurations of the table's trials (values checked against ``space`` unless not ``check``)."""
    missing = [n for n in space.names if column("param", n) not in table.columns]
    if missing:
        raise ValueError(f"table has no column for parameter(s) {missing}")
    rows = table[[column("param", n) for n in space.names]].to_numpy(dtype=object).tolist()
    configs = [{n: _plain(v) for n, v in zip(space.names, row, strict=True)} for row in rows]
    if check:
        trials = table[TRIAL].tolist() if TRIAL in table.columns else list(range(len(table)))
        for trial, config in zip(trials, configs, strict=True):
            for n, v in config.items():
                try:
                    config[n] = space.params[n].check(v)
                except ValueError as exc:
                    raise ValueError(f"trial {trial!r}: parameter {n!r}: {exc} "
                                     "(was the search space changed after it ran?)") from None
    return configs


def _plain(v: Any) -> Any:
    """numpy scalars (as pandas returns them) as Python values."""
    return v.item() if isinstance(v, np.generic) else v
