"""Built-in targets: runners (and their search spaces) for the real systems BoAnon tunes."""
from boanon.targets import (
    rocksdb,  # noqa: F401  (registers the runner)
    sgd,  # noqa: F401  (registers the runner)
    zigzag,  # noqa: F401  (registers the runner)
)
