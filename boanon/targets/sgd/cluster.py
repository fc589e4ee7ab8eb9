"""The simulated cluster and the networks it trains: hardware and model constants.

The setting follows BOAT's distributed-SGD case study (Dalibard et al., WWW 2017): ten
machines of a few cloud instance types, some with a GPU, training one network with
synchronous data-parallel SGD and parameter servers. The paper does not publish its hardware
constants, so these are order-of-magnitude figures for 2016-era AWS instances (vCPU counts,
memory and NIC class from the AWS instance-type pages; *effective* training throughput set at
10-25 % of peak, which is what TensorFlow of that time reached on these devices). They are
assumptions, documented in docs/sgd.md, not measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9
MB = 1e6


@dataclass(frozen=True)
class GpuSpec:
    """One GPU: effective training throughput and on-board memory."""

    model: str
    gflops: float
    memory_gb: float


@dataclass(frozen=True)
class InstanceType:
    """A machine type: CPU throughput (all cores together), NIC, memory, optional GPU."""

    name: str
    vcpus: int
    cpu_gflops: float
    nic_gbps: float
    memory_gb: float
    gpu: GpuSpec | None = None


@dataclass(frozen=True)
class Machine:
    """One machine of the cluster: its name (``m0``...) and type."""

    name: str
    type: InstanceType

    @property
    def devices(self) -> tuple[str, ...]:
        """Compute devices: always the CPU, plus the GPU where the type has one."""
        return ("cpu", "gpu") if self.type.gpu else ("cpu",)


@dataclass(frozen=True)
class Network:
    """A neural network as the scheduler sees it: model size, work per sample, batch size."""

    name: str
    parameters: int
    gflop_per_sample: float
    activation_mb_per_sample: float
    batch_size: int

    @property
    def model_bytes(self) -> float:
        """Bytes of one full gradient (or parameter) set, fp32."""
        return 4.0 * self.parameters


K520 = GpuSpec("K520", gflops=550.0, memory_gb=4.0)
K80 = GpuSpec("K80", gflops=750.0, memory_gb=12.0)

INSTANCE_TYPES: dict[str, InstanceType] = {t.name: t for t in (
    InstanceType("c4.8xlarge", vcpus=36, cpu_gflops=140.0, nic_gbps=10.0, memory_gb=60.0),
    InstanceType("c4.2xlarge", vcpus=8, cpu_gflops=40.0, nic_gbps=1.0, memory_gb=15.0),
    InstanceType("g2.2xlarge", vcpus=8, cpu_gflops=25.0, nic_gbps=1.0, memory_gb=15.0, gpu=K520),
    InstanceType("p2.xlarge", vcpus=4, cpu_gflops=15.0, nic_gbps=1.25, memory_gb=61.0, gpu=K80),
)}

_LAYOUT = ("c4.8xlarge", "c4.8xlarge", "c4.2xlarge", "c4.2xlarge", "c4.2xlarge",
           "g2.2xlarge", "g2.2xlarge", "g2.2xlarge", "p2.xlarge", "p2.xlarge")

CLUSTER: tuple[Machine, ...] = tuple(
    Machine(f"m{i}", INSTANCE_TYPES[t]) for i, t in enumerate(_LAYOUT))
"""Ten machines, four types: two big CPU boxes with 10 Gbps NICs, three small CPU boxes and
five GPU boxes on ~1 Gbps NICs. The fast NICs sit on the machines without GPUs, so the good
parameter-server placement and the good compute placement pull in different directions."""

NETWORKS: dict[str, Network] = {n.name: n for n in (
    # GoogLeNet: 6.8 M parameters, ~1.5 G multiply-adds forward; training ~3x forward FLOPs.
    Network("googlenet", parameters=6_800_000, gflop_per_sample=9.0,
            activation_mb_per_sample=45.0, batch_size=512),
    # AlexNet: 61 M parameters, ~0.72 G multiply-adds forward: communication-heavy.
    Network("alexnet", parameters=61_000_000, gflop_per_sample=4.3,
            activation_mb_per_sample=12.0, batch_size=512),
    # SpeechNet-like: DistBelief-style 5-layer fully connected acoustic model (42 M parameters),
    # one sample = one frame, ~6 FLOPs per parameter per frame for training.
    Network("speechnet", parameters=42_000_000, gflop_per_sample=0.25,
            activation_mb_per_sample=0.05, batch_size=8192),
)}


def get_network(name: str) -> Network:
    """The network called ``name``; unknown names list the known ones."""
    try:
        return NETWORKS[name]
    except KeyError:
        raise ValueError(f"unknown network {name!r}; known: {', '.join(sorted(NETWORKS))}") from None
