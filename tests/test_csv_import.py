"""Our own measurement CSV formats (SPEC 4.5; model/readers/csv_import.py, rules in its docstring).

Expected values are hand calculations written beside each assertion or the fixture's own cells
(tests/data/csv/, written for these tests; the numbers in them are made up, not measurements).
"""

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from model.errors import ScenarioError
from model.readers.csv_import import MAX_LINE, detect_schema, read_csv
from model.readers.measurements import CSV_SCHEMAS, MAX_ROWS, decode_text, template_csv
from model.scenario import CUDA_GRAPHS_MODES

DATA = Path(__file__).parent / "data" / "csv"


def read(name: str, kind: str | None = None):
    """A fixture read the way the app reads an upload: decode_text, then read_csv."""
    return read_csv(decode_text(name, (DATA / name).read_bytes()), name, kind)


def refused(text: str, kind: str | None = None, name: str = "m.csv") -> str:
    """The message of the ScenarioError a text raises; its key is the file name."""
    with pytest.raises(ScenarioError) as exc:
        read_csv(text, name, kind)
    assert exc.value.key == name
    return exc.value.message


def problems(ds) -> list[str]:
    return [str(p) for p in ds.problems]


# --- templates and good files ------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(CSV_SCHEMAS))
def test_every_template_reads_back_as_its_own_kind(kind):
    text = template_csv(kind)
    ds = read_csv(text, f"{kind}_template.csv")
    assert (ds.kind, ds.format) == (kind, f"{kind}_csv")
    assert ds.problems == []
    template = list(csv.DictReader(io.StringIO(text)))
    assert len(ds.rows) == len(template)
    for row, cells in zip(ds.rows, template, strict=True):
        for column, cell in cells.items():
            if column == "item":  # cold start: the template names the five items in order
                continue
            try:
                expected = float(cell)
            except ValueError:
                expected = cell
            assert row[column] == expected, (column, cell)
    if kind == "cold_start":
        assert [r["item"] for r in ds.rows] == [1, 2, 3, 4, 5]
    json.dumps(ds.to_json())  # what `whatif import --json` prints


def test_decode_sweep_with_link_modes_repeats_and_conditions():
    ds = read("decode_sweep.csv")
    assert ds.kind == "decode" and ds.problems == []
    assert ds.conditions == {
        "link": "https://whatif.example/?page=roofline&gpu=h100-sxm&model=llama-3.1-8b",
        "model": "llama-3.1-8b",
        "context_tokens": 2048,
    }
    assert [(r["batch"], r["step_ms"], r["cuda_graphs"]) for r in ds.rows] == [
        (1, 21.4, "full_and_piecewise"),
        (8, 22.9, "full_and_piecewise"),
        (32, 27.5, "full_and_piecewise"),
        (1, 38.0, "none"),  # eager → none
        (8, 39.1, "none"),
        (8, 23.1, None),  # empty: as configured
    ]
    assert all(type(r["batch"]) is int and type(r["context_tokens"]) is int for r in ds.rows)
    f = ds.figures
    assert f["points"] == 6 and f["batches"] == [1, 8, 32]
    assert (f["min_step_ms"], f["max_step_ms"]) == (21.4, 39.1)
    assert f["graph_modes"] == [None, "full_and_piecewise", "none"]


def test_decode_from_tokens_per_s_alone_keeps_both():
    ds = read("decode_tokens_per_s.csv")
    # step_ms = batch / tokens_per_s × 1000 → 21.413 ms (1/46.7), 22.903, 40
    assert_allclose([r["step_ms"] for r in ds.rows], [21.413, 22.903, 40.0], rtol=1e-4)
    assert [r["tokens_per_s"] for r in ds.rows] == [46.7, 349.3, 1600.0]
    assert ds.problems == []


def test_launch_chain_tau_naive_is_the_median_per_kernel_saving():
    ds = read("launch_chain.csv")
    # per kernel: (0.52 − 0.021)/100 = 4.99 µs, (2.60 − 0.060)/500 = 5.08,
    # (5.10 − 0.095)/1000 = 5.005
    assert ds.figures["points"] == 3
    assert_allclose(ds.figures["tau_us_naive"], 5.005)
    assert ds.rows[0]["note"] == "chain of empty kernels" and ds.rows[1]["note"] is None


def test_cold_start_names_and_numbers_mixed_repeats_averaged_parts_summed():
    ds = read("cold_start_mixed.csv")
    assert ds.problems == []
    f = ds.figures
    assert (f["item1_s"], f["item1_n"]) == pytest.approx((4.0, 2))  # (4.1 + 3.9) / 2
    assert (f["item2_s"], f["item2_n"]) == pytest.approx((6.0, 2))  # (5.8 + 6.2) / 2
    assert f["item3_s"] == pytest.approx(3.9)
    assert (f["item4_s"], f["item4_n"]) == pytest.approx((24.0, 2))  # weights_load 23, 4 → 25
    assert (f["compile_s"], f["capture_s"], f["item5_s"]) == pytest.approx((40, 12, 52))
    assert f["total_s"] == pytest.approx(4.0 + 6.0 + 3.9 + 24.0 + 52.0)
    assert [(r["item"], r["name"], r["part"]) for r in ds.rows][-2:] == [
        (5, "compile_capture", "compile"),
        (5, "compile_capture", "capture"),
    ]


def test_cold_start_total_only_with_all_five_items_and_whole_item5_wins():
    ds = read_csv("item,seconds\n1,4\nweights,20\n", "c.csv")
    assert ds.figures["item4_s"] == 20 and "total_s" not in ds.figures
    assert "item2_s" not in ds.figures
    ds = read_csv("item,seconds\n5,50\ncompile,30\ncapture,10\ncompile,32\n", "c.csv")
    assert ds.figures["item5_s"] == 50 and ds.figures["compile_s"] == 31
    assert any("whole is used" in p for p in problems(ds))
    ds = read_csv("item,seconds\ncompile,30\n", "c.csv")
    assert ds.figures["item5_s"] == 30
    assert any("no capture" in p for p in problems(ds))


def test_request_latency_per_concurrency():
    ds = read("request_latency.csv")
    assert ds.figures == {"points": 4, "concurrencies": [1, 4, 16]}
    assert ds.conditions == {"prompt_tokens": 1024, "output_tokens": 256}
    assert ds.rows[2]["e2e_ms"] is None and ds.rows[1]["e2e_ms"] == 6102.5


def test_bandwidth_computes_missing_gb_s():
    ds = read("bandwidth_sweep.csv")
    # 1073741824 B / 0.41 ms / 1e6 = 2618.88 GB/s; the others state 2684.4 (= 2^30 / 0.40 / 1e6)
    assert_allclose([r["gb_s"] for r in ds.rows], [2684.4, 2618.88, 2684.4], rtol=1e-5)
    assert ds.figures["max_gb_s"] == 2684.4 and ds.figures["median_gb_s"] == 2684.4
    assert ds.problems == []


def test_h2d_median_per_mode():
    ds = read("h2d_copies.csv")
    # pinned: 53.4 and 2^30 / 20.3 / 1e6 = 52.894 → median 53.147; pageable 2^30 / 45 / 1e6
    assert_allclose(ds.figures["pinned_gb_s"], (53.4 + 52.894) / 2, rtol=1e-4)
    assert_allclose(ds.figures["pageable_gb_s"], 23.861, rtol=1e-4)
    assert ds.figures["points"] == 3


def test_semicolon_file_with_bom_crlf_and_vllm_spelling():
    ds = read("decode_semicolon_bom.csv")
    assert [(r["batch"], r["step_ms"], r["cuda_graphs"]) for r in ds.rows] == [
        (1, 21.4, "full_and_piecewise"),
        (8, 22.9, "piecewise"),
    ]


def test_tab_separated_and_excel_sep_line():
    assert read_csv("batch\tstep_ms\n1\t21.4\n", "t.tsv").rows == [{"batch": 1, "step_ms": 21.4}]
    ds = read_csv("sep=;\nbatch;step_ms\n1;21.4\n", "x.csv")
    assert ds.rows == [{"batch": 1, "step_ms": 21.4}]


def test_header_case_spaces_quotes_and_unit_brackets():
    ds = read_csv('# a note\n\n "Batch" , Step [µs] , CUDA Graphs\n1,21400,Full\n', "h.csv")
    assert ds.rows == [{"batch": 1, "step_ms": 21.4, "cuda_graphs": "full_decode_only"}]
    assert ds.extra["converted"] == ["Step [µs] → step_ms (× 0.001)"]


def test_quoted_thousands_separator_in_a_comma_file():
    ds = read_csv('kernels,eager_ms,graph_ms\n"1,000",5.1,0.095\n', "q.csv")
    assert ds.rows[0]["kernels"] == 1000


# --- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header, kind",
    [
        (["batch", "step_ms"], "decode"),
        (["\ufeffBATCH ", " tokens_per_s"], "decode"),
        (["batch_size", "step (ms)", "graphs"], "decode"),
        (["kernels", "eager_ms", "graph_ms"], "launch"),
        (["item", "seconds"], "cold_start"),
        (["concurrency", "tpot_ms"], "request"),
        (["batch", "bytes", "ms", "gb_s"], "bandwidth"),
        (["mode", "bytes", "ms"], "h2d"),  # bandwidth's columns too: h2d reads more of them
        (["batch", "step"], None),  # no unit: not detected (read_csv says why)
        (["city", "population"], None),
        (["Metric", "avg", "min", "max", "p99"], None),  # GenAI-Perf's CSV
        ([], None),
    ],
)
def test_detect_schema(header, kind):
    assert detect_schema(header) == kind


# --- what is refused, and what the message says ------------------------------------------------


def test_empty_file():
    assert refused("") == "the file is empty"
    assert "empty" in refused("\n  \n\n")
    with pytest.raises(ScenarioError, match="empty"):
        decode_text("m.csv", b"")


def test_header_only():
    with pytest.raises(ScenarioError, match="header only: no data rows") as exc:
        read("header_only.csv")
    assert exc.value.key == "header_only.csv"
    assert "header only" in refused("# link: https://x.example/\nbatch,step_ms\n\n# end\n")


def test_wrong_columns_are_not_ours_unless_a_kind_is_asked():
    assert read("wrong_columns.csv") is None
    with pytest.raises(ScenarioError) as exc:
        read("wrong_columns.csv", kind="decode")
    message = exc.value.message
    assert "missing columns batch and step_ms (or tokens_per_s)" in message
    assert "accepted decode columns: required batch and step_ms (or tokens_per_s)" in message
    assert "optional cuda_graphs, context_tokens" in message


def test_kind_asked_for_another_formats_header_says_which_it_looks_like():
    message = refused("kernels,eager_ms,graph_ms\n100,0.5,0.02\n", kind="decode")
    assert "missing columns batch" in message and "looks like a launch CSV" in message


def test_unknown_kind():
    assert "unknown CSV kind 'decoder'" in refused("batch,step_ms\n1,2\n", kind="decoder")


def test_units_in_cells_matching_unit_read_other_unit_refused():
    ds = read("units_in_cells.csv")
    assert ds.rows == [{"batch": 1, "step_ms": 21.4}, {"batch": 32, "step_ms": 27.5}]
    assert problems(ds) == [
        "row 2 (line 3): column step_ms: '0.0229 s': units belong in the header "
        "(the column is in ms)"
    ]
    ds = read_csv("batch,step_ms\n8 seqs,22.9\n1,21.4\n", "u.csv")
    assert problems(ds) == [
        "row 1 (line 2): column batch: '8 seqs': units belong in the header "
        "(this column has no unit)"
    ]


def test_unit_suffixed_header_is_converted():
    ds = read("step_seconds.csv")
    assert_allclose([r["step_ms"] for r in ds.rows], [21.4, 22.9])  # s × 1000
    assert ds.extra["converted"] == ["Step (s) → step_ms (× 1000)"]
    ds = read_csv("kernels,eager_us,graph_ns\n100,520,21000\n", "l.csv")
    assert_allclose([ds.rows[0]["eager_ms"], ds.rows[0]["graph_ms"]], [0.52, 0.021])
    ds = read_csv("mode,size_gib,time_us\npinned,1,20100\n", "h.csv")
    assert ds.rows[0]["bytes"] == 2**30 and ds.rows[0]["ms"] == pytest.approx(20.1)
    ds = read_csv("item,ms\n1,4100\n", "c.csv")
    assert ds.rows[0]["seconds"] == pytest.approx(4.1)


@pytest.mark.parametrize("column", ["step", "latency_s", "step_min"])
def test_time_column_without_an_accepted_unit_names_the_accepted_ones(column):
    message = refused(f"batch,{column}\n1,21.4\n")
    assert f"column '{column}'" in message
    assert "step_ms (milliseconds; step_s, step_us and step_ns are converted)" in message
    assert "missing column step_ms (or tokens_per_s)" in message


def test_no_unit_in_launch_header():
    message = refused("kernels,eager,graph_ms\n100,0.5,0.02\n")
    assert "column 'eager' has no unit: the eager launch time is eager_ms" in message


def test_same_column_twice_refuses_the_file():
    message = refused("batch,step_ms,step_s\n1,21.4,0.0214\n")
    assert message == "columns 'step_ms' and 'step_s' both give step_ms; keep one"


def test_unknown_extra_column_is_a_problem_not_an_error():
    ds = read_csv("batch,step_ms,gpu_name\n1,21.4,H100\n", "x.csv")
    assert ds.rows == [{"batch": 1, "step_ms": 21.4}]
    (p,) = problems(ds)
    assert p.startswith("column 'gpu_name': ignored: not a decode column (required batch")


@pytest.mark.parametrize(
    "cell, says",
    [
        ("abc", "'abc' is not a number"),
        ("NaN", "'NaN' is not a number (NaN and Inf are not accepted)"),
        ("inf", "'inf' is not a number (NaN and Inf are not accepted)"),
        ("-Infinity", "'-Infinity' is not a number (NaN and Inf are not accepted)"),
        ("-21.4", "'-21.4' must be greater than 0"),
        ("0", "'0' must be greater than 0"),
        ("", "column step_ms: empty; a value is required"),
    ],
)
def test_bad_step_cell_refuses_that_row_only(cell, says):
    ds = read_csv(f"batch,step_ms\n1,21.4\n8,{cell}\n32,27.5\n", "bad.csv")
    assert [r["batch"] for r in ds.rows] == [1, 32]
    (p,) = problems(ds)
    assert p.startswith("row 2 (line 3): ") and says in p
    if cell:
        assert p.startswith("row 2 (line 3): column step_ms: ")


@pytest.mark.parametrize(
    "cell, says",
    [
        ("8.0", None),
        ("8.5", "'8.5' is not a whole number"),
        ("0", "'0' must be at least 1"),
        ("-8", "'-8' must be at least 1"),
        ("1e12", "'1e12' is more than 1,000,000,000"),
        ("eight", "'eight' is not a number"),
    ],
)
def test_batch_must_be_a_positive_whole_number(cell, says):
    ds = read_csv(f"batch,step_ms\n1,21.4\n{cell},22.9\n", "b.csv")
    if says is None:
        assert ds.rows[1]["batch"] == 8 and type(ds.rows[1]["batch"]) is int
    else:
        assert problems(ds) == [f"row 2 (line 3): column batch: {says}"]


def test_kernels_concurrency_and_context_bounds():
    ds = read_csv("kernels,eager_ms,graph_ms\n0,0.5,0.02\n10.5,0.5,0.02\n10,0.5,0.02\n", "l.csv")
    assert problems(ds) == [
        "row 1 (line 2): column kernels: '0' must be at least 1",
        "row 2 (line 3): column kernels: '10.5' is not a whole number",
    ]
    ds = read_csv("concurrency,ttft_ms\n0,90\n4,95\n", "r.csv")
    assert problems(ds) == ["row 1 (line 2): column concurrency: '0' must be at least 1"]
    ds = read_csv("batch,step_ms,context_tokens\n1,21.4,0\n1,21.4,-1\n", "d.csv")
    assert ds.rows[0]["context_tokens"] == 0
    assert problems(ds) == ["row 2 (line 3): column context_tokens: '-1' must be at least 0"]


def test_decimal_comma_in_a_semicolon_file_is_refused_as_ambiguous():
    ds = read_csv("batch;step_ms\n1;21,4\n2;1,024\n8;22.9\n", "eu.csv")
    assert ds.rows == [{"batch": 8, "step_ms": 22.9}]
    assert all("a comma in a number is ambiguous" in p for p in problems(ds))
    assert len(ds.problems) == 2


def test_excel_decimal_comma_file_is_read_and_says_so():
    # what Excel saves in a locale with a decimal comma: a sep= line, ';', "1.031,5" with a
    # point grouping thousands (hand: 21,4 → 21.4, 22,95 → 22.95, 1.031,5 → 1031.5)
    ds = read("decode_excel_comma.csv")
    assert [(r["batch"], r["step_ms"], r["cuda_graphs"]) for r in ds.rows] == [
        (1, 21.4, "piecewise"),
        (8, 22.95, "piecewise"),
        (64, 1031.5, "none"),
    ]
    assert any("decimal comma" in c for c in ds.extra["converted"]) and not ds.problems
    ds = read_csv('batch\tstep_ms\n1\t"21,4"\n2\t22\n', "t.tsv")  # tabs, a quoted cell
    assert [r["step_ms"] for r in ds.rows] == [21.4, 22.0]
    ds = read_csv("batch,step_ms\n1,21.4\n", "c.csv")  # a comma-separated file: untouched
    assert "converted" not in ds.extra


def test_duplicate_rows_kept_once_repeats_kept():
    ds = read_csv("batch,step_ms\n8,22.9\n8,23.4\n8.0,22.90\n1,21.4\n8,22.9\n", "d.csv")
    assert [(r["batch"], r["step_ms"]) for r in ds.rows] == [(8, 22.9), (8, 23.4), (1, 21.4)]
    assert problems(ds) == [
        "row 3 (line 4): duplicates row 1: kept once",
        "row 5 (line 6): duplicates row 1: kept once",
    ]


def test_ragged_rows_refused_trailing_empty_cells_are_not():
    ds = read("ragged.csv")
    assert [r["batch"] for r in ds.rows] == [1, 64]
    assert problems(ds) == [
        "row 2 (line 3): 2 cells; the header has 3 columns",
        "row 3 (line 4): 4 cells; the header has 3 columns",
    ]


def test_unclosed_quote_refuses_that_row():
    ds = read_csv('batch,step_ms,note\n1,21.4,"fine, quoted"\n8,22.9,"open\n32,27.5,x\n', "q.csv")
    assert [r["batch"] for r in ds.rows] == [1, 32]
    assert ds.rows[0]["note"] == "fine, quoted"
    assert problems(ds) == ["row 2 (line 3): a quote does not close (one record per line)"]


def test_no_readable_row_lists_the_first_problems():
    text = "batch,step_ms\n" + "".join(f"{b},fast\n" for b in range(1, 10))
    message = refused(text)
    assert message.startswith("no row could be read as a decode CSV: ")
    assert "row 1 (line 2): column step_ms: 'fast' is not a number" in message
    assert "row 5 (line 6)" in message and "row 6 (line 7)" not in message
    assert message.endswith("… (9 rows refused)")


def test_cuda_graphs_values():
    rows = read_csv(
        "batch,step_ms,cuda_graphs\n"
        "1,1,enforce_eager\n2,1,full\n3,1,on\n4,1,True\n5,1,CUDAGraphMode.PIECEWISE\n"
        "6,1,full-decode-only\n7,1,sometimes\n",
        "g.csv",
    )
    assert [r["cuda_graphs"] for r in rows.rows] == [
        "none",
        "full_decode_only",
        None,
        None,
        "piecewise",
        "full_decode_only",
    ]
    (p,) = problems(rows)
    assert p.startswith("row 7 (line 8): column cuda_graphs: 'sometimes' is not a graphs mode")
    assert "none (or eager, enforce_eager), piecewise, full_decode_only" in p
    assert set(r["cuda_graphs"] for r in rows.rows) - {None} <= set(CUDA_GRAPHS_MODES)


def test_step_and_tokens_per_s_must_agree():
    # batch 8 at 22.9 ms is 8 / 0.0229 = 349.3 tok/s; 43.7 tok/s is one sequence's rate
    ds = read_csv("batch,step_ms,tokens_per_s\n8,22.9,349.3\n8,22.9,43.7\n", "d.csv")
    (p,) = problems(ds)
    assert p.startswith("row 2 (line 3): step_ms 22.9 and tokens_per_s 43.7 disagree by")
    assert "per sequence?" in p and "step_ms is used" in p
    assert [r["step_ms"] for r in ds.rows] == [22.9, 22.9]


def test_graph_slower_than_eager_is_kept_with_a_problem():
    ds = read_csv("kernels,eager_ms,graph_ms\n100,0.5,0.6\n", "l.csv")
    assert len(ds.rows) == 1
    assert "graph_ms 0.6 is more than eager_ms 0.5" in problems(ds)[0]


def test_gb_s_that_disagrees_with_bytes_over_ms():
    # 2^30 B / 0.40 ms = 2684.4 GB/s = 2500 GiB/s: the file's gb_s was GiB/s
    ds = read_csv("bytes,ms,gb_s\n1073741824,0.40,2500\n", "b.csv")
    assert ds.rows[0]["gb_s"] == pytest.approx(2684.35456)
    assert "(is it GiB/s?)" in problems(ds)[0]


def test_unknown_cold_start_item_and_negative_seconds():
    ds = read_csv("item,seconds\n6,1\nwarmup,3\n2,-1\n2,0\n", "c.csv")
    assert ds.rows == [{"item": 2, "part": None, "name": "cuda_context", "seconds": 0.0}]
    p = problems(ds)
    assert p[0].startswith("row 1 (line 2): column item: '6' is not a cold-start item; accepted:")
    assert "process_init, cuda_context, allocator, weights, compile_capture" in p[0]
    assert p[2] == "row 3 (line 4): column seconds: '-1' must not be negative"


def test_h2d_mode_must_be_pinned_or_pageable():
    ds = read_csv("mode,bytes,ms\npinned,1000000,1\nzero-copy,1000000,1\n", "h.csv")
    assert problems(ds) == [
        "row 2 (line 3): column mode: 'zero-copy' is not a copy mode; accepted: pinned, pageable"
    ]


def test_request_needs_ttft_or_tpot_in_each_row():
    ds = read_csv("concurrency,ttft_ms,tpot_ms\n1,95,\n2,,23\n4,,\n", "r.csv")
    assert [r["concurrency"] for r in ds.rows] == [1, 2]
    assert problems(ds) == ["row 3 (line 4): columns ttft_ms and tpot_ms: empty; one is required"]


def test_link_must_be_http():
    ds = read_csv("# link: javascript:alert(1)\nbatch,step_ms\n1,21.4\n", "l.csv")
    assert "link" not in ds.conditions
    assert problems(ds) == ["line 1: link ignored: only http(s) links are kept"]


def test_binary_upload_is_refused_before_reading():
    with pytest.raises(ScenarioError, match="binary") as exc:
        decode_text("sweep.csv", b"batch,step_ms\n\x00\x01\x02")
    assert exc.value.key == "sweep.csv"
    with pytest.raises(ScenarioError, match="not UTF-8"):
        decode_text("sweep.csv", b"batch,step_ms\n1,\xff\xfe\n")


def test_a_one_megabyte_line_refuses_the_file():
    text = "batch,step_ms\n1,21.4\n" + "9" * 1_000_000 + "\n"
    message = refused(text)
    assert message.startswith(f"line 3 is 1,000,000 characters long; the limit is {MAX_LINE:,}")
    assert read_csv("x" * 1_000_000, "one-line.txt") is None  # not ours: another reader's turn
    assert "line 1 is 1,000,000" in refused("b" * 1_000_000, kind="decode")


def test_a_five_megabyte_file_reads_its_first_max_rows_and_says_what_it_left():
    """How fast is a benchmark's question (benchmarks/import_speed.py), not a test's: a timed
    assertion fails on a loaded machine."""
    rows = [
        f"{b % 512 + 1},{20 + b % 997 / 100:.2f},full_and_piecewise,{b % 8192}"
        for b in range(140_000)
    ]
    text = "batch,step_ms,cuda_graphs,context_tokens\n" + "\n".join(rows) + "\n"
    assert 4_500_000 < len(text) < 5_000_000
    ds = read_csv(text, "big.csv")
    assert ds.problems[0].message == (
        f"{140_000 - MAX_ROWS:,} rows after row {MAX_ROWS:,} ignored (the limit is "
        f"{MAX_ROWS:,} rows per file)"
    )
    assert len(ds.rows) == MAX_ROWS and len(ds.problems) == 1  # no row repeats another


def test_text_over_the_size_limit_is_refused():
    assert "larger than 5 MB" in refused("batch,step_ms\n" + "1,21.4\n" * 800_000)


def test_datasets_serialise():
    for path in sorted(DATA.glob("*.csv")):
        try:
            ds = read(path.name)
        except ScenarioError:
            continue
        if ds is not None:
            json.dumps(ds.to_json())


# --- property ----------------------------------------------------------------------------------

decode_rows = st.lists(
    st.tuples(
        st.integers(1, 4096),
        st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False),
        st.sampled_from([None, *CUDA_GRAPHS_MODES]),
        st.integers(0, 1_000_000),
    ),
    min_size=1,
    max_size=40,
    unique=True,
)


@settings(max_examples=60, deadline=None)
@given(decode_rows, st.sampled_from([",", ";", "\t"]))
def test_valid_decode_rows_read_back_unchanged(rows, delimiter):
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(["batch", "step_ms", "cuda_graphs", "context_tokens"])
    for batch, step, graphs, context in rows:
        writer.writerow([batch, repr(step), graphs or "", context])
    ds = read_csv(out.getvalue(), "p.csv")
    assert ds.kind == "decode" and ds.problems == []
    assert ds.rows == [
        {"batch": b, "step_ms": s, "cuda_graphs": g, "context_tokens": c} for b, s, g, c in rows
    ]


def test_absurd_magnitudes_are_refused_before_figures_overflow():
    ds = read_csv("bytes,ms\n1000000000,1e-300\n1e30,1\n1000000000,0.5\n", "b.csv")
    assert [r["gb_s"] for r in ds.rows] == [2000.0]  # 10⁹ B / 0.5 ms / 10⁶
    assert problems(ds) == [
        "row 1 (line 2): column ms: '1e-300' is out of range: ms between 1e-09 and 1e+12",
        "row 2 (line 3): column bytes: '1e30' is more than 10¹⁸ bytes",
    ]
    ds = read_csv("batch,tokens_per_s\n8,1e-20\n8,400\n", "d.csv")
    assert [r["step_ms"] for r in ds.rows] == [20.0]  # 8 / 400 × 1000


cells = st.sampled_from(
    ["", "1", "8.0", "8.5", "-1", "0", "1e400", "nan", "21.4 ms", "2 s", '"1,024"', "1,5", "x"]
    + ["pinned", "compile", "5", "full", '"', '"a"b', "\ufeff", "# link: http://x"]
)
headers = st.lists(
    st.sampled_from(
        [c for kind in CSV_SCHEMAS.values() for g in kind["required"] for c in g]
        + ["step", "latency_s", "Step (µs)", "foo", "", "note"]
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(
    headers,
    st.lists(st.lists(cells, max_size=6), max_size=6),
    st.sampled_from([None, "decode", "h2d"]),
)
def test_any_input_is_a_dataset_none_or_a_scenario_error(header, rows, kind):
    text = ",".join(header) + "\n" + "\n".join(",".join(r) for r in rows)
    try:
        ds = read_csv(text, "f.csv", kind)
    except ScenarioError as exc:
        assert exc.key == "f.csv" and exc.message
        return
    if ds is not None:
        assert ds.rows
        json.dumps(ds.to_json(), allow_nan=False)  # no NaN or Inf reaches a figure
