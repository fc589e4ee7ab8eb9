"""Timing model of one synchronous parameter-server SGD iteration on a heterogeneous cluster.

One iteration: every worker computes gradients for its share of the batch on its devices
(CPU and, where present, GPU), aggregates them on the host, pushes them to the parameter
servers (the model is sharded evenly over the servers) and pulls the new parameters back;
the servers apply the summed gradients. Hence::

    iteration_s = max over workers (max device compute + aggregation + communication)
                  + max over servers (PS update)

The pieces (constants in :class:`TimingConstants`, discussed in docs/sgd.md):

* compute: per device ``passes * (overhead + F * half_load / rate) + F * samples / rate``:
  linear in the load with a fixed cost per pass, so larger loads run more efficiently; a load
  that does not fit the device memory runs in several passes;
* aggregation: GPU gradients cross PCIe twice (gradients down, parameters up); a machine using
  both devices also sums the two gradient sets in host memory;
* communication: a worker's push (and pull) ends when both its own NIC and the NIC of every
  remote server it talks to have moved their bytes; a NIC carries the machine's own gradients
  out and, on a server, its fan-in in (full duplex, but not twice as fast); served bytes cost
  more with many concurrent senders (incast) and when the host is busy training;
* noise: multiplicative log-normal noise per device and machine, occasional stragglers (a
  machine computing 1.5-3x slower for one iteration) and a decaying warm-up slowdown.

Everything here is plain data in, plain data out: :func:`plan` checks a configuration,
:func:`steady_state` gives the noise-free times, :func:`simulate` yields logged iterations.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from boanon.targets.sgd.cluster import CLUSTER, GB, MB, Machine, Network


class InvalidConfig(ValueError):
    """A configuration no cluster can run: no worker, no parameter server or no work."""


@dataclass(frozen=True)
class TimingConstants:
    """Constants of the timing model; see docs/sgd.md for where each value comes from."""

    cpu_overhead_s: float = 0.02
    """Fixed cost of one CPU pass (graph step dispatch, thread-pool wake-up)."""
    gpu_overhead_s: float = 0.03
    """Fixed cost of one GPU pass (kernel launches, input copy set-up)."""
    cpu_half_load: float = 2.0
    """Samples' worth of work lost per CPU pass to under-utilisation (small batches)."""
    gpu_half_load: float = 16.0
    """Same for a GPU, which needs far larger batches to fill its cores."""
    memory_headroom: float = 0.8
    """Fraction of device memory usable for activations; the rest holds model and workspace."""
    pcie_gbs: float = 6.0
    """Host<->GPU copy bandwidth, GB/s (PCIe 3.0 x16 in practice)."""
    host_reduce_gbs: float = 5.0
    """Rate of summing gradient sets in host memory, GB/s."""
    nic_efficiency: float = 0.9
    """Fraction of the NIC line rate that TCP/gRPC transfers reach."""
    duplex_efficiency: float = 1.6
    """Multiple of its one-way rate a NIC reaches when it sends and receives at once."""
    incast_penalty: float = 0.03
    """Fraction of a server NIC's throughput lost per concurrent sender beyond the first."""
    rpc_overhead_s: float = 0.004
    """Fixed cost of one worker-server exchange per direction (request set-up, serialisation)."""
    ps_apply_gbs_per_vcpu: float = 0.25
    """Gradient bytes a server sums and applies per second per vCPU, GB/s."""
    ps_contention: float = 0.8
    """Slowdown of a server whose CPU is busy training during the whole compute phase."""
    gpu_host_load: float = 0.25
    """Share of a CPU's time that driving a busy GPU takes (launches, input, copies)."""
    straggler_slowdown: tuple[float, float] = (1.5, 3.0)
    """Range of the compute slowdown of a straggling machine."""
    warmup_slowdown: float = 2.0
    """Extra compute time of the first iteration (graph building, allocator, autotuning)..."""
    warmup_decay: float = 0.4
    """...which decays geometrically by this factor per iteration."""


CONSTANTS = TimingConstants()


@dataclass(frozen=True)
class MachinePlan:
    """What one machine does in the configuration: its roles and samples per device."""

    machine: Machine
    worker: bool
    ps: bool
    samples: Mapping[str, int] = field(default_factory=dict)

    @property
    def role(self) -> str:
        """``worker``, ``ps``, ``both`` or ``idle``."""
        if self.worker and self.ps:
            return "both"
        return "worker" if self.worker else "ps" if self.ps else "idle"


@dataclass(frozen=True)
class MachineTimes:
    """Noise-free times of one machine in one iteration."""

    compute_s: dict[str, float]
    aggregation_s: dict[str, float]
    passes: dict[str, int]
    communication_s: float
    ps_update_s: float
    traffic_mb: float
    """Megabytes the NIC sends per iteration (the same amount is received)."""


def _flag(config: Mapping[str, object], key: str) -> bool:
    value = config[key]
    if isinstance(value, str):
        if value.lower() not in ("true", "false", "1", "0"):
            raise InvalidConfig(f"{key}: expected a boolean, got {value!r}")
        return value.lower() in ("true", "1")
    return bool(value)


def _fraction(config: Mapping[str, object], key: str, upper: float | None = None) -> float:
    try:
        value = float(config[key])  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidConfig(f"{key}: expected a number, got {config[key]!r}") from None
    if not math.isfinite(value) or value < 0 or (upper is not None and value > upper):
        bound = f"[0, {upper}]" if upper is not None else ">= 0"
        raise InvalidConfig(f"{key}: {value} is outside {bound}")
    return value


def apportion(total: int, weights: list[float]) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` (largest remainder)."""
    scale = sum(weights)
    exact = [total * w / scale for w in weights]
    counts = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (counts[i] - exact[i], i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return counts


def plan(config: Mapping[str, object], network: Network,
         cluster: tuple[Machine, ...] = CLUSTER) -> list[MachinePlan]:
    """Turn a configuration into per-machine roles and per-device sample counts.

    Shares are normalised over the workers; a worker whose share rounds to no samples still
    takes part in the synchronous push/pull (it is a worker). ``m{i}_gpu_share`` is the
    fraction of the machine's samples given to its GPU.
    """
    missing = [k for m in cluster for k in _keys(m) if k not in config]
    if missing:
        raise InvalidConfig(f"missing parameter(s): {', '.join(missing)}")
    workers = [_flag(config, f"{m.name}_worker") for m in cluster]
    servers = [_flag(config, f"{m.name}_ps") for m in cluster]
    shares = [_fraction(config, f"{m.name}_share") if w else 0.0
              for m, w in zip(cluster, workers, strict=True)]
    if not any(workers):
        raise InvalidConfig("no machine is a worker")
    if not any(servers):
        raise InvalidConfig("no machine is a parameter server")
    if sum(shares) <= 0:
        raise InvalidConfig("every worker has a zero batch share")
    per_machine = apportion(network.batch_size, shares)
    plans = []
    for m, worker, ps, n in zip(cluster, workers, servers, per_machine, strict=True):
        samples = {"cpu": n}
        if m.type.gpu:
            gpu = round(n * _fraction(config, f"{m.name}_gpu_share", upper=1.0))
            samples = {"cpu": n - gpu, "gpu": gpu}
        plans.append(MachinePlan(m, worker, ps, samples))
    return plans


def _keys(machine: Machine) -> list[str]:
    keys = [f"{machine.name}_worker", f"{machine.name}_ps", f"{machine.name}_share"]
    return keys + ([f"{machine.name}_gpu_share"] if machine.type.gpu else [])


def compute_time(samples: int, gflops: float, memory_gb: float, device: str, network: Network,
                 constants: TimingConstants = CONSTANTS) -> tuple[float, int]:
    """Seconds and passes for ``samples`` on one device (0 s and 0 passes when idle)."""
    if samples <= 0:
        return 0.0, 0
    capacity = max(1, math.floor(memory_gb * GB * constants.memory_headroom
                                 / (network.activation_mb_per_sample * MB)))
    passes = math.ceil(samples / capacity)
    overhead, half = ((constants.gpu_overhead_s, constants.gpu_half_load) if device == "gpu"
                      else (constants.cpu_overhead_s, constants.cpu_half_load))
    per_sample = network.gflop_per_sample / gflops
    return passes * (overhead + half * per_sample) + samples * per_sample, passes


def _device_specs(machine: Machine) -> dict[str, tuple[float, float]]:
    specs = {"cpu": (machine.type.cpu_gflops, machine.type.memory_gb)}
    if machine.type.gpu:
        specs["gpu"] = (machine.type.gpu.gflops, machine.type.gpu.memory_gb)
    return specs


def _aggregation(p: MachinePlan, model_bytes: float, c: TimingConstants) -> dict[str, float]:
    """Host-side gradient handling per device: PCIe round trip for a GPU, reductions on the host."""
    active = {d for d, n in p.samples.items() if n > 0 and p.worker}
    agg = {d: 0.0 for d in p.samples}
    if "gpu" in active:
        agg["gpu"] = 2 * model_bytes / (c.pcie_gbs * GB)
    if "cpu" in active:
        agg["cpu"] = model_bytes / (c.host_reduce_gbs * GB) * (2 if "gpu" in active else 1)
    return agg


def _compute_times(plans: list[MachinePlan], network: Network, c: TimingConstants
                   ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """Compute seconds and passes per machine and device."""
    compute: dict[str, dict[str, float]] = {}
    passes: dict[str, dict[str, int]] = {}
    for p in plans:
        compute[p.machine.name], passes[p.machine.name] = {}, {}
        for device, (gflops, mem) in _device_specs(p.machine).items():
            compute[p.machine.name][device], passes[p.machine.name][device] = compute_time(
                p.samples[device], gflops, mem, device, network, c)
    return compute, passes


def busy_time(compute_s: Mapping[str, float], aggregation_s: Mapping[str, float],
              communication_s: float) -> float:
    """A worker's part of the iteration: its slowest device, then aggregation and communication."""
    return max(compute_s.values()) + sum(aggregation_s.values()) + communication_s


def steady_state(plans: list[MachinePlan], network: Network,
                 constants: TimingConstants = CONSTANTS) -> dict[str, MachineTimes]:
    """Noise-free times of every machine, keyed by machine name."""
    c = constants
    model = network.model_bytes
    compute, passes = _compute_times(plans, network, c)
    phase = max(max(t.values()) for t in compute.values())
    servers = [p for p in plans if p.ps]
    n_workers = sum(p.worker for p in plans)
    shard = model / len(servers)

    def contention(p: MachinePlan) -> float:
        """Slowdown of server work on ``p``: its CPU trains, or drives its GPU, part of the phase."""
        t = compute[p.machine.name]
        busy = t["cpu"] + c.gpu_host_load * t.get("gpu", 0.0)
        return 1 + c.ps_contention * (min(1.0, busy / phase) if phase > 0 else 0.0)

    times, nic_s, sent = {}, {}, {}
    for p in plans:
        name = p.machine.name
        remote = len([s for s in servers if s.machine.name != name]) if p.worker else 0
        fan_in = n_workers - p.worker if p.ps else 0
        own, served = remote * shard, fan_in * shard
        # The served bytes cost more: concurrent senders (incast) and a busy host (contention).
        served_cost = served * (1 + c.incast_penalty * max(fan_in - 1, 0)) * (contention(p) if p.ps else 1)
        bandwidth = p.machine.type.nic_gbps * GB / 8 * c.nic_efficiency
        nic_s[name] = max(own, served_cost, (own + served_cost) / c.duplex_efficiency) / bandwidth
        sent[name] = (own + served) / MB
    for p in plans:
        name = p.machine.name
        remote = [s.machine.name for s in servers if s.machine.name != name] if p.worker else []
        if p.worker:
            one_way = max([nic_s[name]] + [nic_s[s] for s in remote]) + c.rpc_overhead_s * len(remote)
            communication = 2 * one_way
        else:
            communication = 2 * nic_s[name]
        update = (n_workers * shard / (c.ps_apply_gbs_per_vcpu * p.machine.type.vcpus * GB)
                  * contention(p)) if p.ps else 0.0
        times[name] = MachineTimes(
            compute_s=compute[name], aggregation_s=_aggregation(p, model, c), passes=passes[name],
            communication_s=communication, ps_update_s=update, traffic_mb=sent[name])
    return times


def steady_iteration_time(config: Mapping[str, object], network: Network,
                          cluster: tuple[Machine, ...] = CLUSTER,
                          constants: TimingConstants = CONSTANTS) -> float:
    """The noise-free iteration time of ``config`` (no warm-up, stragglers or noise).

    The simulator's ground truth: what a tuner's best configuration should be judged by.
    """
    plans = plan(config, network, cluster)
    times = steady_state(plans, network, constants)
    workers = [times[p.machine.name] for p in plans if p.worker]
    busy = [busy_time(t.compute_s, t.aggregation_s, t.communication_s) for t in workers]
    return max(busy) + max(t.ps_update_s for t in times.values())


def simulate(config: Mapping[str, object], network: Network, *, iterations: int, warmup: int,
             seed: int | None, noise: float, straggler_prob: float,
             cluster: tuple[Machine, ...] = CLUSTER,
             constants: TimingConstants = CONSTANTS) -> Iterator[list[dict]]:
    """Iterations of ``config``: each a list of log rows, one per (machine, device).

    The configuration is checked before anything runs (:class:`InvalidConfig`). The random
    draws per iteration do not depend on the configuration (a fixed number per machine and
    device), so two configurations run with one seed see the same noise.
    """
    plans = plan(config, network, cluster)
    base = steady_state(plans, network, constants)
    return _iterate(plans, base, iterations, warmup, np.random.default_rng(seed), noise,
                    straggler_prob, constants)


def _iterate(plans: list[MachinePlan], base: dict[str, MachineTimes], iterations: int, warmup: int,
             rng: np.random.Generator, noise: float, straggler_prob: float,
             constants: TimingConstants) -> Iterator[list[dict]]:
    low, high = constants.straggler_slowdown
    n = len(plans)
    for it in range(iterations):
        straggling = rng.random(n) < straggler_prob
        slowdown = np.where(straggling, rng.uniform(low, high, n), 1.0)
        # per machine: compute cpu, gpu; aggregation cpu, gpu; communication; PS update
        jitter = rng.lognormal(0.0, noise, (n, 6)) if noise > 0 else np.ones((n, 6))
        warm = 1 + constants.warmup_slowdown * constants.warmup_decay ** it
        rows, busy, updates = [], [], []
        for i, p in enumerate(plans):
            t = base[p.machine.name]
            compute = {d: t.compute_s[d] * warm * slowdown[i] * jitter[i, k]
                       for k, d in enumerate(p.machine.devices)}
            agg = {d: t.aggregation_s[d] * jitter[i, 2 + k] for k, d in enumerate(p.machine.devices)}
            comm = t.communication_s * jitter[i, 4]
            update = t.ps_update_s * jitter[i, 5]
            if p.worker:
                busy.append(busy_time(compute, agg, comm))
            updates.append(update)
            rows += [{
                "iteration": it, "warmup": it < warmup, "machine": p.machine.name,
                "device": d, "instance_type": p.machine.type.name, "role": p.role,
                "batch_share": p.samples[d], "passes": t.passes[d],
                "compute_s": compute[d], "aggregation_s": agg[d], "communication_s": comm,
                "ps_update_s": update, "traffic_mb": t.traffic_mb,
                "straggler": bool(straggling[i]) and p.worker,
            } for d in p.machine.devices]
        iteration_s = max(busy) + max(updates)
        for row in rows:
            row["iteration_s"] = iteration_s
        yield rows
