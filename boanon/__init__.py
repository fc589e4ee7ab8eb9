"""BoAnon: structured Bayesian optimisation with a causal graph learned from a system's logs."""

__version__ = "0.1.0"
