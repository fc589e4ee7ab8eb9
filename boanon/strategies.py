"""The names of the tuning strategies, in a module of their own: reading a tuning YAML
(:mod:`boanon.config`) checks a strategy's name without importing the tuner and its models."""

#: ``structured`` (the learned graph's model or the plain GP, whichever cross-validates better),
#: ``gp`` (the plain GP only), ``multitask`` (the coregionalised GP over the objectives, related
#: outputs and related tasks) and ``random``.
STRATEGIES = ("structured", "gp", "multitask", "random")
