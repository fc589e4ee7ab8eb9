import numpy as np
import pytest

from boanon.errors import ConfigError
from boanon.objectives import Objective, parse_objectives


def test_directions_and_signs():
    lo, hi = Objective("latency"), Objective("throughput", "max")
    assert hi.direction == "maximize" and lo.direction == "minimize"
    assert lo.sign == 1.0 and hi.sign == -1.0
    np.testing.assert_allclose(hi.to_minimize([1.0, 2.0]), [-1.0, -2.0])
    assert hi.from_minimize(hi.to_minimize(3.0)) == 3.0
    assert hi.better(5.0, 4.0) and lo.better(4.0, 5.0)


def test_invalid_direction():
    with pytest.raises(ValueError, match="direction"):
        Objective("x", "up")


def test_parse_from_config_names_field():
    objs = parse_objectives([{"name": "a", "direction": "maximize"}, "b"], source="tune.yaml")
    assert objs == [Objective("a", "maximize"), Objective("b", "minimize")]
    with pytest.raises(ConfigError, match=r"tune.yaml: objectives\[1\]: .*direction"):
        parse_objectives([{"name": "a"}, {"name": "b", "direction": "sideways"}], source="tune.yaml")
    with pytest.raises(ConfigError, match="duplicate"):
        parse_objectives(["a", "a"])
    with pytest.raises(ConfigError, match="at least one"):
        parse_objectives([])
