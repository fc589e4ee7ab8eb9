"""Built-in targets: runners (and their search spaces) for the real systems BoAnon tunes."""
