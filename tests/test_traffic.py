"""Traffic profiles (SPEC 4.4, ``presets/traffic.yaml``): every profile validates and is sourced,
bad variants are refused with messages that name the profile and the field, the default exists."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from numpy.testing import assert_allclose

from model import datafiles, traffic
from model.errors import ScenarioError
from model.traffic import (
    DEFAULT_TRAFFIC,
    TrafficProfile,
    hourly_rate_per_s,
    parse_profiles,
    traffic_profile,
    traffic_profiles,
)

EXPECTED = {"steady", "business-hours", "bursts", "nightly-batch", "spiky-internal"}


def _raw() -> dict:
    return yaml.safe_load((datafiles.PRESETS_DIR / "traffic.yaml").read_text(encoding="utf-8"))


def test_every_profile_validates_and_is_sourced():
    profiles = traffic_profiles()
    assert set(profiles) == EXPECTED
    for key, p in profiles.items():
        assert isinstance(p, TrafficProfile) and p.id == key
        assert len(p.requests_per_hour) == 24
        assert all(np.isfinite(r) and r >= 0 for r in p.requests_per_hour)
        assert p.prompt_tokens >= 1 and p.output_tokens >= 1
        assert "\n" not in p.rationale and p.rationale
        for field in ("requests_per_hour", "prompt_tokens", "output_tokens"):
            assert p.sources[field].strip(), (key, field)
        # a single team's deployment: tens to a few thousand requests in the busiest hour
        assert 10 <= max(p.requests_per_hour) <= 5000, key


def test_the_default_exists():
    assert DEFAULT_TRAFFIC == "business-hours"
    assert DEFAULT_TRAFFIC in traffic_profiles()
    assert traffic_profiles() is traffic_profiles()  # cached


def test_the_shapes_say_what_their_names_say():
    p = traffic_profiles()
    assert len(set(p["steady"].requests_per_hour)) == 1
    office = p["business-hours"].requests_per_hour
    assert min(office[9:17]) > 10 * max(office[0:6])
    spiky = p["spiky-internal"].requests_per_hour
    assert sum(r == 0 for r in spiky) >= 12  # long zero troughs
    night = p["nightly-batch"].requests_per_hour
    assert max(night[1:5]) == max(night) and sum(night[1:5]) > sum(night) / 2


def test_hourly_rate_per_s():
    p = traffic_profiles()["steady"]
    rate = hourly_rate_per_s(p, 1.0)
    assert rate.shape == (24,) and rate.dtype == np.float64
    assert_allclose(rate, 600 / 3600)
    assert_allclose(hourly_rate_per_s(p, 2.5), 2.5 * 600 / 3600)
    assert_allclose(hourly_rate_per_s("business-hours", 1.0)[10], 1400 / 3600)
    assert_allclose(hourly_rate_per_s(p, 0), 0.0)
    for bad in (-1, float("nan"), float("inf"), "x", 1e9):
        with pytest.raises(ScenarioError) as err:
            hourly_rate_per_s(p, bad)
        assert err.value.key == "rate_scale"


def test_an_unknown_profile_names_the_accepted_ones():
    with pytest.raises(ScenarioError) as err:
        traffic_profile("weekend")
    assert err.value.key == "traffic" and "business-hours" in err.value.message
    assert traffic_profile(" Steady ").id == "steady"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"requests_per_hour": [10.0] * 23}, "needs exactly 24 values, one per hour 0..23; got 23"),
        ({"requests_per_hour": [10.0] * 25}, "got 25"),
        (
            {"requests_per_hour": [10.0] * 23 + [-1.0]},
            "requests_per_hour[23] (hour 23): Input should be greater than or equal to 0",
        ),
        ({"requests_per_hour": [10.0] * 23 + [float("nan")]}, "requests_per_hour[23] (hour 23)"),
        ({"requests_per_hour": "600"}, "list of 24 numbers"),
        ({"peak_hour": 10}, "peak_hour: Extra inputs are not permitted"),
        ({"prompt_tokens": 0}, "prompt_tokens"),
        ({"output_tokens": float("inf")}, "output_tokens"),
        ({"rationale": "two\nlines"}, "one line"),
        ({"sources": {"requests_per_hour": "x", "prompt_tokens": "y"}}, "missing output_tokens"),
    ],
)
def test_bad_profiles_are_refused_naming_the_profile_and_the_field(change, named):
    raw = _raw()
    raw["steady"] = {**raw["steady"], **change}
    with pytest.raises(ValueError) as err:
        parse_profiles(raw)
    assert "traffic.yaml: profile 'steady' is invalid" in str(err.value)
    assert named in str(err.value)


def test_a_bad_file_is_refused_through_the_loader(tmp_path, monkeypatch):
    raw = _raw()
    raw["business-hours"]["requests_per_hour"] = raw["business-hours"]["requests_per_hour"][:23]
    (tmp_path / "traffic.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    monkeypatch.setattr(traffic, "PRESETS_DIR", tmp_path)
    traffic.traffic_profiles.cache_clear()
    try:
        with pytest.raises(ValueError, match="'business-hours' is invalid.*got 23"):
            traffic.traffic_profiles()
        del raw["business-hours"]
        (tmp_path / "traffic.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
        traffic.traffic_profiles.cache_clear()
        with pytest.raises(ValueError, match="needs the profile 'business-hours'"):
            traffic.traffic_profiles()
    finally:
        traffic.traffic_profiles.cache_clear()


def test_a_profile_that_is_not_a_mapping_is_refused():
    with pytest.raises(ValueError, match="'steady' must be a mapping"):
        parse_profiles({"steady": [1, 2, 3]})
    with pytest.raises(ValueError, match="mapping of profile ids"):
        parse_profiles([])
