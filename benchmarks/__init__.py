"""Benchmarks: BoAnon against the tuners users would otherwise pick, on the same problems and budgets.

``python -m benchmarks.run --quick`` runs the quick suite; ``benchmarks/README.md`` has the results,
the full-run command and its duration.
"""
