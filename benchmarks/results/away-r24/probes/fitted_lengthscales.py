"""Round 24 probe: BoAnon's plain GP fitted to Optuna GP's first 5 trials of synthetic-40
(n_startup=5): its fitted lengthscales and noise, and its predictions at the default and at
Optuna's next pick.

    PYTHONPATH=. python benchmarks/results/away-r24/probes/fitted_lengthscales.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_variants  # noqa: E402,F401  (registers optuna-gp5)

from benchmarks.step_through import fresh_run  # noqa: E402
from boanon.models.plain import PlainGPSurrogate  # noqa: E402
from boanon.table import TrialRecord, records_to_table  # noqa: E402

for seed in range(10):
    problem, tuner = fresh_run("synthetic-40", "optuna-gp5", seed, 6)
    configs, records = [], []
    for _ in range(6):
        config = tuner.ask()
        record = problem.evaluate(config)
        tuner.tell(record)
        configs.append(dict(config))
        records.append(record)
    obj = problem.objective
    table = records_to_table([TrialRecord(f"t{i}", c, {}, dict(r.objectives))
                              for i, (c, r) in enumerate(zip(configs[:5], records[:5], strict=True))])
    fitted = PlainGPSurrogate(problem.space, [obj]).fit(table)
    desc = fitted.models_[obj.name].describe()
    ls = np.array(desc["lengthscales"])
    print(seed, "noise_var", round(desc["noise_var"], 2), "lengthscales min/median/max",
          ls.min().round(3), np.median(ls).round(3), ls.max().round(3))
    mean, sd = fitted.predict([configs[0], configs[5]], np.random.default_rng(0), n_samples=256)[obj.name]
    print("   pred default", mean[0].round(2), sd[0].round(2), "optuna pick", mean[1].round(2),
          sd[1].round(2), "true", records[5].objectives[obj.name])
