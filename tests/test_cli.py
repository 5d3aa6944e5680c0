"""The ``whatif`` CLI contract (SPEC 3): JSON sections, URLs, presets, bad input → exit 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from numpy.testing import assert_allclose

from model import codecs
from whatif.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "whatif", *args], capture_output=True, text=True, timeout=60
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_eval_json_has_the_spec_sections_and_names(capsys):
    assert main(["eval", "--scenario", "seed-3b-4090", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"roofline", "decode", "memory"} <= set(out)
    assert {"ridge_flop_per_byte", "arithmetic_intensity"} <= set(out["roofline"])
    assert {
        "t_memory_ms",
        "t_compute_ms",
        "t_launch_ms",
        "t_host_ms",
        "t_step_ms",
        "tokens_per_s",
        "tokens_per_s_per_seq",
        "bound",
    } <= set(out["decode"])
    assert {"weights_gb", "kv_gb", "max_batch"} <= set(out["memory"])
    assert {
        "kernels",
        "t_launch_eager_ms",
        "t_step_eager_ms",
        "t_step_graph_ms",
        "graph_speedup",
        "launch_ceiling_tokens_per_s",
        "padded_batch",
        "padding_waste",
        "graphs_captured",
    } <= set(out["launch"])
    assert {
        "process_init_s",
        "cuda_context_s",
        "allocator_s",
        "weights_s",
        "graphs_jit_s",
        "total_s",
        "weights_read_s",
        "weights_h2d_s",
        "wake_s",
    } <= set(out["cold_start"])
    # the seed's first row: 6 + 2 = 8 ms → 125 tok/s
    assert_allclose(out["decode"]["t_step_ms"], 8.0)
    assert_allclose(out["decode"]["tokens_per_s"], 125.0)


@pytest.mark.parametrize(
    ("sets", "t_step_ms"),
    [
        (["weights_dtype=int4"], 3.5),
        (["cuda_graphs=full_decode_only"], 6.505),
        (["weights_dtype=int4", "cuda_graphs=full_decode_only"], 2.005),
    ],
)
def test_eval_seed_variants_through_a_subprocess(sets, t_step_ms):
    args = ["eval", "--scenario", "seed-3b-4090", "--json"]
    for s in sets:
        args += ["--set", s]
    rc, out, err = run(*args)
    assert rc == 0, err
    assert_allclose(json.loads(out)["decode"]["t_step_ms"], t_step_ms)


def test_eval_yaml_file_with_overrides(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("scenario: seed-3b-4090\nhardware:\n  hbm_bandwidth_tb_s: 2.0\n")
    assert main(["eval", str(f), "--set", "batch=2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["decode"]
    assert_allclose(d["t_memory_ms"], 3.0)  # 6 GB at 2 TB/s


def test_url_and_presets(capsys):
    assert (
        main(
            [
                "url",
                "--scenario",
                "seed-3b-4090",
                "--set",
                "weights_dtype=int4",
                "--page",
                "roofline",
                "--base",
                "http://h:1",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == (
        "http://h:1/Roofline?scenario=seed-3b-4090&engine=ideal@2026.11&weights_dtype=int4"
    )
    assert main(["url", "--page", "launch", "--base", "http://h:1/"]) == 0
    assert capsys.readouterr().out.startswith("http://h:1/Launch_overhead?")
    assert main(["url", "--page", "home", "--base", "http://h:1"]) == 0
    assert capsys.readouterr().out.startswith("http://h:1/?")
    assert main(["presets"]) == 0
    listing = capsys.readouterr().out
    assert "hardware:" in listing and "h100-sxm" in listing and "seed-3b-4090" in listing


def test_an_unknown_page_is_refused_with_the_declared_ones(capsys):
    assert main(["url", "--page", "Rooflin"]) == 2
    err = capsys.readouterr().err
    assert "unknown page 'Rooflin'" in err and "roofline" in err and "scale_to_zero" in err


BAD = [
    ("batch=-3", "batch"),
    ("batch=abc", "batch"),
    ("batch=1e309", "batch"),
    ("batch=NaN", "batch"),
    ("weights_dtype=fp3", "weights_dtype"),
    ("hardware=nope", "h100-sxm"),  # the message lists the known ids
    ("model.layers=0", "model.layers"),
    ("nonsense_key=1", "unknown key"),
    ("launch_us=0", "launch_us"),
    ("launch_us=10000000", "launch_us"),
    ("kernels=0", "kernels"),
    ("cuda_graphs=sometimes", "cuda_graphs"),
    ("capture_sizes=8,4", "capture_sizes"),
    ("capture_sizes=1,1", "capture_sizes"),
    ("capture_sizes=0", "capture_sizes"),
    ("capture_sizes=1,x", "capture_sizes"),
    ("hardware.peak_tflops.fp3=1", "fp3"),
    ("model.kv_heads=999", "kv_heads"),
    ("bw_efficiency=inf", "bw_efficiency"),
    # issue 3's bad input: capture sizes, τ, graphs mode, kernels
    ("capture_sizes=0,8", "capture_sizes"),
    ("capture_sizes=-4", "capture_sizes"),
    ("capture_sizes=" + ",".join(str(i) for i in range(1, 600)), "capture_sizes"),
    ("capture_sizes=" + ",".join(str(i) for i in range(1, 514)), "capture_sizes"),
    ("capture_sizes=2.5", "capture_sizes"),
    ("launch_us=-5", "launch_us"),
    ("launch_us=nan", "launch_us"),
    ("kernels=-1", "kernels"),
    ("kernels=lots", "kernels"),
    ("cuda_graphs=fast", "cuda_graphs"),
    ("engine=tgi", "engine"),
    ("engine=vllm@1999", "engine"),
    ("prompt_tokens=0", "prompt_tokens"),
    ("output_tokens=-3", "output_tokens"),
    ("output_tokens=200000", "context"),
    ("weights_dtype=fp5", "weights_dtype"),
    ("weights_gb=0", "weights_gb"),
    ("capture_s_per_graph=-0.1", "capture_s_per_graph"),
    # issue 4's bad input: concurrency, loader, tier, item seconds, sleep level
    ("concurrency=0", "concurrency"),
    ("concurrency=-4", "concurrency"),
    ("concurrency=100000", "concurrency"),
    ("loader=turbo", "loader"),
    ("storage=floppy", "storage"),
    ("process_init_s=-1", "process_init_s"),
    ("cuda_context_s=-0.5", "cuda_context_s"),
    ("allocator_s=1e9", "allocator_s"),
    ("sleep_level=3", "sleep_level"),
    ("compile_s=-2", "compile_s"),
    ("storage_gb_s=0", "storage_gb_s"),
    ("compile_cache=maybe", "compile_cache"),
    ("compile_cached_s=300", "cannot take longer than the cold compile"),
]


@pytest.mark.parametrize(("setting", "named"), BAD)
def test_bad_input_exits_2_with_one_line(setting, named, capsys):
    args = [a for part in setting.split(" ") for a in ("--set", part)]
    assert main(["eval", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("whatif: error: ")
    assert named in err
    assert "Traceback" not in err


def test_unknown_hardware_lists_known_ids(capsys):
    assert main(["eval", "--set", "hardware=nope"]) == 2
    err = capsys.readouterr().err
    assert "rtx-4090" in err and "mi300x" in err


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("- a\n- b\n", "mapping"),
        ("!!python/object:os.system {}\n", "not valid YAML"),
        ("!!python/object/apply:os.system ['echo pwned']\n", "not valid YAML"),
        ("batch: [1, 2\n", "not valid YAML"),
        ("batch: 0\n", "batch"),
        ("hardware: 7\n", "hardware"),
    ],
)
def test_bad_yaml_files(tmp_path, text, named, capsys):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    assert main(["eval", str(f)]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1


def test_missing_file_and_bad_usage(capsys):
    assert main(["eval", "/no/such.yaml"]) == 2
    assert main(["eval", "--set", "novalue"]) == 2
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("whatif: error:") == 3 and "Traceback" not in err


def test_console_script_matches_module(tmp_path):
    rc, out, _ = run("eval", "--scenario", "default", "--json")
    assert rc == 0 and json.loads(out)["scenario"] == "default"


def test_512_large_capture_sizes_round_trip_through_a_link(capsys, monkeypatch):
    sizes = ",".join(str(128 * i) for i in range(1, 513))  # 512 sizes up to 65536
    assert main(["eval", "--set", f"capture_sizes={sizes}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["launch"]["capture_sizes_count"] == 512
    assert main(["url", "--set", f"capture_sizes={sizes}", "--page", "launch"]) == 0
    url = capsys.readouterr().out.strip()
    scenario = codecs.from_url(url)  # strict: any bad key would raise
    assert len(scenario.capture_sizes) == 512 and scenario.capture_sizes[-1] == 65536
    # a link over the app's query limit is refused with a pointer to the YAML
    monkeypatch.setattr(codecs, "MAX_QUERY_CHARS", 2000)
    assert main(["url", "--set", f"capture_sizes={sizes}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "whatif yaml" in err


def test_capture_sizes_accept_spaces_and_a_trailing_comma(capsys):
    assert main(["eval", "--set", "capture_sizes=1 2 4 8,", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["launch"]["largest_capture_size"] == 8


def test_every_eval_has_the_same_sections_and_names_its_preset(capsys):
    """Issue 40, item 10: the serving and capacity sections are there whether or not a
    serving key is set, and ``scenario`` is never null."""
    shapes = []
    for extra in ([], ["--set", "request_rate=3"], ["--scenario", "seed-3b-4090"]):
        assert main(["eval", *extra, "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        shapes.append(list(got))
        assert got["scenario"] in ("default", "seed-3b-4090")
        assert "max_request_rate" in got["capacity"] or got["capacity"]["fits"] is False
    assert shapes[0] == shapes[1] == shapes[2]


def test_eval_on_a_model_that_does_not_fit_says_so_first():
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "whatif",
            "eval",
            "--scenario",
            "default",
            "--set",
            "gpus=1",
            "--set",
            "weights_dtype=bf16",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("does not fit:")


def test_every_eval_has_the_serving_sections(capsys):
    assert main(["eval", "--scenario", "seed-3b-4090", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {"serving", "capacity"} <= set(got) and got["scenario"] == "seed-3b-4090"
