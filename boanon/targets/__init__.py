"""Built-in targets: runners (and their search spaces) for the real systems BoAnon tunes."""
from boanon.targets import sgd  # noqa: F401  (registers the runner)
