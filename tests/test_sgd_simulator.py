"""The simulated parameter-server SGD cluster behaves like the system it stands for."""

from __future__ import annotations

import numpy as np
import pytest

from boanon.targets.sgd import default_config
from boanon.targets.sgd.cluster import CLUSTER, get_network
from boanon.targets.sgd.simulator import (
    CONSTANTS,
    InvalidConfig,
    apportion,
    compute_time,
    plan,
    simulate,
    steady_iteration_time,
    steady_state,
)

GOOGLENET = get_network("googlenet")
ALEXNET = get_network("alexnet")
K520 = CLUSTER[5].type.gpu


def config(workers: list[int], servers: list[int], shares: dict[int, float],
           gpu_share: float = 1.0) -> dict:
    """A full configuration from the machines that work, those that serve and their shares."""
    out = {}
    for i, m in enumerate(CLUSTER):
        out[f"{m.name}_worker"] = i in workers
        out[f"{m.name}_ps"] = i in servers
        out[f"{m.name}_share"] = shares.get(i, 0.0)
        if m.type.gpu:
            out[f"{m.name}_gpu_share"] = gpu_share
    return out


GPU_HEAVY = config([0, 1, 5, 6, 7, 8, 9], [0, 1],
                   {0: 0.06, 1: 0.06, 5: 0.55, 6: 0.55, 7: 0.55, 8: 0.75, 9: 0.75})


def worker_communication(cfg: dict, network) -> float:
    plans = plan(cfg, network)
    times = steady_state(plans, network)
    return max(times[p.machine.name].communication_s for p in plans if p.worker)


def run(cfg: dict, **options) -> list[list[dict]]:
    kwargs = {"iterations": 8, "warmup": 2, "seed": 3, "noise": 0.05, "straggler_prob": 0.05}
    return list(simulate(cfg, GOOGLENET, **{**kwargs, **options}))


def test_compute_time_is_linear_in_the_load_with_a_fixed_cost_per_pass():
    loads = np.arange(8, 64, 8)  # all fit one K520 pass
    times = np.array([compute_time(int(n), K520.gflops, K520.memory_gb, "gpu", GOOGLENET)[0]
                      for n in loads])
    slope, intercept = np.polyfit(loads, times, 1)
    assert np.allclose(slope * loads + intercept, times)
    assert slope == pytest.approx(GOOGLENET.gflop_per_sample / K520.gflops)
    assert intercept > 0.1  # fixed overhead + under-utilisation: larger loads are more efficient
    per_sample = times / loads
    assert np.all(np.diff(per_sample) < 0)


def test_a_load_beyond_device_memory_takes_another_pass():
    capacity = int(K520.memory_gb * 1e9 * CONSTANTS.memory_headroom
                   / (GOOGLENET.activation_mb_per_sample * 1e6))
    t1, p1 = compute_time(capacity, K520.gflops, K520.memory_gb, "gpu", GOOGLENET)
    t2, p2 = compute_time(capacity + 1, K520.gflops, K520.memory_gb, "gpu", GOOGLENET)
    assert (p1, p2) == (1, 2)
    one_sample = GOOGLENET.gflop_per_sample / K520.gflops
    assert t2 - t1 > one_sample + CONSTANTS.gpu_overhead_s  # a step, not just one more sample
    assert compute_time(0, K520.gflops, K520.memory_gb, "gpu", GOOGLENET) == (0.0, 0)


def test_spreading_parameter_servers_cuts_communication_for_a_big_model():
    everyone = list(range(10))
    shares = {i: 1.0 for i in everyone}
    one = worker_communication(config(everyone, [0], shares), ALEXNET)
    two = worker_communication(config(everyone, [0, 1], shares), ALEXNET)
    assert two < 0.8 * one  # the single server's NIC was the bottleneck


def test_a_server_behind_a_slow_nic_is_a_bottleneck():
    shares = {i: 1.0 for i in range(5, 10)}
    fast = worker_communication(config([5, 6, 7, 8, 9], [0], shares), ALEXNET)
    slow = worker_communication(config([5, 6, 7, 8, 9], [2], shares), ALEXNET)
    assert slow > 3 * fast


def test_a_server_that_also_trains_on_its_cpu_serves_slower():
    servers_idle = config([5, 6, 7, 8, 9], [0], {i: 1.0 for i in range(5, 10)})
    servers_busy = config([0, 5, 6, 7, 8, 9], [0], {0: 1.0, **{i: 1.0 for i in range(5, 10)}})
    idle = steady_state(plan(servers_idle, ALEXNET), ALEXNET)["m0"]
    busy = steady_state(plan(servers_busy, ALEXNET), ALEXNET)["m0"]
    assert busy.ps_update_s > 1.3 * idle.ps_update_s


def test_a_gpu_heavy_split_beats_the_uniform_default():
    default, tuned = (steady_iteration_time(c, GOOGLENET) for c in (default_config(), GPU_HEAVY))
    assert tuned < 0.4 * default
    measured = [np.mean([rows[0]["iteration_s"] for rows in run(c)[2:]])
                for c in (default_config(), GPU_HEAVY)]
    assert measured[1] < 0.4 * measured[0]


def test_without_noise_the_log_matches_the_steady_state():
    rows = run(GPU_HEAVY, noise=0.0, straggler_prob=0.0, iterations=30, warmup=0)
    last = rows[-1][0]["iteration_s"]  # the warm-up slowdown has decayed
    assert last == pytest.approx(steady_iteration_time(GPU_HEAVY, GOOGLENET), rel=1e-6)
    assert rows[0][0]["iteration_s"] > 2 * last  # the first iteration pays the warm-up


def test_same_seed_same_log_and_another_seed_another():
    assert run(GPU_HEAVY) == run(GPU_HEAVY)
    assert run(GPU_HEAVY) != run(GPU_HEAVY, seed=4)


def test_noise_draws_do_not_depend_on_the_configuration():
    flags = [[[r["straggler"] for r in rows if r["machine"] == "m5"] for rows in run(c, straggler_prob=0.3)]
             for c in (default_config(), GPU_HEAVY)]
    assert flags[0] == flags[1]


def test_stragglers_slow_compute_within_the_documented_range():
    calm = run(GPU_HEAVY, noise=0.0, straggler_prob=0.0)
    slow = run(GPU_HEAVY, noise=0.0, straggler_prob=1.0)
    low, high = CONSTANTS.straggler_slowdown
    for a, b in zip(calm[-1], slow[-1], strict=True):
        if a["compute_s"] > 0:
            assert b["straggler"]
            assert low <= b["compute_s"] / a["compute_s"] <= high


def test_log_rows_cover_every_machine_and_device_with_roles():
    rows = run(GPU_HEAVY)[0]
    assert len(rows) == sum(len(m.devices) for m in CLUSTER)
    roles = {r["machine"]: r["role"] for r in rows}
    assert roles["m0"] == "both" and roles["m2"] == "idle" and roles["m5"] == "worker"
    assert sum(r["batch_share"] for r in rows) == GOOGLENET.batch_size
    assert len({r["iteration_s"] for r in rows}) == 1


@pytest.mark.parametrize("change, message", [
    ({f"m{i}_worker": False for i in range(10)}, "no machine is a worker"),
    ({f"m{i}_ps": False for i in range(10)}, "no machine is a parameter server"),
    ({f"m{i}_share": 0.0 for i in range(10)}, "zero batch share"),
    ({"m5_gpu_share": 1.5}, "m5_gpu_share"),
    ({"m3_share": -0.1}, "m3_share"),
    ({"m3_worker": "maybe"}, "m3_worker"),
])
def test_invalid_configurations_are_refused(change, message):
    with pytest.raises(InvalidConfig, match=message):
        plan({**default_config(), **change}, GOOGLENET)


def test_missing_parameters_are_named():
    cfg = default_config()
    del cfg["m7_gpu_share"]
    with pytest.raises(InvalidConfig, match="m7_gpu_share"):
        plan(cfg, GOOGLENET)


def test_apportion_is_exact_and_proportional():
    assert apportion(512, [1.0] * 10) == [52, 52, 51, 51, 51, 51, 51, 51, 51, 51]
    counts = apportion(512, [0.3, 0.0, 0.7, 0.11])
    assert sum(counts) == 512 and counts[1] == 0 and counts[2] > counts[0] > counts[3]
