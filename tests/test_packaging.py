"""The project's metadata builds with the setuptools a fresh machine's pip takes (the newest):
its build backend warned that a licence given as a TOML table stops building on 2027-02-18."""

import re
from pathlib import Path

PYPROJECT = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()


def test_the_licence_is_an_spdx_expression_and_the_backend_reads_one():
    assert re.search(r'^license = "[A-Za-z0-9.-]+"$', PYPROJECT, re.M)  # PEP 639, not {text = ...}
    minimum = re.search(r'^requires = \["setuptools>=(\d+)"\]', PYPROJECT, re.M)
    assert minimum and int(minimum.group(1)) >= 77  # the first to read PEP 639's licence
