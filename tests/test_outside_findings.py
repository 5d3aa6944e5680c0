"""What the outside testing of issue 21 found, each with a test that failed before its fix:
a value the scenario accepts crashed three pages (``rate_scale`` above the traffic model's
bound), and user text reached the CSV downloads as formula cells."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from model.errors import ScenarioError
from model.overrides import resolve
from model.scenario import MAX_RATE_SCALE, Scenario
from tests.pages import open_page
from tests.test_datastore import CSV
from tools import golden
from ui import export

ROOT = Path(__file__).resolve().parent.parent


# --- 1. one bound for rate_scale, and no page shows an exception for a value it accepts -------


def test_rate_scale_has_one_bound_that_the_traffic_model_takes():
    from model.economics import economics_lens

    top = resolve([("rate_scale", f"{MAX_RATE_SCALE:g}")], strict=True)[0]
    assert economics_lens(top)["figures"]["requests_per_day"] > 0
    with pytest.raises(ScenarioError) as err:
        resolve([("rate_scale", f"{MAX_RATE_SCALE * 1.0001:g}")], strict=True)
    assert err.value.key == "rate_scale"
    field = Scenario.model_fields["rate_scale"]
    assert {m.le for m in field.metadata if hasattr(m, "le")} == {MAX_RATE_SCALE}


@pytest.mark.parametrize(
    "page, query",
    [
        ("app.py", {"rate_scale": "10001"}),
        ("app.py", {"rate_scale": "10000"}),
        ("pages/5_Scale_to_zero.py", {"rate_scale": "20000"}),
        ("app.py", {"base.rate_scale": "10001"}),
        ("pages/7_Compare.py", {"vs": "rate_scale=10001"}),
        ("pages/7_Compare.py", {"vs": "rate_scale=10000"}),
    ],
)
def test_a_rate_scale_link_never_shows_an_exception(page, query):
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.metric or at.dataframe or at.table  # the rest of the page works


def test_every_numeric_bound_the_scenario_accepts_evaluates():
    """Each numeric scenario field at its lower and upper bound, one at a time: the whole core
    (every lens and the Compare figures) computes, or refuses with a ScenarioError naming a
    key, never another exception."""
    from model.evaluate import summary

    for name, field in Scenario.model_fields.items():
        bounds = [getattr(m, a, None) for m in field.metadata for a in ("ge", "le", "gt", "lt")]
        bounds = [b for b in bounds if isinstance(b, (int, float))]
        for value in bounds:
            try:
                s = resolve([(name, f"{value:g}")], strict=True)[0]
            except ScenarioError:
                continue  # a bound the other fields refuse together (a prompt past the context)
            try:
                summary(s)
            except ScenarioError as exc:
                assert exc.key, (name, value)


# --- 2. formula cells in CSV downloads --------------------------------------------------------


def _cells(text: str) -> list[str]:
    lines = text.splitlines()
    out = []
    for line in lines:
        out += [c.strip().strip('"') for c in line.split(",")]
    return out


def test_user_text_in_a_csv_never_starts_like_a_formula():
    frame = pd.DataFrame(
        {
            "=name": ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "ok"],
            "number": [-1.5, 2.0, 3.0, -4.25, 5.0],
            "mixed": ["-1", 2.5, "x", "=1", None],
        }
    )
    text = export.csv_text(frame, "a label, =cmd · http://host/?capture_sizes=1,2,4")
    for cell in _cells(text):
        assert not cell.startswith(("=", "+", "@")), cell
        assert not cell.startswith("-") or cell.lstrip("-").replace(".", "").isdigit(), cell
    back = pd.read_csv(io.StringIO(text), comment="#")
    assert back["number"].tolist() == [-1.5, 2.0, 3.0, -4.25, 5.0]  # numbers stay numbers
    assert back["'=name"].tolist()[0] == '\'=HYPERLINK("http://x")'


def test_a_model_name_from_a_link_reaches_the_figures_csv_as_text():
    golden._record_deferred()
    golden._DEFERRED.clear()
    at = AppTest.from_file(str(ROOT / "pages/1_Roofline.py"), default_timeout=120)
    at.query_params["model.name"] = '=HYPERLINK("http://evil","x")'
    at.session_state["t_roofline"] = "Breakdown and downloads"
    at.run()
    assert not at.exception
    figures = [
        e for e in golden._DEFERRED.values() if (e["filename"] or "").endswith("figures.csv")
    ]
    assert figures
    text = figures[0]["callable"]()
    assert "=HYPERLINK" in text  # the name is there, as text
    for cell in _cells(text):
        assert not cell.startswith(("=", "+", "@")), cell


# --- 5. names the store cannot take ----------------------------------------------------------


@pytest.mark.parametrize(
    "name, kept",
    [
        ("bad\ud800name.csv", "bad\ufffdname.csv"),  # a lone surrogate: not UTF-8
        ("nul\x00name.csv", "nul name.csv"),  # PostgreSQL refuses NUL in text
        ("tab\tand\r\nnewline.csv", "tab and newline.csv"),
        ("\x00\x01", "data"),
    ],
)
def test_a_name_the_store_cannot_take_is_cleaned_on_both_backends(backend, name, kept):
    store = backend()
    data_id = store.put(name, CSV)
    assert store.get(data_id) == (kept, CSV)


# --- 9. logs whose lines start with "[" ------------------------------------------------------

LOG = ROOT / "presets" / "examples" / "vllm_0.8.5_warm_cache.log"


@pytest.mark.parametrize("prefix", ["[pod-7f9c] ", "[2025-06-19 23:05:01] ", "[RunAI Streamer] "])
def test_a_log_whose_lines_start_with_a_bracket_is_read_as_a_log(prefix, tmp_path):
    import subprocess
    import sys

    from model.readers.importers import import_text
    from model.readers.vllm_log import parse_log

    plain = LOG.read_text(encoding="utf-8")
    text = "".join(prefix + line for line in plain.splitlines(keepends=True))
    ds = import_text(text, "pod.log")
    assert ds.kind == parse_log(plain, "pod.log").kind
    assert ds.figures == parse_log(plain, "pod.log").figures
    path = tmp_path / "pod.log"
    path.write_text(text, encoding="utf-8")
    for command in ("import", "calibrate"):
        done = subprocess.run(
            [sys.executable, "-m", "model", command, str(path), "--json"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "JSON file" not in done.stderr


@pytest.mark.parametrize("text", ["[" * 4_900_000, "[" * 3000 + "]" * 3000, '{"a":' * 5000])
def test_json_nested_past_any_depth_is_a_clear_refusal(text, tmp_path):
    import subprocess
    import sys

    from model.readers.importers import import_file

    with pytest.raises(ScenarioError) as err:
        import_file("deep.json", text.encode())
    assert "nested too deeply" in err.value.message
    path = tmp_path / "deep.json"
    path.write_text(text)
    for cmd in ("import", "calibrate"):
        done = subprocess.run(
            [sys.executable, "-m", "model", cmd, str(path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
        assert "nested too deeply" in done.stderr


def test_json_and_jsonl_are_still_read_as_benchmark_results():
    from model.readers.importers import _is_json

    assert _is_json('{"completed": 1}')
    assert _is_json('[\n {"a": 1}\n]')
    assert _is_json('{"a": 1}\n{"a": 2}\n')
    assert not _is_json("[pod-7f9c] INFO 06-19 starting\n")
    assert not _is_json("INFO 06-19 starting\n")


# --- 6. absurd and subnormal values: refused by the importers, and the fit never raises -------


ABSURD = (
    b'{"max_concurrency": 1e308, "mean_ttft_ms": 1e308, "mean_tpot_ms": 1e-320, "completed": 1}'
)


def test_an_absurd_benchmark_is_read_with_its_values_refused_by_name():
    from model.readers.importers import import_file

    ds = import_file("absurd.json", ABSURD)
    assert "mean_ttft_ms" not in ds.figures and "mean_tpot_ms" not in ds.figures
    said = " ".join(str(p) for p in ds.problems)
    assert "mean_ttft_ms" in said and "mean_tpot_ms" in said and "out of range" in said


def test_calibrate_on_an_absurd_file_is_a_clear_refusal_not_an_internal_error(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "absurd.json"
    path.write_bytes(ABSURD)
    done = subprocess.run(
        [sys.executable, "-m", "model", "calibrate", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr
    assert done.stderr.startswith("whatif: error: measurements:")


def test_the_fit_never_raises_on_points_past_any_physical_range():
    """The absurd benchmark as a reader that let it through would hand it over: the fit refuses
    (it raised numpy's LinAlgError before)."""
    from model.calibrate import calibrate
    from model.readers.measurements import Dataset

    s = resolve([("scenario", "default")], strict=True)[0]
    big = 10.0**308
    ds = Dataset(
        name="absurd.json",
        format="vllm_bench_json",
        kind="serving",
        figures={
            "max_concurrency": big,
            "mean_ttft_ms": big,
            "mean_tpot_ms": 1e-320,
            "completed": 1,
        },
        conditions={"max_concurrency": big},
    )
    cal = calibrate(s, [ds])  # refusals, never an exception
    assert not cal.fits
    assert cal.refused


# --- 3. a brief store failure loses nothing, and one failed write stays in its session --------


def _page(path: str, **query) -> AppTest:
    return open_page(path, **query)


def _measurements(**query) -> AppTest:
    return _page("pages/6_Measurements.py", **query)


def _link_ids(at) -> list[str]:
    q = at.query_params.get("data")
    values = q if isinstance(q, list) else [q] if q else []
    return [i for v in values for i in v.split(",") if i]


def test_a_link_opened_while_the_store_is_down_keeps_its_ids_and_opens_them_later(flaky):
    data_id = flaky.put("decode.csv", CSV)
    flaky.fail_get = True
    at = _measurements(data=data_id)
    warnings = " ".join(w.value for w in at.warning)
    assert "could not be opened just now" in warnings
    assert _link_ids(at) == [data_id]  # a reload or a re-share keeps it
    assert "db.internal" not in warnings and "5432" not in warnings  # no server internals
    flaky.fail_get = False
    at.session_state["_whatif_store_backoff"] = None  # this session's pause is over
    at.run()  # the next run tries again
    assert not at.exception
    assert _link_ids(at) == [data_id]
    assert any(m.label == "Data sets" and m.value == "1" for m in at.metric)


def test_one_failed_write_does_not_switch_sharing_off_for_everyone(flaky, monkeypatch):
    import datastore

    other = flaky.put("other.csv", CSV + b"16,7.5\n")
    marked = []
    monkeypatch.setattr(datastore, "mark_unavailable", lambda store, why: marked.append(why))
    flaky.fail_put = True
    at = _measurements()
    at.text_area(key="w_meas_paste").input(CSV.decode())
    [b for b in at.button if b.label == "Read pasted text"][0].click()
    at.run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "stays in this session only" in warnings
    assert "/srv/secret" not in warnings
    # the store is not switched off for the other sessions (it was, for 60 s, reads included)
    assert not marked
    second = _measurements(data=other)
    assert _link_ids(second) == [other]
    assert any(m.label == "Data sets" and m.value == "1" for m in second.metric)


def test_an_unavailable_store_is_named_without_its_path(tmp_path, monkeypatch):
    import datastore

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.delenv(datastore.ENV_URL, raising=False)
    monkeypatch.setenv(datastore.ENV_DIR, str(blocker / "secret-folder"))
    monkeypatch.setattr(datastore, "_cached", None)
    at = _measurements()
    shown = " ".join(x.value for x in [*at.warning, *at.caption, *at.markdown, *at.info])
    shown = shown.replace("\\", "")  # markdown escapes
    assert "Sharing data sets is unavailable" in shown
    assert "secret-folder" not in shown and str(tmp_path) not in shown


# --- 7. a read-only store still answers reads -------------------------------------------------


def test_a_sqlite_store_that_cannot_be_written_opens_read_only(tmp_path):
    import contextlib

    import datastore
    from datastore.sqlite import SQLiteStore

    path = tmp_path / "store" / "datasets.sqlite3"
    data_id = SQLiteStore(path, datastore.Limits()).put("decode.csv", CSV)

    class ReadOnlyDisk(SQLiteStore):
        """Writes fail as on a read-only file or folder (root ignores file modes, so the test
        makes the driver's refusal itself)."""

        @contextlib.contextmanager
        def _transaction(self, write):
            if write:
                raise self._unavailable(Exception("attempt to write a readonly database"))
            with super()._transaction(write) as cur:
                yield cur

    store = ReadOnlyDisk(path, datastore.Limits())
    assert store.kind == "sqlite" and store.read_only
    assert store.get(data_id) == ("decode.csv", CSV)  # every existing share link still opens
    with pytest.raises(datastore.Refused, match="read-only"):
        store.put("new.csv", CSV + b"16,7.5\n")


def test_a_read_only_postgresql_database_still_opens_share_links(postgres_url):
    import psycopg

    from datastore import Limits, Refused
    from datastore.postgres import PostgresStore
    from tests.helpers import drop_table

    drop_table(postgres_url)
    data_id = PostgresStore(postgres_url, Limits()).put("decode.csv", CSV)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        db = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'ALTER DATABASE "{db}" SET default_transaction_read_only = on')
    try:
        store = PostgresStore(postgres_url, Limits())
        assert store.read_only
        assert store.get(data_id) == ("decode.csv", CSV)
        with pytest.raises(Refused, match="read-only"):
            store.put("new.csv", CSV + b"16,7.5\n")
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("SET default_transaction_read_only = off")
            conn.execute(f'ALTER DATABASE "{db}" SET default_transaction_read_only = off')


# --- 4. a stranger cannot flush everyone's shared data ---------------------------------------


def _blob(i: int, size: int = 100) -> bytes:
    return (f"{i:08d}," * size)[:size].encode()


def test_one_client_holds_at_most_its_share_and_its_junk_goes_first(backend):
    from datastore import Limits

    limits = Limits(max_bytes=100, max_total_bytes=1000, owner_share=0.3)
    clock = iter(range(1, 10_000)).__next__
    store = backend(limits, lambda: float(clock()))
    kept = [store.put(f"user-{i}.csv", _blob(i), owner=f"user-{i}") for i in range(4)]
    junk = [store.put(f"junk-{i}.csv", _blob(100 + i), owner="stranger") for i in range(200)]
    for data_id in kept:  # every other user's data set survives 200 junk uploads
        assert store.get(data_id) is not None
    alive = [j for j in junk if store.get(j) is not None]
    assert 1 <= len(alive) <= 3  # the stranger holds at most its share (300 of 1000 bytes)
    assert junk[-1] in alive  # its newest upload is the one kept


def test_a_full_store_takes_room_from_the_owner_pushing_it_over_first(backend):
    from datastore import Limits

    limits = Limits(max_bytes=100, max_total_bytes=500, owner_share=0.5)
    clock = iter(range(1, 10_000)).__next__
    store = backend(limits, lambda: float(clock()))
    a = [store.put(f"a-{i}.csv", _blob(i), owner="a") for i in range(2)]
    b = [store.put(f"b-{i}.csv", _blob(10 + i), owner="b") for i in range(2)]
    c = store.put("c-0.csv", _blob(20), owner="c")  # the store is full: 500 of 500 bytes
    new = store.put("b-2.csv", _blob(12), owner="b")  # b pushes it over: b's oldest goes
    assert store.get(b[0]) is None and store.get(b[1]) is not None
    assert all(store.get(x) is not None for x in [*a, c, new])


# --- 8. an uploaded trace travels with the share link ---------------------------------------

TRACE_CSV = "arrival_s,input_tokens,output_tokens\n" + "".join(
    f"{i * 37.5:.1f},{512 + (i * 97) % 2048},{64 + (i * 31) % 512}\n" for i in range(2000)
)


def _scale_to_zero(**query) -> AppTest:
    return _page("pages/5_Scale_to_zero.py", **query)


def _cost(at) -> str:
    return next(m.value for m in at.metric if m.label == "Total per day")


def test_a_trace_in_the_link_is_replayed_from_the_store(flaky):
    profile = _scale_to_zero(scenario="default")
    trace_id = flaky.put("our-day.csv", TRACE_CSV.encode())
    at = _scale_to_zero(scenario="default", trace=trace_id)
    assert any("trace our" in c.value for c in at.caption), [c.value for c in at.caption]
    assert _cost(at) != _cost(profile)  # the trace's figures, not the profile's
    assert at.query_params.get("trace") == trace_id
    assert not any("session only" in w.value for w in at.warning)


def test_a_trace_the_store_cannot_open_just_now_stays_in_the_link_and_is_said(flaky):
    trace_id = flaky.put("our-day.csv", TRACE_CSV.encode())
    flaky.fail_get = True
    at = _scale_to_zero(scenario="default", trace=trace_id)
    warnings = " ".join(w.value for w in at.warning)
    assert "could not be opened just now" in warnings and "not the link author's" in warnings
    assert "db.internal" not in warnings
    assert at.query_params.get("trace") == trace_id  # a reload or a re-share keeps it
    flaky.fail_get = False
    at.session_state["_whatif_store_backoff"] = None  # this session's pause is over
    at.run()  # the next run tries again
    assert not at.exception
    assert any("trace our" in c.value for c in at.caption)


@pytest.mark.parametrize("bad", ["0" * 64, "not-an-id", "ex-azure"])
def test_a_trace_id_that_is_not_stored_is_said_and_dropped(flaky, bad):
    at = _scale_to_zero(scenario="default", trace=bad)
    warnings = " ".join(w.value for w in at.warning)
    assert "traffic profile instead" in warnings, warnings
    assert not at.query_params.get("trace")
    assert any("traffic: " in c.value for c in at.caption)


def test_a_trace_that_cannot_be_stored_says_the_link_does_not_carry_it(flaky):
    from model.readers.traces import read_trace
    from ui import economics_view

    flaky.fail_put = True
    at = _scale_to_zero(scenario="default")
    # the uploader's callback, as Streamlit runs it, with the session's state
    tr = read_trace("our-day.csv", TRACE_CSV.encode())
    at.session_state[economics_view.TRACE] = tr
    at.session_state[economics_view.TRACE_ID] = None
    at.run()
    warnings = " ".join(w.value for w in at.warning)
    assert "in this session only" in warnings and "does not carry it" in warnings
    assert not at.query_params.get("trace")


# --- 11. pre-warm's p99 wait over the whole day's requests -----------------------------------


@pytest.mark.parametrize("name", ["default", "seed-70b-fp8-cold-start", "llama-8b-1xh100"])
def test_p99_wait_is_taken_over_the_whole_days_requests(name):
    """Under 1 % of the day's requests delayed means a p99 wait of 0 for every strategy;
    pre-warm (fewer delayed requests than scale to zero) never shows a larger p99 (it showed
    115 s against scale to zero's 0 s, its percentile taken over the night's requests only)."""
    from model.economics import economics_lens

    s = resolve([("scenario", name)], strict=True)[0]
    eco = economics_lens(s)["figures"]
    day = eco["requests_per_day"]
    for key in ("scale_to_zero", "scale_to_zero_optimised", "prewarm", "sleep"):
        if eco[key]["delayed_requests_per_day"] < 0.01 * day:
            assert eco[key]["p99_wait_s"] == 0.0, (key, eco[key])
    if (
        eco["prewarm"]["delayed_requests_per_day"]
        <= eco["scale_to_zero"]["delayed_requests_per_day"]
    ):
        assert eco["prewarm"]["p99_wait_s"] <= eco["scale_to_zero"]["p99_wait_s"] + 1e-9


# --- 17. the README and the defaults ---------------------------------------------------------


def test_the_app_listens_on_this_machine_only_by_default():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "localhost"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--server.address 0.0.0.0" in readme


def test_the_readmes_tour_table_is_one_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A short tour", 1)[1].split("\n## ", 1)[0]
    lines = tour.strip().splitlines()
    table = lines[: next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    pages = ["Home", "Roofline", "Launch overhead", "Cold start", "Scale to zero", "Compare"]
    for page in [*pages, "Measurements", "Serving"]:
        assert any(f"**{page}**" in row for row in table), page


# --- 16. CLI details -------------------------------------------------------------------------


def test_parse_log_says_at_least_for_gpus_counted_from_the_ranks_it_shows(tmp_path):
    import subprocess
    import sys

    lines = [
        f"(VllmWorker rank={r} pid={100 + r}) INFO 06-19 23:05:0{r} [default_loader.py:262] "
        f"Loading weights took 3.{r} seconds"
        for r in range(7)
    ]
    path = tmp_path / "excerpt.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "model", "parse-log", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "at least 7" in done.stdout


STREAM = (
    "{prefix}INFO 06-19 23:05:{sec} [file_streamer.py:179] [RunAI Streamer] Overall time to "
    "stream {size} of all files to cpu: {s}s, {rate}/s"
)


def test_two_unrelated_streamer_lines_are_noted_and_one_models_shards_are_not(tmp_path):
    from model.readers.vllm_log import parse_log

    unrelated = [
        STREAM.format(prefix="", sec="01", size="942.3 MiB", s="1.2", rate="785.3 MiB"),
        STREAM.format(prefix="", sec="09", size="14.9 GiB", s="6.1", rate="2.4 GiB"),
    ]
    ds = parse_log("\n".join(unrelated), "two.log")
    notes = " ".join(ds.extra.get("notes", []))
    assert "2 Run:ai streamer lines" in notes and "keep the longest (line 2: 14.9 GiB" in notes
    assert "line 1: 0.92 GiB in 1.2 s" in notes
    assert ds.figures["stream_s"] == pytest.approx(6.1)

    shards = [
        STREAM.format(
            prefix=f"(VllmWorker rank={r} pid={10 + r}) ",
            sec=f"0{r}",
            size="3.7 GiB",
            s=f"2.{r}",
            rate="1.7 GiB",
        )
        for r in range(4)
    ]
    ds = parse_log("\n".join(shards), "tp4.log")
    assert not any("streamer" in n for n in ds.extra.get("notes", []))
    assert ds.figures["stream_s"] == pytest.approx(2.3)


def test_eval_on_a_model_that_does_not_fit_says_so_first():
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "model",
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


# --- 12. the SLA penalty: where the recommendation turns, and what "optimised" assumes --------


@pytest.mark.parametrize("name", ["default", "seed-70b-fp8-cold-start", "llama-8b-1xh100"])
def test_the_penalty_flips_are_where_the_recommendation_changes(name):
    from model.economics import economics

    s = resolve([("scenario", name)], strict=True)[0]
    eco = economics(s)
    for side, factor in (("up", 1.05), ("down", 0.95)):
        at = eco[f"penalty_flip_{side}_usd"]
        if at is None:
            continue
        if at > 1e-3:
            before = resolve(
                [("scenario", name), ("sla_penalty_usd", f"{at / factor:.6g}")], strict=True
            )[0]
            assert economics(before)["recommended"] == eco["recommended"]
        after = resolve(
            [("scenario", name), ("sla_penalty_usd", f"{at * factor:.6g}")], strict=True
        )[0]
        assert economics(after)["recommended"] == eco[f"penalty_flip_{side}_to"]


def test_the_scale_to_zero_page_names_the_flip_and_the_optimisations_assumed():
    at = AppTest.from_file(str(ROOT / "pages/5_Scale_to_zero.py"), default_timeout=120)
    at.query_params["scenario"] = "default"
    at.session_state["x_economics_why"] = True  # the explanations, folded by default
    at.run()
    assert not at.exception
    text = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "The recommendation (scale to zero, optimised start) holds for a penalty" in text
    assert "above $1.20 warm floor wins" in text
    assert "a warm torch.compile cache" in text and "Run:ai Model Streamer" in text


# --- 14. words and numbers -------------------------------------------------------------------


def test_money_deltas_carry_their_dollar_sign():
    at = _page("pages/5_Scale_to_zero.py", scenario="default")
    total = next(m for m in at.metric if m.label == "Total per day")
    assert "$" in total.proto.delta and "vs warm" in total.proto.delta, total.proto.delta


def test_the_optimised_delta_says_what_it_is_against():
    at = _page("pages/4_Cold_start.py", scenario="default")
    opt = next(m for m in at.metric if m.label == "Optimised")
    assert opt.proto.delta.endswith("vs this start"), opt.proto.delta


def test_the_seed_table_calls_its_gpu_time_so():
    at = AppTest.from_file(str(ROOT / "pages/1_Roofline.py"), default_timeout=120)
    at.query_params["scenario"] = "seed-3b-4090"
    at.session_state["t_roofline"] = "BF16/INT4 × CUDA graphs"
    at.run()
    # the first table that is not the accuracy panel's (its index is the figure category)
    frame = next(df.value for df in at.dataframe if df.value.index.name != "figures")
    columns = list(frame.columns)
    assert "GPU time [ms]" in columns and "HBM reads [ms]" not in columns


def test_the_seed_table_has_the_scenarios_own_dtype():
    from model.evaluate import seed_table

    fp8 = [r["configuration"] for r in seed_table(resolve([("scenario", "default")])[0])]
    assert fp8[-2:] == ["FP8 (scenario's dtype), no graphs", "FP8 (scenario's dtype), CUDA graphs"]
    seed = [r["configuration"] for r in seed_table(resolve([("scenario", "seed-3b-4090")])[0])]
    assert seed == ["BF16, no graphs", "BF16, CUDA graphs", "INT4, no graphs", "INT4, CUDA graphs"]


def test_a_figure_that_does_not_move_is_said_to_stay():
    from model.knobs import _moves, knobs

    assert _moves(8.3601e-3, 8.3649e-3) == "stay at 8.36 ms"
    assert _moves(8.36e-3, 5.1e-3) == "go from 8.36 ms to 5.1 ms"
    from model.presets import scenario_names

    for name in scenario_names():
        for row in knobs(resolve([("scenario", name)])[0]):
            text = row["here"]
            for a, b in re.findall(r"from ([\d.]+ ms) to ([\d.]+ ms)", text):
                assert a != b, text


def test_the_landing_page_is_listed_as_home():
    import tomllib

    from ui.lenses import PAGES

    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())
    assert config["client"]["showSidebarNavigation"] is False
    assert (PAGES[0].file, PAGES[0].label) == ("app.py", "Home")
    assert sorted(p.file for p in PAGES[1:]) == sorted(
        f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py")
    )


def test_a_request_rate_fits_its_metric_at_1440_px():
    from ui.lenses.serving import _rate

    assert _rate(0.977) == "0.98 req/s"  # was "0.977 req/s", cut to "0.977 r…"
    assert _rate(10.93) == "10.9 req/s"
    assert _rate(123.4) == "123 req/s"
    assert _rate(0.0123) == "0.01 req/s"
    assert all(len(_rate(x)) <= 10 for x in (0.001, 0.5, 0.977, 3.14159, 99.96, 512.0))


def test_calibrated_values_carry_their_units():
    from ui.scenario_caption import calibrated_values

    s = resolve(
        [("scenario", "seed-3b-4090"), ("host_ms", "1.424"), ("bw_efficiency", "0.8")]
        + [("calibrated", "host_ms,bw_efficiency")]
    )[0]
    assert calibrated_values(s) == "host work = 1.424 ms, bandwidth efficiency = 0.8"


@pytest.mark.parametrize("path", ["app.py", "pages/7_Compare.py"])
def test_a_tab_on_a_page_without_tabs_leaves_the_link(path):
    at = _page(path, scenario="seed-3b-4090", tab="HBM per GPU")
    assert "tab" not in at.query_params


def test_every_page_with_tabs_uses_lazy_tabs_and_the_others_are_listed():
    from ui.lenses import PAGES

    for page in PAGES:
        has_tabs = "page_tabs(" in (ROOT / page.file).read_text()
        assert has_tabs == page.has_tabs, page.file


def test_an_unchanged_fit_error_reads_unchanged():
    from ui.measure_view import _error_change

    assert _error_change({"before": 12.34, "after": 12.33}) == {
        "delta": "unchanged",
        "delta_color": "off",
        "delta_arrow": "off",
    }
    assert _error_change({"before": 12.0, "after": 8.8})["delta"] == "-3.2 percentage points"


def test_the_trace_summary_shows_numbers_as_read():
    from ui.economics_view import _shown

    assert _shown(5.53042198907183) == "5.53"
    assert _shown(14.0) == "14"
    assert _shown(1287480000000.0) == "1,287,480,000,000"
    assert _shown(None) == "–"


# --- 10. loading an example sets its scenario; mixed set-ups are said at the top --------------


def test_loading_an_example_sets_the_scenario_it_measured(tmp_path, monkeypatch):
    import datastore

    monkeypatch.delenv(datastore.ENV_URL, raising=False)
    monkeypatch.setenv(datastore.ENV_DIR, str(tmp_path / "store"))
    at = _page("pages/6_Measurements.py")
    [b for b in at.button if b.key == "w_meas_ex_gptoss-h100x8-tpot"][0].click()
    at.run()
    assert not at.exception
    assert at.query_params["model"] in ("gpt-oss-120b", ["gpt-oss-120b"])
    assert at.query_params["gpus"] in ("8", ["8"])
    shown = " ".join(w.value for w in [*at.info, *at.warning, *at.caption]).replace("\\", "")
    assert "The scenario is set to what this example measured" in shown
    assert not any("may not match the scenario" in w.value for w in at.warning)
    errors = [m.value for m in at.metric if m.label == "Error, as configured"]
    assert errors and float(errors[0].split()[0]) < 100  # it was 128.8 % on the wrong scenario


def test_data_sets_of_another_set_up_are_named_at_the_top():
    at = _page("pages/6_Measurements.py", data="ex-gptoss-h100x8-tpot")  # a link: scenario kept
    first = next(w.value for w in at.warning if "may not match the scenario" in w.value)
    assert "gptoss" in first.replace("\\", "").lower() or "1 of the 1" in first
