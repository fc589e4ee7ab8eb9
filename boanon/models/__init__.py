"""Probabilistic models compiled from the causal graph (structured) or over all parameters (plain GP)."""

from boanon.models.base import Surrogate
from boanon.models.dag import DAGSurrogate
from boanon.models.plain import PlainGPSurrogate

__all__ = ["DAGSurrogate", "PlainGPSurrogate", "Surrogate"]
