"""The accuracy panel ("How far off can this be?", issue 20): the recorded summary is current,
it reports held-out figures beside in-sample ones, docs/accuracy.md is written from it, and the pages show it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from model import accuracy, engines
from tests.pages import open_page, page_test
from tools import published

ROOT = Path(__file__).resolve().parent.parent


def test_the_recorded_summary_is_current():
    recorded = json.loads(published.ACCURACY_FILE.read_text())
    got = published.accuracy()
    assert recorded["categories"] == json.loads(json.dumps(got["categories"])), (
        "presets/accuracy.json is out of date: run python -m tools.published --write"
    )
    assert recorded["engine_versions"] == {
        k: p.version for k, p in engines.engine_profiles().items()
    }


def test_every_row_states_how_it_was_used():
    splits = {r["split"] for r in published.rows()}
    assert splits == {"fit", "seen", "held_out"}
    held = [r for r in published.rows() if r["split"] == "held_out"]
    assert len(held) >= 15


def test_held_out_rows_a_later_choice_saw_are_counted_apart():
    """A held-out row whose error was in view when a later profile number was chosen
    (``in_view_of=`` in ``extra``) is not fitted on but not blind either: the panel counts
    them and gives the median of the others, by hand here."""

    def rec(err, in_view=False):
        return {"error": err, "split": "held_out", "in_range": None, "in_view": in_view,
                "category": "decode step", "family": None}  # fmt: skip

    recs = [rec(0.1), rec(0.2), rec(0.3), rec(0.5, True), rec(0.9, True)]
    held = published.accuracy(recs)["categories"]["decode step"]["held_out"]
    assert (held["n"], held["median_pct"], held["in_view"]) == (5, 30.0, 2)
    assert held["blind_median_pct"] == 20.0  # 0.1, 0.2, 0.3
    tagged = [r for r in published.rows() if "in_view_of=" in r["extra"]]
    assert tagged and all(r["split"] == "held_out" for r in tagged)
    acc = accuracy.accuracy()
    assert acc.overall.held_out.in_view == len(tagged)
    mi300x = [r for r in tagged if r["gpu"] == "mi300x"]
    assert acc.categories["decode step: AMD MI300X"].held_out.in_view == len(mi300x)
    row = next(r for r in accuracy.rows(["decode step"]))
    decode = [r for r in tagged if published.CATEGORY[r["quantity"]] == "decode step"]
    assert row["held out: in view of a later change"] == len(decode)
    assert (
        row["held out, blind: median error [%]"]
        == acc.categories["decode step"].held_out.blind_median_pct
    )


def test_held_out_figures_stand_beside_the_in_sample_ones():
    acc = accuracy.accuracy()
    for cat in ("decode step", "start-up", "serving, light load"):
        assert acc.categories[cat].held_out.n > 0, cat
        assert acc.categories[cat].in_sample.n > 0, cat
    # the ranges hold most start-up measurements they were drawn from
    assert acc.categories["start-up"].in_sample.in_range_pct >= 70


def test_the_accuracy_page_is_written_from_the_recorded_figures():
    """``docs/accuracy.md`` is the recorded summary's table, stated there once (the README and
    the other docs link to it)."""
    recorded = json.loads(published.ACCURACY_FILE.read_text())
    assert published.ACCURACY_PAGE.read_text() == published.accuracy_page(recorded), (
        "docs/accuracy.md is out of date: run python -m tools.published --write"
    )
    acc = accuracy.accuracy()
    page = published.ACCURACY_PAGE.read_text()
    for cat in ("decode step", "start-up"):
        c = acc.categories[cat]
        row = next(line for line in page.splitlines() if line.startswith(f"| {cat} |"))
        numbers = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) %", row)]
        assert c.in_sample.median_pct in numbers and c.held_out.median_pct in numbers, row
    assert "| decode step |" not in (ROOT / "README.md").read_text()  # linked, not copied


@pytest.mark.parametrize(
    ("page", "lens"),
    [
        ("pages/1_Roofline.py", "roofline"),
        ("pages/4_Cold_start.py", "cold_start"),
        ("pages/2_Serving.py", "serving"),
    ],
)
def test_each_lens_says_how_far_off_its_figures_can_be(page, lens):
    at = open_page(page)
    # the panel is built only while its popover is open
    assert "**How far off can this be?**" not in [m.value for m in at.markdown]
    at.session_state["p_accuracy"] = True
    at.run()
    assert not at.exception
    shown = [m.value for m in at.markdown]
    assert "**How far off can this be?**" in shown
    table = at.dataframe[-1].value if at.dataframe else None
    names = set(accuracy.LENS_CATEGORIES[lens])
    assert any(df.value is not None and names & set(df.value.index) for df in at.dataframe), table


def test_the_landing_page_has_the_whole_panel():
    at = open_page("app.py", state={"x_accuracy_home": True})
    frames = [df.value for df in at.dataframe if df.value is not None]
    assert any(set(accuracy.accuracy().categories) <= set(f.index) for f in frames)


def test_the_decode_figure_is_split_by_the_kind_of_run():
    # dense models on NVIDIA GPUs, mixture-of-experts models on NVIDIA GPUs, AMD MI300X: every
    # decode row falls in one, so a reader sees where the decode figure is firm
    acc = accuracy.accuracy()
    whole = acc.categories["decode step"]
    parts = [acc.categories[name] for name in accuracy.DECODE_FAMILIES]
    for split in ("in_sample", "held_out"):
        assert sum(getattr(p, split).n for p in parts) == getattr(whole, split).n
    at = page_test("pages/1_Roofline.py", timeout=120)
    at.session_state["p_accuracy"] = True
    at.run()
    frames = [df.value for df in at.dataframe if df.value is not None]
    assert any(set(accuracy.DECODE_FAMILIES) <= set(f.index) for f in frames)


def test_the_serving_figure_is_split_by_the_kind_of_figure_too():
    # issue 39 reports TTFT, TPOT/ITL, throughput and end-to-end latency apart: every serving
    # figure falls in exactly one kind, so the kinds add up to the load classes
    acc = accuracy.accuracy()
    classes = [
        acc.categories[f"serving, {c}"] for c in ("concurrency 1", "light load", "saturation")
    ]
    kinds = [acc.categories[name] for name in accuracy.SERVING_METRICS]
    for split in ("in_sample", "held_out"):
        assert sum(getattr(k, split).n for k in kinds) == sum(getattr(c, split).n for c in classes)
    # the lens's one-line headline keeps to the load classes; the panel has the kinds
    line = accuracy.headline(accuracy.LENS_CATEGORIES["serving"])
    assert "serving, saturation" in line and "TPOT and ITL" not in line
    assert set(accuracy.SERVING_METRICS) <= set(accuracy.LENS_CATEGORIES["serving"])


def test_a_result_name_the_table_does_not_compare_is_refused():
    from tools.published_serving import serving_metric

    assert serving_metric("p99_itl_ms") == "serving: TPOT and ITL"
    assert serving_metric("total_token_throughput") == "serving: throughput"
    with pytest.raises(ValueError, match="goodput"):
        serving_metric("goodput")


def test_the_serving_figures_are_also_split_by_source_family():
    # GPUStack's pages hold most of the table, so the printout also says how the figures of the
    # other sources fare; hand-made records: the families and classes partition each split
    from tools.published_serving import by_source, source_family

    assert source_family("gpustack-qwen3-14b-h100-vllm-bf16-default-sgpt-L89") == "GPUStack"
    assert source_family("nim180-2xh100-llama33-70b-fp8-5000x500-c50") == "other sources"
    recs = [
        {
            "run": "gpustack-a",
            "metric": "p99_itl_ms",
            "error": 0.5,
            "class": "saturation",
            "held_out": True,
        },
        {
            "run": "gpustack-b",
            "metric": "mean_ttft_ms",
            "error": -0.1,
            "class": "light load",
            "held_out": True,
        },
        {
            "run": "vx-c",
            "metric": "output_throughput",
            "error": 0.3,
            "class": "saturation",
            "held_out": True,
        },
        {
            "run": "vx-d",
            "metric": "output_throughput",
            "error": -0.2,
            "class": "saturation",
            "held_out": False,
        },
        {"run": "vx-e", "skipped": "does not fit"},
    ]
    out = by_source(recs)
    assert out["held out · GPUStack · all"] == (pytest.approx(0.3), 2)
    assert out["held out · GPUStack · saturation"] == (pytest.approx(0.5), 1)
    assert out["held out · other sources · saturation"] == (pytest.approx(0.3), 1)
    assert out["fitting · other sources · all"] == (pytest.approx(0.2), 1)
    assert out["fitting · GPUStack · all"] == (None, 0)


def test_a_server_flag_a_run_states_is_simulated():
    # issue 17788's server ran --max-num-seqs 32: its notes say set:max_num_seqs=32, and the
    # comparison must simulate that cap, not the release's default of 1024
    from tools.published_serving import runs, scenario_of, server_settings

    assert server_settings("a; set:max_num_seqs=32 (--max-num-seqs 32); b") == [
        ("max_num_seqs", "32")
    ]
    assert server_settings("no flags here; max_num_seqs=32") == []
    row = runs()["vx-is17788-qwen3-32b-h100nvl-sgpt-flood"][0]
    assert scenario_of(row).max_num_seqs == 32
    plain = dict(row, notes=row["notes"].replace("set:max_num_seqs=32", ""))
    assert scenario_of(plain).max_num_seqs != 32
    # a flag is validated like any --set: a bad value names its key
    bad = dict(row, notes=row["notes"] + "; set:max_num_seqs=-3")
    with pytest.raises(ValueError, match="max_num_seqs"):
        scenario_of(bad)


def test_a_published_run_is_simulated_with_all_its_requests():
    # a flood's TTFT is its queue: the 3,000-request SGLang flood must not be cut to 1,000
    from tools.published_serving import MAX_SIMULATED_REQUESTS, runs, scenario_of

    row = runs()["sx-dc-l70b-h200x4-r1k1k-flood"][0]
    assert row["num_requests"] == "3000"
    assert scenario_of(row).num_requests == 3000
    assert scenario_of(dict(row, num_requests="10000000")).num_requests == MAX_SIMULATED_REQUESTS


def test_a_run_served_with_async_scheduling_is_simulated_with_it():
    # GPUStack's server commands that pass --async-scheduling carry set:async_scheduling=true;
    # vLLM 0.11 runs without it take the release's default, off
    from tools.published_serving import runs, scenario_of

    table = runs()
    flagged = [r for r, rows in table.items() if "--async-scheduling" in rows[0]["notes"]]
    assert len(flagged) >= 28
    for run in flagged:
        assert scenario_of(table[run][0]).async_scheduling_on, run
    plain = table["gpustack-gpt-oss-20b-h100-vllm-fp4-default-sgpt-L88"][0]
    assert "--async-scheduling" not in plain["notes"]
    assert not scenario_of(plain).async_scheduling_on


def test_a_grid_can_set_numbers_on_one_engine_s_current_runs_only():
    # tools.serving_grid --only vllm: the runs the current vLLM numbers serve (its current
    # version, the band that takes them, the older rows at the default profile), not the band
    # that states its own (vllm@0.9) nor SGLang's
    from tools.published_serving import engine_of, runs
    from tools.serving_grid import _served_by

    table = runs()
    mine = _served_by("vllm")
    by_engine = {}
    for run, rows in table.items():
        by_engine.setdefault(engine_of(rows[0]), set()).add(mine(run))
    assert by_engine["vllm@0.11"] == {True} and by_engine[None] == {True}
    assert by_engine["vllm@0.9"] == {False}
    assert all(v == {False} for k, v in by_engine.items() if k and k.startswith("sglang"))


def test_streams_are_little_s_law_on_a_run_s_own_figures():
    """Sequences streaming at once = output tokens per second × the gap between one
    sequence's tokens: 3,174 tok/s at a 60 ms median ITL is 190 streams (GPUStack's
    Qwen3-14B H100 ShareGPT flood, by hand)."""
    from tools.published_serving import run_report, streams

    assert streams(3173.9, 0.05999) == pytest.approx(190.4, abs=0.1)
    lines = run_report("gpustack-qwen3-14b-h100-vllm-bf16-default-sgpt-L89")
    assert lines[0].startswith("gpustack-qwen3-14b-h100-vllm-bf16-default-sgpt-L89 (fit)")
    last = lines[-1]
    assert "streams (throughput × median ITL): measured 190," in last
    modelled = float(re.search(r"modelled (\d+)", last).group(1))
    assert modelled > 0
    assert run_report("no-such-run") == []


def test_a_chat_endpoint_run_prefills_the_chat_template_too():
    # vllm bench serve prints the prompt it drew; through /v1/chat/completions the server
    # prefills the model's chat template around it (presets/models.yaml chat_template_tokens:
    # Qwen3's ChatML turn and generation prompt, 8 tokens by hand: <|im_start|> twice,
    # <|im_end|>, user, assistant, three newlines)
    from model.presets import ModelPreset, model_presets
    from tools.published_serving import chat_template_tokens, runs, scenario_of

    row = runs()["gpustack-qwen3-14b-h100-vllm-bf16-default-rand4k-L346"][0]
    assert row["endpoint"] == "chat" and row["prompt_tokens"] == "4000"
    assert chat_template_tokens(row) == model_presets()["qwen3-14b"].chat_template_tokens == 8
    assert scenario_of(row).prompt_tokens == 4008
    assert chat_template_tokens(dict(row, endpoint="")) == 0
    assert scenario_of(dict(row, endpoint="")).prompt_tokens == 4000
    # a preset that states the tokens states where they come from
    spec = {k: v for k, v in model_presets()["qwen3-14b"].model_dump().items() if k != "id"}
    spec["sources"] = {k: v for k, v in spec["sources"].items() if k != "chat_template_tokens"}
    with pytest.raises(ValueError, match="sources is missing chat_template_tokens"):
        ModelPreset.model_validate(spec)


def test_a_total_token_rate_counts_the_prompt_as_the_benchmark_does():
    # vllm bench serve's total_token_throughput is (Total input tokens + generated) / duration,
    # its input the prompt it drew: 127,698 over 1,000 requests on GPUStack's Qwen3-14B 128/4
    # flood (5,796.73 tok/s = (127,698 + 4,000) / 22.72 s), a row of 128 prompt tokens. The
    # model prefills 128 + 8 chat template tokens, so its input rate is scaled by 128 / 136
    # and its output rate kept.
    from tools.published_serving import as_benchmark_counts, runs

    row = runs()["gpustack-qwen3-14b-h100-vllm-bf16-default-rand128-L396"][0]
    assert row["endpoint"] == "chat" and row["prompt_tokens"] == "128"
    fig = {"total_token_throughput": 1000.0, "output_throughput": 200.0, "mean_ttft_ms": 5.0}
    got = as_benchmark_counts(fig, row)
    assert got["total_token_throughput"] == pytest.approx(200.0 + 800.0 * 128 / 136, rel=1e-12)
    assert got["output_throughput"] == 200.0 and got["mean_ttft_ms"] == 5.0
    assert fig["total_token_throughput"] == 1000.0  # the model's own figures are not changed
    # through the completions endpoint the printed prompt is the prefilled one: no change
    assert as_benchmark_counts(fig, dict(row, endpoint="", prompt_tokens="128")) == fig
    # a prefix cache's hits are prefilled by nobody but counted by the benchmark: 128 / 96
    cached = dict(row, endpoint="", prompt_tokens="128", notes="prefix_cached_tokens=32")
    got = as_benchmark_counts(fig, cached)["total_token_throughput"]
    assert got == pytest.approx(200.0 + 800.0 * 128 / 96, rel=1e-12)
