"""The structured surrogate: one small model per node, Monte-Carlo samples pushed through the DAG.

Only the objectives' ancestors are modelled. Each node is fitted on every trial that logged it
and its parents, independently of the others: this is where the many runtime measurements per
evaluation pay off. To predict, every node is sampled given its parents' *samples* in
topological order, so the uncertainty of intermediate metrics reaches the objective (BoGraph
passed posterior means and lost it).

A node left to a GP (no expert model, no relation) first looks for a parametric form of its own
(:mod:`boanon.models.forms`: affine, quadratic, a hinge, a power law, each with a GP on the
residual), which extrapolates from few trials where a GP alone reverts to the mean.
The safety net (:meth:`DAGSurrogate._safety_net`) then keeps, per node, whichever of its models
and the alternatives (all parameters, a log scale, a metric parent scaled by a GP of the others:
:mod:`boanon.models.scaled`) predicts it best held out.

Fallbacks keep a learned graph usable: nodes without data are dropped (their children lose
that parent), an objective left without parents gets a GP over all parameters, and a metric
without parents is drawn from its observed distribution.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from boanon.graph import CausalGraph
from boanon.models.base import Config, Surrogate, heldout_scores, param_configs
from boanon.models.forms import choose_form
from boanon.models.inputs import ConfigBatch, NodeInputs
from boanon.models.nodes import (
    FormulaNode,
    GPNode,
    NodeModel,
    build_node_model,
    heavy_tailed,
    heldout_predictions,
    node_model_from_spec,
)
from boanon.models.scaled import ScaledNode
from boanon.models.threads import single_blas_thread
from boanon.nodespec import NodeSpec
from boanon.objectives import Objective
from boanon.space import Categorical, Space
from boanon.table import Role
from boanon.ties import first_best

MIN_SAFETY_NET_TRIALS = 10  # fewer trials: the graph's parents are kept without cross-validation
SAFETY_NET_FOLDS = 5
SAFETY_NET_SAMPLES = 32
SAFETY_NET_MARGIN = 0.25  # held-out log density per trial by which an alternative must beat the graph
MIN_SCALED_TRIALS = 15
"""Fewer trials: no scaled alternatives. Each alternative is one more chance for a lucky split of
a dozen trials (on the pipeline at 10 trials a scaled job time beat the graph's model by 25 nats
per trial, one trial later it lost by 2), and a wrong product extrapolates far; a chain of
products needs them early enough to be exploited (benchmarks/README.md, "Round 8")."""


class DAGSurrogate(Surrogate):
    """Per-node models compiled from ``graph``; ``sample`` returns every modelled node."""

    name = "structured"
    NEEDS_FIT = (*Surrogate.NEEDS_FIT, "structure_record", "node_scores", "node_fits")
    models_: dict[str, NodeModel]  # node -> its fitted model
    order_: list[str]  # the sampled nodes, in topological order
    report_: dict[str, Any]  # what fit decided: nodes dropped, forms found, the safety net's repairs

    def __init__(self, space: Space, graph: CausalGraph, objectives: Sequence[Objective],
                 outputs: Sequence[str] = (), learn_forms: bool = True, random_state: int = 0,
                 structure: Mapping[str, Any] | None = None):
        super().__init__(space, objectives, outputs)
        self.graph = graph
        self.learn_forms = learn_forms
        self.random_state = random_state
        self.structure = structure

    # --- structure ------------------------------------------------------------------------
    def _structure(self, table: pd.DataFrame) -> dict[str, list[str]]:
        """Parents of every modelled non-parameter node, after the fallbacks, in graph order."""
        g = model_graph(self.graph, self.space)
        params = set(self.space.names)
        dropped, fallbacks = [], []
        wanted = set(self.outputs)
        for o in wanted - set(g):
            g.add_node(o)
        # Parameters the adapter logged but the search space does not tune cannot be set for a
        # candidate: they are dropped like nodes without data (their children lose them).
        untuned = sorted(n for n in g if self.graph.roles.get(n) == "param" and n not in params)
        g.remove_nodes_from(untuned)
        relevant = set(wanted).union(*(nx.ancestors(g, o) for o in wanted))
        for n in sorted(relevant):
            if n not in params and self.node_column(n) not in table.columns:
                if n in wanted:
                    raise ValueError(f"table has no column for output {n!r}")
                dropped.append(n)
        g.remove_nodes_from(dropped)
        relevant = set(wanted).union(*(nx.ancestors(g, o) for o in wanted))
        parents: dict[str, list[str]] = {}
        # One topological order whatever the order of the nodes and edges (a learned graph's edges
        # came in an order that followed string hashing, so it changed from process to process)
        for n in (n for n in nx.lexicographical_topological_sort(g) if n in relevant):
            if n in params:
                continue
            ps = sorted(g.predecessors(n))  # not the edges' order, which the graph's source decides
            if not ps and n in wanted:
                ps = list(self.space.names)
                fallbacks.append(n)
            parents[n] = ps
        self.report_ = {"dropped_without_data": dropped, "dropped_untuned_params": untuned,
                       "objectives_without_parents": fallbacks}
        return parents

    def _logged_role(self, name: str) -> Role:
        """A graph node's role is the graph's (the table's for an output the graph lacks)."""
        return self.graph.roles[name] if name in self.graph.roles else super()._logged_role(name)

    # --- fitting -----------------------------------------------------------------------------
    @single_blas_thread
    def fit(self, table: pd.DataFrame) -> DAGSurrogate:
        self.table_ = table
        if self.structure is not None:
            return self._fit_recorded(table)
        parents = self._structure(table)
        params, relations = set(self.space.names), self._relation_targets
        self.models_ = {}
        for node, ps in parents.items():
            model = build_node_model(node, self.graph.node_models.get(node), ps, params)
            self._check_formula_inputs(node, model)
            if isinstance(model, FormulaNode) and node in relations:
                model.learned = True  # an approximate relation's form: chosen from the trials
            self.models_[node] = model
        self.order_ = list(parents)
        batch = ConfigBatch.of(self.space, param_configs(self.space, table))
        columns = self._node_columns(table)
        self._find_forms(columns, batch)
        self._fit_nodes(columns, batch, refit=False)
        self._safety_net(columns, batch)
        return self

    def _fit_recorded(self, table: pd.DataFrame) -> DAGSurrogate:
        """Fit the node models a :meth:`structure` records, as they are: no form search, no
        safety net (those decided the recorded structure)."""
        assert self.structure is not None
        nodes = self.structure["nodes"]
        self.order_ = list(self.structure["order"])
        self.models_ = {n: node_model_from_spec(
                            {**nodes[n], "param_parents": node_parents(nodes[n], self.space)[0]})
                        for n in self.order_}
        missing = [n for n in self.order_ if self.node_column(n) not in table.columns]
        if missing:
            raise ValueError(f"table has no column for node(s) {missing}")
        self.report_ = {"rebuilt": True}
        self._fit_nodes(self._node_columns(table),
                        ConfigBatch.of(self.space, param_configs(self.space, table)), refit=False)
        return self

    @property
    def _relation_targets(self) -> set[str]:
        """The nodes whose model is a relation learned from the logs (not an expert's)."""
        return {r.get("target") for r in self.graph.metadata.get("relations", [])}

    def structure_record(self) -> dict[str, Any]:
        """The fitted model's make-up as plain data: each sampled node's model (:meth:`NodeModel.spec`)
        with where it came from (``source``: a learned ``form``, a ``relation`` learned from the
        logs, an expert's ``annotation``, the ``safety net``'s replacement, or the ``graph``'s
        parents), in sampling order, and the nodes no sampled model reads any more. A proposal
        records it; ``boanon status``, the dashboard, ``plot`` and ``explain`` show and refit this
        one structure (``DAGSurrogate(..., structure=...)``), so every view is of the model used."""
        if self.structure is not None:
            return dict(self.structure)
        forms, relations = self.report_.get("forms", {}), self._relation_targets
        nodes = {}
        for n in self.order_:
            spec = self.models_[n].spec()
            if n in self.report_.get("safety_net", {}):
                spec["source"] = "safety net"
            elif n in forms:
                spec.update(source="form", form=forms[n]["form"], heldout_r2=forms[n]["heldout_r2"])
            elif n in self.graph.node_models:
                spec["source"] = "relation" if n in relations else "annotation"
            else:
                spec["source"] = "graph"
            nodes[n] = spec
        return {"order": list(self.order_), "nodes": nodes,
                "unused": [n for n in self.models_ if n not in nodes]}

    @single_blas_thread
    def refit(self, table: pd.DataFrame) -> DAGSurrogate:
        other = copy.copy(self)
        other.models_ = dict(self.models_)
        other.table_ = table
        batch = ConfigBatch.of(self.space, param_configs(self.space, table, check=False))
        other._fit_nodes(self._node_columns(table), batch, refit=True)
        return other

    def _node_columns(self, table: pd.DataFrame) -> dict[str, np.ndarray]:
        """Each node's values as floats (NaN where not logged), by node; parameters come from a
        :class:`ConfigBatch`. Node data is sliced from these arrays: slicing the table itself
        (db_bench logs hundreds of quantities) per node, fold and candidate model took as long
        as the fits."""
        return {n: table[self.node_column(n)].to_numpy(dtype=float) for n in self.order_}

    def _fit_nodes(self, columns: dict[str, np.ndarray], batch: ConfigBatch, refit: bool) -> None:
        for node in self.order_:
            model = self.models_[node]
            inputs, y = self._node_data(columns, batch, node, model)
            self.models_[node] = model.refit(inputs, y) if refit else model.fit(inputs, y)

    def _find_forms(self, columns: dict[str, np.ndarray], batch: ConfigBatch) -> None:
        """Give each GP node the parametric form that predicts it best held out, if one does."""
        self.report_["forms"] = {}
        if not self.learn_forms:
            return
        for node in self.order_:
            model = self.models_[node]
            if type(model) is not GPNode:
                continue
            inputs, y = self._node_data(columns, batch, node, model)
            form = choose_form({p: np.ravel(v) for p, v in inputs.raw.items()}, y, model.parents)
            if form is not None:
                self.models_[node] = FormulaNode.from_annotation(form.node_spec(), model.parents,
                                                                 set(model.param_parents))
                self.models_[node].learned = True
                self.report_["forms"][node] = form.describe()

    def _node_data(self, columns: dict[str, np.ndarray], batch: ConfigBatch, node: str,
                   model: NodeModel, within: np.ndarray | None = None) -> tuple[NodeInputs, np.ndarray]:
        """A node's training rows: trials (among ``within``, a mask) that logged it and all its
        metric parents."""
        rows = self._node_rows(columns, node, model)
        if within is not None:
            rows &= within
        y = columns[node][rows]
        if len(y) == 0:
            raise ValueError(f"no trial has values for node {node!r} and all its parents")
        metrics = {p: columns[p][rows][None, :] for p in model.metric_parents}
        return batch.rows(rows).inputs(model.param_parents, 1, metrics), y

    @staticmethod
    def _node_rows(columns: dict[str, np.ndarray], node: str, model: NodeModel) -> np.ndarray:
        rows = ~np.isnan(columns[node])
        for p in model.metric_parents:
            rows &= ~np.isnan(columns[p])
        return rows

    def _safety_net(self, columns: dict[str, np.ndarray], batch: ConfigBatch) -> None:
        """Per learned node, its graph parents or all parameters, whichever predicts it better.

        A learned graph can give a node the wrong parents, or parents whose own models are poor;
        conditioning on their *samples* then passes the error down the chain (on the real
        datasets an objective predicted well from its observed parents was predicted badly from
        sampled ones). So each node fitted from the learned graph (not an annotated formula or
        function) is cross-validated the way the surrogate is used: held-out trials are pushed
        through the already chosen upstream models, in topological order, and the node keeps its
        graph parents unless an alternative (:meth:`_alternatives`: all parameters, a log scale)
        has a held-out log predictive density higher by :data:`SAFETY_NET_MARGIN` per trial.
        With the right graph the parents win and the structure is kept.
        """
        n = batch.encoded.shape[0]
        self.report_["safety_net"] = {}
        if n < MIN_SAFETY_NET_TRIALS:
            return
        rng = np.random.default_rng([self.random_state, n])
        folds = np.array_split(rng.permutation(n), min(SAFETY_NET_FOLDS, n))
        held: dict[str, np.ndarray] = {}  # node -> (S, n): each trial sampled by models blind to its fold
        for node in self.order_:
            graph_model = self.models_[node]
            candidates = [graph_model]
            learned = node in self.report_["forms"]
            if learned or graph_model.annotation is None:  # not an expert's (or a relation's) model
                candidates += self._alternatives(columns, batch, node, graph_model, with_own=learned)
            scored = [self._chain_cv(columns, batch, node, m, folds, held, rng) for m in candidates]
            score = [np.nan_to_num(s[0], nan=-np.inf) for s in scored]  # non-finite samples never win
            best = first_best([s - (SAFETY_NET_MARGIN if i else 0.0) for i, s in enumerate(score)])
            if scored[best][1] is None:  # no candidate can be cross-validated: keep the graph's
                break
            self.models_[node], held[node] = candidates[best], scored[best][1]
            if best:
                chosen = candidates[best]
                self.report_["safety_net"][node] = {"parents": chosen.parents, "kind": chosen.kind,
                                                   "log_scale": getattr(chosen, "log_target", False)}
                self.report_["forms"].pop(node, None)
        needed = set(self.outputs)
        for node in reversed(self.order_):  # nodes that no chosen model reads any more are not sampled
            if node in needed:
                needed.update(self.models_[node].metric_parents)
        self.report_["unused_after_safety_net"] = [n for n in self.order_ if n not in needed]
        self.order_ = [n for n in self.order_ if n in needed]

    def _alternatives(self, columns: dict[str, np.ndarray], batch: ConfigBatch, node: str,
                      graph_model: NodeModel, with_own: bool = False) -> list[NodeModel]:
        """Fitted GPs over all parameters (with and without the graph's metric parents) and, for a
        heavy-tailed node, each of these and the graph's parents on a log scale; ``with_own``
        (the graph model is a learned form) adds the plain GP over the graph's parents; and each
        metric parent times a GP of the other metric parents and of the graph's parameters, or of
        all parameters (:class:`ScaledNode`: the learner may have picked the wrong parameters),
        from :data:`MIN_SCALED_TRIALS` trials on."""
        metrics = graph_model.metric_parents
        inputs = [(graph_model.param_parents, metrics), (self.space.names, []), (self.space.names, metrics)]
        y = columns[node]
        logs = (False, True) if heavy_tailed(y) else (False,)
        seen = set() if with_own else {(tuple(graph_model.parents), False)}
        out: list[NodeModel] = []
        for (ps, ms), log in product(inputs, logs):
            key = (tuple(ps) + tuple(ms), log)
            if key not in seen and (ps or ms):
                seen.add(key)
                model = GPNode(list(ps), list(ms), log)
                out.append(model.fit(*self._node_data(columns, batch, node, model)))
        scales = metrics if len(y) >= MIN_SCALED_TRIALS else []
        for scale, params in product(scales, dict.fromkeys([tuple(graph_model.param_parents),
                                                             tuple(self.space.names)])):
            if params or len(metrics) > 1:  # a ratio of nothing is a constant: the affine form's
                scaled = ScaledNode(list(params), metrics, scale)
                out.append(scaled.fit(*self._node_data(columns, batch, node, scaled)))
        return out

    def _chain_cv(self, columns: dict[str, np.ndarray], batch: ConfigBatch, node: str, model: NodeModel,
                  folds: list[np.ndarray], held: dict[str, np.ndarray],
                  rng: np.random.Generator) -> tuple[float, np.ndarray | None]:
        """Held-out log predictive density of ``node`` under ``model`` given its parents' held-out
        samples, and its own held-out samples (S, n) for its children (None: a fold has no data)."""
        y = columns[node]
        samples = np.empty((SAFETY_NET_SAMPLES, len(y)))
        for fold in folds:
            train = np.ones(len(y), dtype=bool)
            train[fold] = False
            try:
                inputs, y_train = self._node_data(columns, batch, node, model, within=train)
            except ValueError:
                return -np.inf, None
            fitted = model.refit(inputs, y_train)
            test = batch.rows(fold).inputs(model.param_parents, SAFETY_NET_SAMPLES,
                                           {p: held[p][:, fold] for p in model.metric_parents})
            samples[:, fold] = fitted.sample(test, rng, noise=True)
        seen = np.isfinite(y)
        if seen.sum() < 2:
            return -np.inf, samples
        score = heldout_scores(y[seen, None], samples.mean(axis=0)[seen, None],
                               samples.std(axis=0)[seen, None])
        return score["log_predictive_density"], samples

    def node_scores(self, rng: np.random.Generator, n_folds: int = 5) -> dict[str, dict[str, Any]]:
        """Per fitted node: its parents and the held-out scores of its model given *observed* parents."""
        out = {}
        for node, fit in self.node_fits(rng, n_folds).items():
            model = self.models_[node]
            out[node] = {"kind": model.kind, "param_parents": len(model.param_parents),
                         "metric_parents": len(model.metric_parents), "n": len(fit["observed"]),
                         **heldout_scores(*(fit[k][:, None] for k in ("observed", "predicted", "sd")))}
        return out

    @single_blas_thread
    def node_fits(self, rng: np.random.Generator, n_folds: int = 5) -> dict[str, dict[str, Any]]:
        """Per fitted node: the observed values, the held-out predicted mean and sd given the
        *observed* parents (:func:`heldout_predictions`), and the table rows they belong to."""
        batch = ConfigBatch.of(self.space, param_configs(self.space, self.table_, check=False))
        columns = self._node_columns(self.table_)
        out = {}
        for node in self.order_:
            model = self.models_[node]
            inputs, y = self._node_data(columns, batch, node, model)
            mu, sd = heldout_predictions(model, inputs, y, rng, n_folds)
            out[node] = {"observed": y, "predicted": mu, "sd": sd,
                         "rows": np.flatnonzero(self._node_rows(columns, node, model))}
        return out

    def _check_formula_inputs(self, node: str, model: NodeModel) -> None:
        expr = model.expression
        if expr is not None:
            cats = [p for p in model.param_parents
                    if p in expr.names and isinstance(self.space.params[p], Categorical)]
            if cats:
                raise ValueError(f"node model of {node!r} uses categorical parameter(s) {cats} "
                                 "as numbers")

    # --- prediction ----------------------------------------------------------------------------
    @single_blas_thread
    def sample(self, configs: Sequence[Config], n_samples: int,
               rng: np.random.Generator, noise: bool = False) -> dict[str, np.ndarray]:
        """Joint samples of every modelled node; outputs without observation noise unless ``noise``.

        Intermediate nodes always carry their noise: their children were fitted on noisy values.
        """
        objectives = set(self.outputs)
        batch = ConfigBatch.of(self.space, configs)
        out: dict[str, np.ndarray] = {}
        for node in self.order_:
            model = self.models_[node]
            inputs = batch.inputs(model.param_parents, n_samples, {p: out[p] for p in model.metric_parents})
            out[node] = model.sample(inputs, rng, noise=noise or node not in objectives)
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **self.report_,
                "nodes": {n: self.models_[n].describe() for n in self.order_}}


def model_graph(graph: CausalGraph, space: Space) -> nx.DiGraph:
    """The graph as the model uses it: names read by a node model's expression are its parents.

    Raises ValueError for a cycle or for an expression naming neither a node nor a parameter.
    """
    g = graph.to_networkx()
    for node, spec in graph.node_models.items():
        names = NodeSpec.parse(node, spec).parents if spec and node in g else frozenset()
        missing = sorted(n for n in names if n not in g and n not in space.params)
        if missing:
            raise ValueError(f"node model of {node!r} names {missing}: neither graph nodes nor parameters")
        g.add_edges_from((n, node) for n in sorted(names))
    if not nx.is_directed_acyclic_graph(g):
        raise ValueError(f"the graph has a cycle: {nx.find_cycle(g)}")
    return g


def node_parents(spec: Mapping[str, Any], space: Space) -> tuple[list[str], list[str]]:
    """A recorded node model's parameter and metric parents within the run's ``space``: the task
    indicator a warm start adds to the proposal's space is a constant on the run's own trials,
    so it is neither shown nor refitted."""
    return [p for p in spec["param_parents"] if p in space.params], list(spec["metric_parents"])


def node_label(spec: Mapping[str, Any]) -> str:
    """A recorded node model (:meth:`DAGSurrogate.structure_record`) in a few words, the same in
    ``boanon status`` and the dashboard: ``quadratic form``, ``relation from the logs (function)``,
    ``annotated formula``, ``gp (safety net)``, ``gp``."""
    kind, source = spec["kind"], spec.get("source", "graph")
    if source == "form":
        return f"{spec['form']} form"
    if source == "relation":
        return f"relation from the logs ({kind})"
    if source == "annotation":
        return f"annotated {kind}"
    notes = ["safety net"] if source == "safety net" else []
    notes += ["log scale"] if spec.get("log_target") else []
    return f"{kind} ({', '.join(notes)})" if notes else kind
