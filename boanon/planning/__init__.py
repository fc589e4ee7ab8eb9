"""Deadline- and cost-aware tuning jobs (after RubberBand, EuroSys'21): which machines, how
many per stage, what it will take and cost, and running that plan on a Dask cluster.

instances.py (the machines one may rent) -> durations.py (measured trial times) ->
simulator.py (Monte-Carlo job under a plan) -> planner.py (cheapest plan meeting a deadline) ->
plan.py (the plan and its JSON file) -> run.py (``boanon tune --plan``: scale Dask per stage).
"""
