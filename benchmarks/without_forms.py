"""Diagnostic: ``benchmarks.run`` with the structured surrogate's parametric forms switched off.

Every node the learned graph leaves to a GP then keeps its GP (:mod:`boanon.models.forms` finds
no form), so a comparison with the ``boanon`` rows of the same command measures what the forms
do to the structured strategy. The rows are still labelled ``boanon``: write them to a folder of
their own.

    python -m benchmarks.without_forms --problems fn-dropwave --tuners boanon --seeds 10 \\
        --budget 15 --out benchmarks/results/away-r4/noforms-15
"""

from __future__ import annotations

import sys

import boanon.models.dag as dag
from benchmarks.run import main
from benchmarks.tuners import with_fixed_hash_seed

if __name__ == "__main__":
    with_fixed_hash_seed()  # as benchmarks.run: a SMAC run repeats
    dag.choose_form = lambda *args, **kwargs: None  # the DAG surrogate's only use of the forms
    main(sys.argv[1:])
