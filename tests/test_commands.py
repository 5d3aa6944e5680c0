"""The commands that run a scenario (issue 43, section 2): every flag carries the scenario's
value, the text is the argv a shell reads back, the manifest parses and requests the GPUs of a
replica, and a flag the engine release lacks is named."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

from model import codecs, commands, speculative
from model.overrides import resolve
from ui.lenses import PAGE_OF
from whatif.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _s(**kw):
    return resolve([(k, str(v)) for k, v in kw.items()], strict=True)[0]


def _args(cmd: commands.Command) -> dict[str, str | None]:
    """``--flag value`` pairs of a command's words (a flag without a value maps to None)."""
    out: dict[str, str | None] = {}
    words = cmd.argv
    for i, w in enumerate(words):
        if w.startswith("--"):
            nxt = words[i + 1] if i + 1 < len(words) else None
            out[w] = None if nxt is None or nxt.startswith("--") else nxt
    return out


def _shell_words(text: str) -> list[list[str]]:
    """The commands of a text as a shell reads them (comments dropped)."""
    lines = [ln for ln in text.replace("\\\n", " ").splitlines() if not ln.startswith("#")]
    return [shlex.split(block) for block in "\n".join(lines).split("\n\n") if block.strip()]


SCENARIOS = [
    {},
    {"gpus": 2, "kv_dtype": "fp8", "max_num_seqs": 64, "max_num_batched_tokens": 4096},
    {"gpus": 1, "model": "llama-3.1-8b", "weights_dtype": "bf16", "cuda_graphs": "none"},
    {
        "model": "qwen3-30b-a3b",
        "gpus": 2,
        "data_parallel": 2,
        "expert_parallel": "true",
        "gpu_memory_utilization": 0.85,
        "prefix_caching": "false",
    },
    {"model": "llama-3.1-8b", "gpus": 1, "speculative": "eagle3", "num_speculative_tokens": 5},
    {"model": "deepseek-r1", "hardware": "h200", "gpus": 8, "speculative": "mtp"},
    {"model": "llama-3.1-8b", "gpus": 1, "speculative": "draft"},
    {"model": "llama-3.1-8b", "gpus": 1, "loader": "runai_streamer", "api_server_count": 4},
    {"model": "llama-3.1-8b", "gpus": 1, "sleep_level": 1, "cuda_graphs": "piecewise"},
    {"model": "llama-3.1-8b", "gpus": 1, "async_scheduling": "false"},
]


@pytest.mark.parametrize(
    "kw", SCENARIOS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default"
)
def test_every_vllm_flag_is_the_scenarios_value(kw):
    s = _s(**kw)
    cmd, _ = commands.vllm_serve(s)
    a = _args(cmd)
    assert cmd.argv[:3] == ["vllm", "serve", commands.hf_repo(s)]
    assert int(a["--tensor-parallel-size"]) == s.gpus
    assert int(a.get("--data-parallel-size") or 1) == s.data_parallel
    assert ("--enable-expert-parallel" in a) == bool(s.expert_parallel)
    assert int(a["--max-num-seqs"]) == s.max_num_seqs
    assert int(a["--max-num-batched-tokens"]) == s.max_num_batched_tokens
    assert float(a["--gpu-memory-utilization"]) == pytest.approx(s.gpu_memory_utilization)
    assert (a.get("--kv-cache-dtype") == "fp8") == (s.kv_dtype == "fp8")
    assert int(a["--max-model-len"]) == s.prompt_tokens + s.output_tokens
    if s.weights_dtype in ("bf16", "fp16", "fp32"):
        assert (
            a["--dtype"]
            == {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}[s.weights_dtype]
        )
    elif s.weights_dtype == "fp8" and s.model.checkpoint_dtype != "fp8":
        assert a["--quantization"] == "fp8"
    else:
        assert "--quantization" not in a and "--dtype" not in a
    if s.cuda_graphs == "none":
        assert "--enforce-eager" in a and "--compilation-config" not in a
    else:
        config = json.loads(a["--compilation-config"])
        assert config["cudagraph_mode"] == s.cuda_graphs.upper()
        assert config["cudagraph_capture_sizes"] == list(s.capture_sizes)
    assert (
        a["--load-format"]
        == {"safetensors": "safetensors", "runai_streamer": "runai_streamer"}[s.loader]
    )
    if s.loader == "runai_streamer":
        assert json.loads(a["--model-loader-extra-config"]) == {"concurrency": s.concurrency}
    assert ("--enable-prefix-caching" in a) == s.prefix_caching_on
    assert ("--no-enable-prefix-caching" in a) == (not s.prefix_caching_on)
    # asynchronous scheduling: written where it differs from the release's default (off
    # before 0.14, the vllm profile's commands being written for 0.11.0)
    on_by_default = commands.at_least(commands.target(s).release, "0.14.0")
    assert ("--async-scheduling" in a) == (s.async_scheduling_on and not on_by_default)
    assert ("--no-async-scheduling" in a) == (not s.async_scheduling_on and on_by_default)
    assert int(a.get("--api-server-count") or 1) == s.api_server_count
    assert ("--enable-sleep-mode" in a) == (s.sleep_level > 0)
    if s.speculative == "none":
        assert "--speculative-config" not in a
    else:
        spec = json.loads(a["--speculative-config"])
        assert spec["num_speculative_tokens"] == speculative.k_of(s)
        if s.speculative == "draft":
            assert spec["model"] == "meta-llama/Llama-3.2-1B"  # the smallest Llama 3 preset
        else:
            assert spec["method"] == {"eagle3": "eagle3", "mtp": "mtp"}[s.speculative]


@pytest.mark.parametrize(
    "kw", SCENARIOS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default"
)
def test_every_sglang_flag_is_the_scenarios_value(kw):
    s = _s(**kw)
    cmd, _ = commands.sglang_serve(s)
    a = _args(cmd)
    assert a["--model-path"] == commands.hf_repo(s)
    assert int(a["--tp-size"]) == s.gpus
    assert int(a.get("--dp-size") or 1) == s.data_parallel
    assert ("--enable-dp-attention" in a) == (s.data_parallel > 1)
    if s.expert_parallel:
        assert int(a["--ep-size"]) == s.gpus * s.data_parallel
    assert int(a["--max-running-requests"]) == s.max_num_seqs
    assert int(a["--chunked-prefill-size"]) == s.max_num_batched_tokens
    assert float(a["--mem-fraction-static"]) == pytest.approx(s.gpu_memory_utilization)
    assert ("--disable-radix-cache" in a) == (not s.prefix_caching_on)
    assert ("--disable-overlap-schedule" in a) == (not s.async_scheduling_on)
    assert ("--disable-cuda-graph" in a) == (s.cuda_graphs == "none")
    if s.cuda_graphs != "none":
        assert int(a["--cuda-graph-max-bs"]) == max(s.capture_sizes)
    assert (a.get("--kv-cache-dtype") == "fp8_e4m3") == (s.kv_dtype == "fp8")
    if s.speculative != "none":
        assert int(a["--speculative-num-draft-tokens"]) == speculative.k_of(s) + 1


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"request_rate": "inf", "max_concurrency": 64, "num_requests": 500, "seed": 7},
        {"lengths": "random", "range_ratio": 0.5, "burstiness": 0.5, "request_rate": 3.5},
        {"shared_prefix_tokens": 512, "prompt_tokens": 2048, "output_tokens": 128},
    ],
)
def test_the_bench_reproduces_the_run_and_carries_its_link(kw):
    s = _s(**kw)
    link = codecs.to_url(s, PAGE_OF["serving"].url(codecs.DEFAULT_BASE_URL))
    cmd, _ = commands.vllm_bench_serve(s, link)
    a = _args(cmd)
    assert cmd.argv[:3] == ["vllm", "bench", "serve"] and a["--backend"] == "vllm"
    rate = a["--request-rate"]
    assert rate == "inf" if s.request_rate == "inf" else float(rate) == s.request_rate
    assert int(a["--num-prompts"]) == s.num_requests
    assert int(a["--seed"]) == s.seed
    assert int(a.get("--max-concurrency") or 0) == (s.max_concurrency or 0)
    assert float(a.get("--burstiness") or 1) == s.burstiness
    prefix = s.shared_prefix_tokens
    assert int(a.get("--random-prefix-len") or 0) == prefix
    assert int(a["--random-input-len"]) + prefix == s.prompt_tokens
    assert int(a["--random-output-len"]) == s.output_tokens
    ratio = s.range_ratio if s.lengths == "random" else 0
    assert float(a["--random-range-ratio"]) == ratio
    assert "--ignore-eos" in a and "--save-result" in a
    key, _, value = a["--metadata"].partition("=")
    assert key == "whatif_link" and value == link
    # the link reopens this very scenario
    reopened, _ = resolve(parse_qsl(urlsplit(value).query), strict=True)
    assert codecs.to_query(reopened) == codecs.to_query(s)


def test_the_text_is_the_argv_a_shell_reads_back():
    s = _s(model="llama-3.1-8b", gpus=1, speculative="eagle3", kv_dtype="fp8")
    out = commands.commands(s, "http://x/Serving?a=1&b=2")
    for key, build in (
        ("vllm_serve", commands.vllm_serve),
        ("sglang_serve", commands.sglang_serve),
    ):
        assert _shell_words(getattr(out, key)) == [build(s)[0].argv]
    bench = commands.vllm_bench_serve(s, "http://x/Serving?a=1&b=2", commands._name(s))[0]
    assert _shell_words(out.vllm_bench_serve) == [bench.argv]


@pytest.mark.parametrize("kw", SCENARIOS[:4] + [{"hardware": "mi300x", "gpus": 8}])
def test_the_manifest_parses_and_requests_a_replicas_gpus(kw):
    s = _s(**kw)
    out = commands.commands(s, "http://x/Serving", replicas=3)
    docs = list(yaml.safe_load_all(out.kubernetes))
    assert len(docs) == 1
    d = docs[0]
    assert d["apiVersion"] == "apps/v1" and d["kind"] == "Deployment"
    assert d["spec"]["replicas"] == 3
    assert (
        d["spec"]["selector"]["matchLabels"].items()
        <= d["spec"]["template"]["metadata"]["labels"].items()
    )
    (c,) = d["spec"]["template"]["spec"]["containers"]
    resource = "amd.com/gpu" if s.hardware.id == "mi300x" else "nvidia.com/gpu"
    assert c["resources"]["limits"][resource] == s.gpus * s.data_parallel
    assert [c["command"][0], *c["args"]][: len(commands.vllm_serve(s)[0].argv)] == (
        commands.vllm_serve(s)[0].argv
    )
    assert all(isinstance(x, str) for x in c["args"])  # a container's args are strings
    name = d["metadata"]["name"]
    assert len(name) <= 63 and name.replace("-", "").isalnum() and name == name.lower()


def test_a_disaggregated_replica_is_two_pools_with_their_own_gpus():
    s = _s(
        model="llama-3.1-70b",
        gpus=4,
        disaggregated="true",
        prefill_gpus=2,
        prefill_instances=3,
        decode_gpus=4,
        decode_instances=1,
    )
    out = commands.commands(s, "http://x/Serving")
    serves = _shell_words(out.vllm_serve)
    assert [w[w.index("--tensor-parallel-size") + 1] for w in serves] == ["2", "4"]
    assert all("--kv-transfer-config" in w for w in serves)
    docs = list(yaml.safe_load_all(out.kubernetes))
    assert [d["spec"]["replicas"] for d in docs] == [3, 1]
    limits = [d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] for d in docs]
    assert [x["nvidia.com/gpu"] for x in limits] == [2, 4]
    sg = _shell_words(out.sglang_serve)
    assert [w[w.index("--disaggregation-mode") + 1] for w in sg] == ["prefill", "decode"]


def test_sglang_scenarios_deploy_sglang():
    s = _s(engine="sglang", model="llama-3.1-8b", gpus=1)
    out = commands.commands(s, "http://x/Serving")
    (d,) = yaml.safe_load_all(out.kubernetes)
    c = d["spec"]["template"]["spec"]["containers"][0]
    assert c["image"].startswith("lmsysorg/sglang:")
    assert [*c["command"], *c["args"]] == commands.sglang_serve(s)[0].argv
    assert out.engine_release.startswith("sglang ")


def test_a_flag_the_release_lacks_is_named_with_the_release_that_has_it():
    table = commands.flag_table()
    since = table.vllm["--compilation-config.cudagraph_mode"].since
    old = _s(engine="vllm@0.9", model="llama-3.1-8b", gpus=1, cuda_graphs="full_and_piecewise")
    assert commands._version(commands.target(old).release) < commands._version(since)
    out = commands.commands(old, "http://x")
    assert old.cuda_graphs != "none"
    assert any("cudagraph_mode" in m and since in m for m in out.missing), out.missing
    assert not commands.commands(_s(model="llama-3.1-8b", gpus=1), "http://x").missing
    assert commands.missing_flags("vllm", ["--no-such-flag"], "0.11.0") == []


def test_every_flag_the_commands_write_has_releases_in_the_table():
    for kw in SCENARIOS:
        s = _s(**kw)
        for build, engine in ((commands.vllm_serve, "vllm"), (commands.sglang_serve, "sglang")):
            used = build(s)[0].flags
            assert commands.unchecked_flags(engine, used) == [], (kw, engine)
        used = commands.vllm_bench_serve(s, "http://x")[0].flags
        assert commands.unchecked_flags("vllm", used) == []


def test_a_model_without_a_repository_says_where_to_put_it():
    s = _s(
        **{
            "model.name": "My model",
            "model.params_b": 7,
            "model.layers": 32,
            "model.hidden": 4096,
            "model.heads": 32,
            "model.kv_heads": 8,
            "model.head_dim": 128,
            "model.vocab": 32000,
            "gpus": 1,
        }
    )
    out = commands.commands(s, "http://x")
    assert "<your-model-repository>" in out.vllm_serve
    assert any("<your-model-repository>" in n for n in out.notes)


def test_cli_commands_json(capsys):
    assert main(["commands", "--set", "model=llama-3.1-8b", "--set", "gpus=1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("vllm_serve", "sglang_serve", "vllm_bench_serve", "kubernetes"):
        assert isinstance(out[key], str) and out[key]
    assert "--tensor-parallel-size 1" in out["vllm_serve"]
    assert main(["commands", "--set", "model=llama-3.1-8b", "--set", "gpus=1"]) == 0
    assert "vllm serve meta-llama/Llama-3.1-8B" in capsys.readouterr().out


def test_cli_commands_bad_input_is_one_line_and_exit_2():
    done = subprocess.run(
        [sys.executable, "-m", "whatif", "commands", "--set", "max_num_seqs=0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "max_num_seqs" in done.stderr


def test_old_releases_get_the_flags_they_had():
    # vLLM 0.4.3 (the vllm-v0@0.4 band): no vllm command yet, speculative by its old flags
    s = _s(engine="vllm-v0@0.4", model="llama-3.1-8b", gpus=1, speculative="ngram")
    cmd, notes = commands.vllm_serve(s)
    assert cmd.argv[:4] == ["python", "-m", "vllm.entrypoints.openai.api_server", "--model"]
    a = _args(cmd)
    assert a["--speculative-model"] == "[ngram]"
    assert int(a["--num-speculative-tokens"]) == speculative.k_of(s)
    assert "--speculative-config" not in a and "--compilation-config" not in a
    assert any("V0" in n for n in notes)
    assert commands.missing_flags("vllm", cmd.flags, "0.4.3") == []
    # EAGLE-3 did not exist in V0 0.6.6: named, with the release that has it
    s = _s(engine="vllm-v0", model="llama-3.1-8b", gpus=1, speculative="eagle3")
    out = commands.commands(s, "http://x")
    assert any("eagle3" in m and "0.8.5" in m for m in out.missing), out.missing
    # the MTP method's name moved in 0.11.0
    s = _s(model="deepseek-r1", hardware="h200", gpus=8, speculative="mtp")
    spec = json.loads(_args(commands.vllm_serve(s, release="0.10.2")[0])["--speculative-config"])
    assert spec["method"] == "deepseek_mtp"


def test_sglang_04_lacks_newer_flags_and_says_so():
    s = _s(engine="sglang@0.4", model="llama-3.1-8b", gpus=1, loader="runai_streamer")
    out = commands.commands(s, "http://x")
    assert out.engine_release == "sglang 0.4.6"
    assert any("runai_streamer" in m and "0.5.10" in m for m in out.missing), out.missing


def test_amd_gpus_get_the_rocm_image_or_a_note():
    s = _s(engine="sglang", hardware="mi300x", gpus=1, model="llama-3.1-8b")
    (d,) = yaml.safe_load_all(commands.commands(s, "http://x").kubernetes)
    assert "rocm" in d["spec"]["template"]["spec"]["containers"][0]["image"]
    s = _s(hardware="mi300x", gpus=1, model="llama-3.1-8b")
    out = commands.commands(s, "http://x")
    assert any("ROCm" in n for n in out.notes)


def test_the_flag_table_is_sourced_and_covers_every_profile():
    table = commands.flag_table()
    for engine in ("vllm", "sglang"):
        for flag, span in getattr(table, engine).items():
            assert "http" in span.source, (engine, flag)
            if span.until:
                assert commands._version(span.until) > commands._version(span.since)
    from model.engines import engine_profiles

    for ident, profile in engine_profiles().items():
        for band in [None, *(b.version for b in profile.bands)]:
            key = f"{ident}@{band}" if band else ident
            assert key in table.targets or ident in table.targets


def test_async_scheduling_is_written_against_the_releases_default():
    """vLLM's async scheduling is opt-in before 0.14 and on by default from it (PR 27614):
    the command says so only where the scenario differs from the release's default."""
    on = _s(model="llama-3.1-8b", gpus=1)  # auto: the vllm profile's async scheduling
    off = _s(model="llama-3.1-8b", gpus=1, async_scheduling="false")
    assert on.async_scheduling_on and not off.async_scheduling_on
    assert "--async-scheduling" in commands.vllm_serve(on)[0].argv  # written for 0.11.0
    assert "--async-scheduling" not in commands.vllm_serve(on, release="0.14.0")[0].argv
    assert "--no-async-scheduling" in commands.vllm_serve(off, release="0.14.1")[0].argv
    assert not {"--async-scheduling", "--no-async-scheduling"} & set(
        commands.vllm_serve(off)[0].argv
    )
    band = _s(model="llama-3.1-8b", gpus=1, engine="vllm@0.11")  # 0.11-0.13: off by default
    assert "--async-scheduling" not in commands.vllm_serve(band)[0].argv
    # asked of a release older than the flag: named with the release that has it
    old = _s(engine="vllm@0.9", model="llama-3.1-8b", gpus=1, async_scheduling="true")
    out = commands.commands(old, "http://x")
    assert any("--async-scheduling" in m and "0.11.0" in m for m in out.missing), out.missing
    sg = _s(model="llama-3.1-8b", gpus=1, engine="sglang", async_scheduling="false")
    assert "--disable-overlap-schedule" in commands.sglang_serve(sg)[0].argv
