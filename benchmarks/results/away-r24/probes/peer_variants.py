"""Scratch tuners for round 24's probes (not part of the harness): Optuna's GP sampler with 5
start-up trials instead of its default 10, and BoAnon with an initial design of 8 or 10.

    PYTHONPATH=. python benchmarks/results/away-r24/probes/peer_variants.py --problems synthetic-40 \
        --tuners optuna-gp5 boanon-gp-init10 --seeds 10 --budget 15 --out DIR
"""
import sys
from typing import Any

from benchmarks import tuners as T


class OptunaGP5(T.OptunaGP):
    name = "optuna-gp5"

    def sampler(self) -> Any:
        import torch
        torch.set_num_threads(1)
        return self._optuna.samplers.GPSampler(seed=self.seed, n_startup_trials=5)


def with_init(base: type, n: int) -> type:
    class WithInit(base):
        name = f"{base.name}-init{n}"

        def __init__(self, *a: Any, **k: Any):
            import boanon.tuner as bt
            old = bt.default_n_init
            bt.default_n_init = lambda space, budget=None: n
            try:
                super().__init__(*a, **k)
            finally:
                bt.default_n_init = old
    return WithInit


for cls in (OptunaGP5, with_init(T.BoAnonGP, 10), with_init(T.BoAnon, 10), with_init(T.BoAnonGP, 8),
            with_init(T.BoAnon, 8)):
    T.TUNERS[cls.name] = cls

if __name__ == "__main__":
    from benchmarks import run
    run.main(sys.argv[1:])
