"""URL and YAML round trips (property tests) and the share URL's shape (SPEC 3)."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import codecs
from model.errors import ScenarioError
from model.evaluate import sweep
from model.overrides import resolve
from tests.helpers import finite, scenarios
from ui.lenses import PAGE_OF


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_url_round_trip_is_exact(s):
    assert codecs.from_url(codecs.to_url(s, PAGE_OF["roofline"].url("http://h:1"))) == s


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_yaml_round_trip_is_exact(s):
    assert codecs.from_yaml(codecs.to_yaml(s)) == s


@settings(max_examples=60, deadline=None)
@given(scenarios(), st.floats(1.01, 10, **finite))
def test_more_bandwidth_never_slows_a_step(s, factor):
    faster = s.model_copy(
        update={
            "hardware": s.hardware.model_copy(
                update={"hbm_bandwidth_tb_s": s.hardware.hbm_bandwidth_tb_s * factor}
            )
        }
    )
    grid = [1, 2, 7, 64, 300, 4096]
    assert all(sweep(faster, grid)["t_step_s"] <= sweep(s, grid)["t_step_s"] * (1 + 1e-12))


@settings(max_examples=60, deadline=None)
@given(scenarios())
def test_larger_batch_never_lowers_aggregate_tokens_while_memory_bound(s):
    s = s.model_copy(update={"cuda_graphs": "none", "launch_model": "additive"})
    sw = sweep(s, range(1, 1025))
    mem = sw["bound"] == "memory"
    tps = sw["tokens_per_s"]
    ok = [tps[i + 1] >= tps[i] * (1 - 1e-12) for i in range(len(tps) - 1) if mem[i] and mem[i + 1]]
    assert all(ok)


def test_url_carries_only_what_differs_from_the_base(scenario):
    s = scenario(scenario="seed-3b-4090", weights_dtype="int4")
    assert codecs.to_query(s) == "scenario=seed-3b-4090&engine=ideal@2026.11&weights_dtype=int4"
    # the engine is always named with its version: a link keeps its numbers after a revision
    assert codecs.to_url(scenario()) == "http://localhost:8501/?engine=vllm@2026.12.10"
    url = codecs.to_url(
        scenario(hardware="rtx-4090", hardware__hbm_bandwidth_tb_s=1.0),
        PAGE_OF["cold_start"].url("https://whatif.example"),
    )
    assert (
        url == "https://whatif.example/Cold_start?engine=vllm@2026.12.10&hardware=rtx-4090"
        "&hardware.hbm_bandwidth_tb_s=1.0"
    )


def test_inline_hardware_in_yaml_round_trips_through_the_url():
    text = """
hardware:
  id: my-gpu
  name: My GPU
  memory_gb: 48
  hbm_bandwidth_tb_s: 0.96
  peak_tflops: {bf16: 181, fp8: 362}
  h2d_gb_s: 25
  interconnect_gb_s: 32
  gpu_hour_usd: 1.1
model:
  name: Tiny
  params_b: 0.5
  layers: 24
  hidden: 896
  heads: 14
  kv_heads: 2
  head_dim: 64
  vocab: 151936
gpus: 1
"""
    s = codecs.from_yaml(text)
    assert s.hardware.id == "my-gpu" and s.hardware.peak_tflops == {"bf16": 181, "fp8": 362}
    assert s.model.id == "custom" and s.model.layers == 24
    assert codecs.from_url(codecs.to_url(s)) == s
    assert codecs.from_yaml(codecs.to_yaml(s)) == s


def test_float_text_is_exact():
    for x in (0.1, 1 / 3, 3.35, 1e-7, 989.0):
        assert float(codecs._text(x)) == x and not math.isnan(x)


def test_yaml_upload_bad_files_are_refused_with_a_message():
    cases = [
        (b"- a\n- b\n", "mapping"),
        (b"!!python/object/apply:os.system ['echo pwned']\n", "not valid YAML"),
        (b"\xff\xfe\x00binary", "UTF-8"),
        (b"batch: 1\n" + b"#" * 200_000, "at most"),
    ]
    for data, words in cases:
        scenario, errors = codecs.from_yaml_upload(data)
        assert scenario is None and words in str(errors[0])


def test_yaml_upload_keeps_good_keys_beside_bad_ones():
    scenario, errors = codecs.from_yaml_upload(
        b"scenario: seed-3b-4090\nbatch: abc\nweights_dtype: int4\n"
    )
    assert scenario.weights_dtype == "int4" and scenario.batch == 1
    assert [e.key for e in errors] == ["batch"]


# --- resolve's trial copy and the shared base (issue 22: the copies were most of its time) ---

_TRIAL_KEYS = [
    "batch",
    "capture_sizes",
    "hardware.name",
    "hardware.peak_tflops.bf16",
    "hardware.peak_tflops.fp4",
    "hardware.sources.hbm",
    "model.layers",
    "model.sources.params",
]


@settings(max_examples=60, deadline=None)
@given(
    base=st.sampled_from([None, "seed-3b-4090", "mixtral-fp8-2xh100"]),
    key=st.sampled_from(_TRIAL_KEYS),
    value=st.one_of(st.integers(1, 999), st.text(max_size=8), st.just("none")),
)
def test_a_trial_change_never_reaches_the_state_it_was_copied_from(base, key, value):
    import copy

    from model import overrides

    state = overrides.shared_base(base).model_dump()
    before = copy.deepcopy(state)
    trial = overrides._trial_copy(state, key)  # noqa: SLF001
    try:
        overrides._set(trial, key, value)  # noqa: SLF001
    except ScenarioError:
        pass
    assert state == before


def test_the_shared_base_is_not_changed_by_resolving_or_writing_links():
    from model import overrides

    before = [overrides.shared_base(n).model_dump() for n in (None, "seed-3b-4090")]
    s, _ = resolve(
        [("scenario", "seed-3b-4090"), ("hardware.peak_tflops.bf16", 1), ("model.layers", 3)],
        strict=False,
    )
    codecs.to_params(s)
    resolve([("hardware.sources.x", "y"), ("batch", 7)], strict=False)
    assert [overrides.shared_base(n).model_dump() for n in (None, "seed-3b-4090")] == before
