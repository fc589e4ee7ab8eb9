"""Learning time on two tables: the RocksDB mixgraph dataset's first 40 trials (its space's
parameters, 812 columns) and a 239-variable synthetic table of 100 trials. Run it as a script
under two checkouts to compare the learners side by side (``farm-bench --vs``):

    farm-bench -n 5 --timeout 900 --vs "env PYTHONPATH=/old/checkout python benchmarks/learn_time.py" \\
        -- env PYTHONPATH=$PWD python benchmarks/learn_time.py

As a script, ``boanon`` comes from ``PYTHONPATH`` (the script's folder is first on the path, not
the current directory); the tables come from this checkout's ``datasets/``, read with the API
both checkouts have.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import pandas as pd
import yaml

from boanon.adapters import ingest
from boanon.learners import learn
from boanon.synthetic import SyntheticSystem
from boanon.table import with_objectives

DATASET = Path(__file__).resolve().parent.parent / "datasets" / "rocksdb-mixgraph"


def space_table(path: Path, objective: str) -> pd.DataFrame:
    """The dataset's trials as a run towards ``objective`` over its ``dataset.yaml`` space sees them
    (the RocksDB logs name every option RocksDB has; a run's table holds only the space's). Here,
    not in a shared module, so that this script runs against an older checkout's ``boanon``."""
    table = with_objectives(ingest(path).table, [objective], [])
    space = set(yaml.safe_load((path / "dataset.yaml").read_text())["space"])
    return table.drop(columns=[c for c in table.columns if c.startswith("param:") and c[6:] not in space])


def tables() -> dict[str, pd.DataFrame]:
    rocksdb = space_table(DATASET, "mixgraph_micros_per_op")
    system = SyntheticSystem(n_params=60, n_groups=12, chain_length=4, n_distractors=120, n_duplicates=10,
                             seed=0)
    return {"rocksdb-mixgraph, 40 trials": rocksdb.iloc[:40].reset_index(drop=True),
            "synthetic, 239 variables x 100 trials": system.sample_table(100, seed=0)}


def main() -> None:
    warnings.simplefilter("ignore")
    for name, table in tables().items():
        start = time.process_time()
        learn(table)
        print(f"{name}: {time.process_time() - start:.2f} CPU-s", flush=True)


if __name__ == "__main__":
    main()
