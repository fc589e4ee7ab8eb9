"""``python -m boanon``: the ``boanon`` command, for an environment whose scripts are not on PATH."""

from boanon.cli import main

if __name__ == "__main__":
    main(prog_name="boanon")
