"""Mooncake-format traces (issue 39, item 3: a trace whose format carries prefix ids replays
them): read, grouped by shared prefix, replayed with the engine's prefix cache, and refused
line by line where a line is not a request."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model import serving
from model.errors import ScenarioError
from model.overrides import resolve
from model.readers.mooncake import HASH_BLOCK_TOKENS, shared_prefixes
from model.readers.traces import read_trace, read_trace_text
from whatif.cli import main

SAMPLE = Path(__file__).parent / "data" / "traces" / "mooncake_sample.jsonl"


def test_the_published_examples_read_with_their_prefixes():
    tr = read_trace(SAMPLE.name, SAMPLE.read_bytes())
    assert tr.format == "mooncake" and tr.rows == 7 and tr.rows_refused == 0
    np.testing.assert_allclose(tr.arrival_s, [0, 0, 3.052, 3.052, 10.535, 27.482, 29.0])
    assert list(tr.input_tokens[:2]) == [6755, 7319] and list(tr.output_tokens[:2]) == [500, 490]
    # block 0 is shared by five requests, [46, 47] by two, [0..4] by the first and the last
    assert list(tr.prefix_tokens) == [2560, 512, 512, 512, 672, 655, 2560]
    assert tr.prefix_group[0] == tr.prefix_group[6] != tr.prefix_group[4] == tr.prefix_group[5]
    assert any("share a prefix" in n for n in tr.notices)


def test_the_shared_prefix_is_the_longest_common_run_of_leading_ids():
    group, shared = shared_prefixes([(1, 2, 3), (1, 2, 4), (1, 5), (9,), ()])
    assert list(shared) == [2, 2, 1, 0, 0]
    assert group[0] == group[1] == group[2] != group[3] and group[4] == -1


def test_a_replay_reuses_the_traces_prefixes_where_the_engine_caches_them(tmp_path):
    lines = []
    for i in range(60):  # a 2,048-token system prompt, then each request's own blocks
        ids = [0, 1, 2, 3, 100 + 2 * i, 101 + 2 * i]
        lines.append({"timestamp": 500 * i, "input_length": 6 * HASH_BLOCK_TOKENS - 10,
                      "output_length": 64, "hash_ids": ids})  # fmt: skip
    path = tmp_path / "conv.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    tr = read_trace(path.name, path.read_bytes())
    on = resolve([("num_requests", "60")])[0]
    off = resolve([("num_requests", "60"), ("prefix_caching", "false")])[0]
    hit = serving.sections(on, tr)["serving"]
    miss = serving.sections(off, tr)["serving"]
    # after the first request, 2,048 of each prompt's 3,062 tokens are found in the cache
    assert hit["prefix_cache_hit_rate"] == pytest.approx(59 * 2048 / (60 * 3062), rel=0.02)
    assert miss["prefix_cache_hit_rate"] == 0
    assert hit["mean_ttft_ms"] < miss["mean_ttft_ms"]


def test_the_cli_replays_a_mooncake_trace(capsys):
    assert main(["eval", "--trace", str(SAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving"]["completed"] == 7
    assert out["serving"]["prefix_cache_hit_rate"] > 0


@pytest.mark.parametrize(
    "line, why",
    [
        ("[1, 2]", "not a JSON object"),
        ('{"input_length": 5}', "needs timestamp"),
        ('{"timestamp": -1, "input_length": 5}', "timestamp must be"),
        ('{"timestamp": NaN, "input_length": 5}', "NaN is not a number"),
        ('{"timestamp": 1, "input_length": 2.5}', "whole number"),
        ('{"timestamp": 1, "input_length": 5, "hash_ids": "abc"}', "hash_ids must be a list"),
        ('{"timestamp": 1, "input_length": 5, "hash_ids": [1, -2]}', "hash id"),
        ('{"timestamp": 1, "input_length": 5, "hash_ids": [1e400]}', "hash id"),
        ('{"timestamp": 1e999, "input_length": 5}', "timestamp is not a finite number"),
        ("{not json", "Expecting"),
        ('{"timestamp": 1, "input_length": ' + "9" * 5000 + "}", "nteger"),
    ],
)
def test_a_bad_line_is_refused_alone(line, why):
    good = '{"timestamp": 0, "input_length": 100, "output_length": 5, "hash_ids": [1]}'
    tr = read_trace_text(f"{good}\n{line}\n{good}\n", "t.jsonl")
    assert tr.rows == 2 and tr.rows_refused == 1
    assert tr.problems[0].where == "line 2" and why in tr.problems[0].message


def test_a_file_of_no_request_is_refused_naming_the_format():
    with pytest.raises(ScenarioError) as err:
        read_trace_text('{"what": 1}\n{"nope": 2}\n', "t.jsonl")
    assert err.value.key == "t.jsonl" and "Mooncake trace format" in err.value.message


def test_deeply_nested_json_is_refused_not_a_crash():
    deep = '{"timestamp": 0, "input_length": 5, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    good = '{"timestamp": 0, "input_length": 100}'
    tr = read_trace_text(f"{deep}\n{good}\n", "t.jsonl")
    assert tr.rows == 1 and tr.rows_refused == 1
