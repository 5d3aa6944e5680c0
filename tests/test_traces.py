"""Request traces for replay (SPEC 4.4): the three formats, expected arrivals worked out by
hand, every bad input of SPEC section 6, a round-trip property and the work 1 M rows take (one
pass; the time it takes is in benchmarks/suite_timings.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from model.errors import ScenarioError
from model.readers.measurements import MAX_BYTES, MAX_PROBLEMS
from model.readers.traces import (
    ACCEPTED_HEADERS,
    MAX_TRACE_ROWS,
    read_trace,
    read_trace_file,
    read_trace_text,
    trace_template,
)
from tests.helpers import hang_guard

DATA = Path(__file__).resolve().parent / "data" / "traces"
REAL_AZURE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "fixtures"
    / "traces"
    / "AzureLLMInferenceTrace_conv.csv"
)


def fixture(name: str):
    return read_trace(name, (DATA / name).read_bytes())


def refused(name: str, data: bytes, **kw) -> str:
    with pytest.raises(ScenarioError) as err:
        read_trace(name, data, **kw)
    assert err.value.key == name
    return err.value.message


# -- the formats --------------------------------------------------------------------------------


def test_plain_with_tokens():
    t = fixture("plain.csv")
    assert t.format == "plain" and t.name == "plain.csv" and t.start is None
    assert_array_equal(t.arrival_s, [0.0, 0.5, 0.5, 2.25, 10.0])
    assert t.arrival_s.dtype == np.float64
    assert_array_equal(t.input_tokens, [1024, 512, 2048, 100, 300])
    assert_array_equal(t.output_tokens, [256, 128, 64, 0, 20])
    assert t.input_tokens.dtype == np.int64 and t.output_tokens.dtype == np.int64
    assert (t.rows, t.rows_refused, t.problems, t.span_s) == (5, 0, [], 10.0)
    # two requests at 0.5 s are legitimate: kept, with a notice
    assert any("same instant" in n and ": 1 " in n for n in t.notices)


def test_plain_arrivals_only_unsorted_and_offset():
    t = fixture("plain_unsorted.csv")
    # 7.5, 2.5, 5, 2.5 → sorted 2.5, 2.5, 5, 7.5 → from the first request: 0, 0, 2.5, 5
    assert_array_equal(t.arrival_s, [0.0, 0.0, 2.5, 5.0])
    assert t.input_tokens is None and t.output_tokens is None
    assert t.rows == 4 and t.rows_refused == 0 and t.span_s == 5.0
    assert any("not in time order: sorted" in n for n in t.notices)
    assert any("same instant" in n for n in t.notices)
    assert any("at 2.5 s in the file" in n for n in t.notices)
    s = t.summary()
    assert s["mean_input_tokens"] is None and s["mean_output_tokens"] is None


def test_sorting_keeps_tokens_with_their_request():
    t = read_trace_text("arrival_s,input_tokens,output_tokens\n3,30,3\n1,10,1\n2,20,2\n", "u.csv")
    assert_array_equal(t.arrival_s, [0.0, 1.0, 2.0])
    assert_array_equal(t.input_tokens, [10, 20, 30])
    assert_array_equal(t.output_tokens, [1, 2, 3])


def test_azure_seven_digit_fractions_across_midnight():
    t = fixture("azure_midnight.csv")
    assert t.format == "azure"
    # 23:59:58.1234567 → 23:59:59.9999999 = 1.8765432 s; → 00:00:00.0000001 (next day)
    # = 1.8765434 s; → 00:00:01.5000000 = 1.5 + 1.8765433 = 3.3765433 s
    assert_allclose(t.arrival_s, [0.0, 1.8765432, 1.8765434, 3.3765433], rtol=0, atol=1e-12)
    # the 7th digit is kept: the two requests around midnight are 200 ns apart
    assert_allclose(t.arrival_s[2] - t.arrival_s[1], 2e-7, rtol=0, atol=1e-12)
    assert_array_equal(t.input_tokens, [374, 120, 800, 60])
    assert_array_equal(t.output_tokens, [44, 10, 0, 200])
    assert t.start == "2023-11-16T23:59:58.123456700"
    assert_allclose(t.span_s, 3.3765433, rtol=0, atol=1e-12)


def test_azure_header_variants_and_iso_forms():
    text = (
        "\ufeff timestamp , Context Tokens,generated_tokens\r\n"
        "2023-11-16T10:00:00,5,6\r\n"
        "2023-11-16 10:00:01.25,7,8\r\n"
    )
    t = read_trace_text(text, "az.csv")
    assert t.format == "azure"
    assert_array_equal(t.arrival_s, [0.0, 1.25])
    assert t.start == "2023-11-16T10:00:00"


def test_azure_utc_offsets_are_converted():
    text = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16T18:00:00+01:00,1,1\n2023-11-16 17:30:00Z,1,1\n"
    t = read_trace_text(text, "tz.csv")
    assert_array_equal(t.arrival_s, [0.0, 1800.0])
    assert t.start == "2023-11-16T17:00:00+00:00"


def test_burstgpt_without_session_columns():
    t = fixture("burstgpt.csv")
    assert t.format == "burstgpt" and t.start is None
    assert_array_equal(t.arrival_s, [0.0, 4.0, 4.0, 21.0])
    assert_array_equal(t.input_tokens, [472, 1087, 373, 151])
    # a failed request (0 response tokens) is kept, with 0 output tokens, and said so
    assert_array_equal(t.output_tokens, [18, 0, 332, 154])
    assert any("0 response tokens" in n and "BurstGPT" in n for n in t.notices)
    assert t.rows == 4 and t.rows_refused == 0


def test_burstgpt_with_session_columns():
    t = fixture("burstgpt_sessions.csv")
    assert t.format == "burstgpt"
    # 12, 12.5, 30 → from the first request: 0, 0.5, 18
    assert_array_equal(t.arrival_s, [0.0, 0.5, 18.0])
    assert_array_equal(t.input_tokens, [200, 420, 1500])
    assert_array_equal(t.output_tokens, [50, 0, 600])
    assert any("at 12 s in the file" in n for n in t.notices)


def test_columns_in_another_order():
    t = read_trace_text("output_tokens,arrival_s\n5,2\n6,1\n", "o.csv")
    assert_array_equal(t.arrival_s, [0.0, 1.0])
    assert_array_equal(t.output_tokens, [6, 5])
    assert t.input_tokens is None


def test_summary_by_hand():
    t = fixture("plain.csv")
    s = t.summary()
    assert s == {
        "requests": 5,
        "span_s": 10.0,
        "mean_rate_per_s": 0.5,
        "peak_rate_per_hour": 5,
        "rows_refused": 0,
        "format": "plain",
        "start": None,
        "mean_input_tokens": (1024 + 512 + 2048 + 100 + 300) / 5,
        "mean_output_tokens": (256 + 128 + 64 + 0 + 20) / 5,
    }
    # the peak is the most requests in any 3600 s window, not in a clock hour
    # (clock hours from the first request hold 3 and 2; 3000..6600 holds 4)
    t = read_trace_text("arrival_s\n0\n3000\n3500\n4000\n6500\n10000\n", "p.csv")
    assert t.summary()["peak_rate_per_hour"] == 4
    one = read_trace_text("arrival_s\n5\n", "one.csv").summary()
    assert one["requests"] == 1 and one["span_s"] == 0.0 and one["mean_rate_per_s"] is None


def test_scaled_compresses_or_stretches_the_time_axis():
    t = fixture("plain.csv")
    fast = t.scaled(2.0)
    assert_array_equal(fast.arrival_s, [0.0, 0.25, 0.25, 1.125, 5.0])
    assert fast.span_s == 5.0 and fast.summary()["mean_rate_per_s"] == 1.0
    assert_array_equal(fast.input_tokens, t.input_tokens)
    assert_array_equal(t.arrival_s, [0.0, 0.5, 0.5, 2.25, 10.0])  # the original is unchanged
    assert t.scaled(0.5).span_s == 20.0 and t.scaled(1) is t
    for bad in (0, -1, float("nan"), float("inf"), "x"):
        with pytest.raises(ScenarioError) as err:
            t.scaled(bad)
        assert err.value.key == "rate_scale"


def test_template_reads_as_a_plain_trace():
    t = read_trace_text(trace_template(), "template.csv")
    assert trace_template().splitlines()[0] == "arrival_s,input_tokens,output_tokens"
    assert t.format == "plain" and t.rows >= 3 and t.rows_refused == 0
    assert t.input_tokens is not None and t.output_tokens is not None


# -- bad input: the whole file ------------------------------------------------------------------


def test_empty_file_is_refused():
    assert "empty" in refused("empty.csv", (DATA / "empty.csv").read_bytes())
    assert "empty" in refused("blank.csv", b"  \n\r\n ")
    with pytest.raises(ScenarioError, match="empty"):
        read_trace_text("", "e.csv")


def test_header_only_is_refused():
    msg = refused("header_only.csv", (DATA / "header_only.csv").read_bytes())
    assert "no rows" in msg
    assert "no rows" in refused("h.csv", b"arrival_s\n\n\n")


def test_unknown_columns_list_the_three_accepted_headers():
    msg = refused("unknown_columns.csv", (DATA / "unknown_columns.csv").read_bytes())
    assert "'time,prompt,completion'" in msg and ACCEPTED_HEADERS in msg
    for header in ("arrival_s", "TIMESTAMP,ContextTokens,GeneratedTokens", "Request tokens"):
        assert header in msg
    # a known format with a column it does not have: the column is named
    msg = refused("extra.csv", b"arrival_s,input_tokens,model\n1,2,x\n")
    assert "'model'" in msg and "plain trace" in msg
    # no header at all
    assert "must be a header" in refused("nohead.csv", b"0.5,100,20\n1.0,50,10\n")
    # a column twice
    assert "twice" in refused("dup.csv", b"arrival_s,arrival_s\n1,2\n")


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"arrival_s\n1\n\x00\x00\x00"],
    ids=["png", "nul-bytes"],
)
def test_binary_is_refused(data):
    msg = refused("trace.bin", data)
    assert "binary" in msg and "CSV" in msg


def test_non_utf8_is_refused():
    msg = refused("latin1.csv", b"arrival_s\n1\n\xe9\xff\n")
    assert "not UTF-8" in msg


def test_more_bytes_than_allowed_is_refused():
    data = b"arrival_s\n" + b"1\n" * (MAX_BYTES // 2)  # just over the upload limit
    msg = refused("big.csv", data)
    assert f"at most {MAX_BYTES // 1_000_000} MB are accepted" in msg
    msg = refused("small.csv", b"arrival_s\n" + b"1\n" * 100, max_bytes=100)
    assert "210 bytes; trace files of at most 100 bytes are accepted" in msg


def test_read_trace_file_checks_the_size_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_bytes(b"arrival_s\n" + b"1.5\n" * 1000)

    def no_read(self):
        raise AssertionError("the file was read")

    monkeypatch.setattr(Path, "read_bytes", no_read)
    with pytest.raises(ScenarioError) as err:
        read_trace_file(str(path), max_bytes=1000)
    assert err.value.key == str(path)
    assert "4,010 bytes; trace files of at most 1,000 bytes are accepted" in err.value.message
    monkeypatch.undo()
    assert read_trace_file(str(path)).rows == 1000
    with pytest.raises(ScenarioError, match="no such file"):
        read_trace_file(str(tmp_path / "missing.csv"))
    with pytest.raises(ScenarioError, match="not a file"):
        read_trace_file(str(tmp_path))


def test_read_trace_file_names_the_limit(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"arrival_s\n" + b"1\n" * 3_000_000)  # 6 MB
    with pytest.raises(ScenarioError, match=r"6\.0 MB; trace files of at most 5 MB"):
        read_trace_file(str(path), max_bytes=5_000_000)


def test_a_cli_file_larger_than_an_upload_is_read_and_still_checked(tmp_path):
    rows = b"".join(b"%d,100,10\n" % i for i in range(600_000))  # > 5 MB
    path = tmp_path / "big.csv"
    path.write_bytes(b"arrival_s,input_tokens,output_tokens\n" + rows)
    assert path.stat().st_size > MAX_BYTES
    t = read_trace_file(str(path))
    assert t.rows == 600_000 and t.span_s == 599_999.0
    path.write_bytes(b"arrival_s\n" + b"1\n" * 3_000_000 + b"\xff\xfe\n")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        read_trace_file(str(path))
    path.write_bytes(b"arrival_s\n\x00" + b"1\n" * 3_000_000)
    with pytest.raises(ScenarioError, match="binary"):
        read_trace_file(str(path))


def test_a_file_with_no_usable_row_is_refused():
    msg = refused("bad.csv", b"arrival_s\nabc\n-1\n")
    assert "no row could be used" in msg and "2 refused" in msg and "line 2" in msg


# -- bad input: single rows ---------------------------------------------------------------------


def test_bad_rows_are_refused_one_by_one_and_the_rest_kept():
    t = fixture("bad_rows.csv")
    assert_array_equal(t.arrival_s, [0.0, 7.0])
    assert_array_equal(t.input_tokens, [100, 100])
    assert t.rows == 2 and t.rows_refused == 8
    got = {p.where: p.message for p in t.problems}
    assert list(got) == [f"line {n}" for n in (3, 4, 5, 6, 7, 8, 9, 10)]
    assert "input_tokens 'abc' is not a number" in got["line 3"]
    assert "input_tokens -5 is negative" in got["line 4"]
    assert "output_tokens -1 is negative" in got["line 5"]
    assert "arrival_s -4 is negative" in got["line 6"]
    assert "arrival_s 'NaN' is not a number" in got["line 7"]
    assert "arrival_s is infinite" in got["line 8"]
    assert "4 fields where the header has 3" in got["line 9"]
    assert "12.5 is not a whole number" in got["line 10"]
    # each says what is accepted
    assert all("accepted" in m for k, m in got.items() if k != "line 9")
    assert any("1 blank line skipped" in n for n in t.notices)


def test_nan_and_empty_cells_in_the_fast_path():
    # all numeric text: read straight as numbers; an empty cell and an infinity are named
    t = read_trace_text("arrival_s,input_tokens\n0,1\n1,\n2,1e999\n3,4\n", "f.csv")
    assert_array_equal(t.arrival_s, [0.0, 3.0])
    got = [str(p) for p in t.problems]
    assert got[0].startswith("line 3: input_tokens is empty")
    assert got[1].startswith("line 4: input_tokens is infinite")


def test_bad_dates_are_refused_one_by_one():
    t = fixture("azure_bad_dates.csv")
    assert t.rows == 2 and t.rows_refused == 2
    assert_allclose(t.arrival_s, [0.0, 4.314579], rtol=0, atol=1e-12)
    got = [str(p) for p in t.problems]
    assert got[0].startswith("line 3: TIMESTAMP 'not a date' is not a date and time")
    assert got[1].startswith("line 4: TIMESTAMP '2023-02-30 10:00:00.0000000' is not a date")
    assert "2023-11-16 18:15:46.6805900" in got[0]  # the accepted form


def test_a_typo_year_is_refused_not_stretched_over_centuries():
    text = (
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 10:00:00,1,1\n2023-11-16 10:00:05,1,1\n2203-11-16 10:00:07,1,1\n"
    )
    t = read_trace_text(text, "y.csv")
    assert t.rows == 2 and t.span_s == 5.0
    assert "31 years" in str(t.problems[0])


def test_booleans_and_thousands_are_not_numbers():
    t = read_trace_text('arrival_s,input_tokens\n0,1\n1,True\n2,"1,000"\n', "b.csv")
    assert t.rows == 1 and t.rows_refused == 2


def test_problems_are_capped_with_a_count_of_the_rest():
    text = "arrival_s\n0\n" + "x\n" * (MAX_PROBLEMS + 30)
    t = read_trace_text(text, "many.csv")
    assert t.rows == 1 and t.rows_refused == MAX_PROBLEMS + 30
    assert len(t.problems) == MAX_PROBLEMS + 1
    assert t.problems[-1].message == "… and 30 more refused rows"


def test_line_numbers_count_blank_and_skipped_lines():
    text = "\n\narrival_s\n0\n\n1,2\nx\n3\n"
    t = read_trace_text(text, "n.csv")
    assert_array_equal(t.arrival_s, [0.0, 3.0])
    assert [p.where for p in t.problems] == ["line 6", "line 7"]


def test_more_rows_than_allowed_keeps_the_first_with_a_notice():
    t = read_trace_text("arrival_s\n" + "".join(f"{i}\n" for i in range(50)), "m.csv", 10)
    assert t.rows == 10 and t.span_s == 9.0
    assert any("only the first 10 are used" in n and "40 rows not read" in n for n in t.notices)
    # exactly max_rows rows (and a trailing blank line): nothing said
    t = read_trace_text("arrival_s\n" + "".join(f"{i}\n" for i in range(10)) + "\n", "m.csv", 10)
    assert t.rows == 10 and not any("only the first" in n for n in t.notices)
    assert MAX_TRACE_ROWS == 2_000_000


@pytest.fixture
def csv_reads(monkeypatch):
    """Each ``pandas.read_csv`` call the reader makes: the rows it asked for and got."""
    reads = []
    read_csv = pd.read_csv

    def counted(*args, **kwargs):
        frame = read_csv(*args, **kwargs)
        reads.append({"nrows": kwargs.get("nrows"), "rows": len(frame)})
        return frame

    monkeypatch.setattr(pd, "read_csv", counted)
    return reads


def ten_million_rows() -> bytes:
    return b"arrival_s\n" + b"1\n" * 10_000_000  # 20 MB


def test_ten_million_rows_are_counted_not_parsed(csv_reads):
    with hang_guard(50):  # ten times the 5 s limit this test used to assert
        t = read_trace("huge.csv", ten_million_rows(), max_rows=1000, max_bytes=50_000_000)
    assert t.rows == 1000
    assert any("10,000,000 rows" in n and "9,999,000 rows not read" in n for n in t.notices)
    # only the first rows (and one more, to tell a longer file) are parsed; the rest is counted
    assert csv_reads and all(r["nrows"] == 1001 and r["rows"] <= 1001 for r in csv_reads)


# -- properties and speed -----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=60,
    )
)
def test_plain_arrivals_round_trip_sorted(values):
    text = "arrival_s\n" + "".join(f"{v!r}\n" for v in values)
    t = read_trace_text(text, "h.csv")
    expected = np.sort(np.asarray(values, dtype=np.float64))
    assert_array_equal(t.arrival_s, expected - expected[0])
    assert t.rows == len(values) and t.rows_refused == 0
    assert np.all(np.diff(t.arrival_s) >= 0)


def million_rows(n: int = 1_000_000) -> str:
    arrival = np.arange(n) * 0.25
    tokens = np.arange(n) % 4000
    body = "\n".join(
        f"{a},{i},{i % 500}" for a, i in zip(arrival.tolist(), tokens.tolist(), strict=True)
    )
    return "arrival_s,input_tokens,output_tokens\n" + body + "\n"


def test_one_million_rows_are_read_in_one_pass(csv_reads):
    n = 1_000_000
    text = million_rows(n)
    with hang_guard(100):  # ten times the 10 s limit this test used to assert
        t = read_trace_text(text, "million.csv")
    assert t.rows == n and t.span_s == (n - 1) * 0.25
    assert t.rows_refused == 0 and not t.problems
    assert t.input_tokens[-1] == (n - 1) % 4000 and t.output_tokens[-1] == (n - 1) % 500
    # the fast path: one C-parser pass straight to numbers, never the re-read as text
    assert len(csv_reads) == 1 and csv_reads[0]["rows"] == n


# -- the real Azure trace -----------------------------------------------------------------------


@pytest.mark.skipif(not REAL_AZURE.is_file(), reason=f"{REAL_AZURE} is not present")
def test_the_real_azure_conversation_trace():
    t = read_trace_file(str(REAL_AZURE))
    assert t.format == "azure"
    # 19,367 lines: the header and 19,366 requests (the last line has no line end)
    assert t.rows == 19_366 and t.rows_refused == 0 and t.problems == []
    # first 2023-11-16 18:15:46.6805900, last 19:14:08.4025270:
    # 58 min 21.7219370 s = 3,501.721937 s
    assert t.start == "2023-11-16T18:15:46.680590"
    assert_allclose(t.span_s, 3501.721937, rtol=0, atol=1e-9)
    assert_allclose(t.arrival_s[1], 50.9951690 - 46.6805900, rtol=0, atol=1e-9)
    s = t.summary()
    assert s["requests"] == 19_366 and s["peak_rate_per_hour"] == 19_366
    assert_allclose(s["mean_rate_per_s"], 19_366 / 3501.721937)
    assert t.input_tokens[0] == 374 and t.output_tokens[0] == 44
