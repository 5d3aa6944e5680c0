import pytest

from model.overrides import resolve


@pytest.fixture
def scenario():
    """Build a scenario from key=value overrides, strictly (the CLI's path)."""

    def build(**overrides):
        pairs = [(k.replace("__", "."), v) for k, v in overrides.items()]
        return resolve(pairs, strict=True)[0]

    return build
