"""AppTest: every page with every named scenario, the URL binding, and bad links (SPEC 5–7)."""

from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from model.engines import normalise
from model.overrides import resolve
from model.presets import scenario_names
from tests import pages
from tests.pages import page_test

ROOT = Path(__file__).resolve().parent.parent
#: the engines as links name them (id@version)
IDEAL, VLLM = normalise("ideal"), normalise("vllm")
PAGES = ["app.py", "pages/1_Roofline.py", "pages/3_Launch_overhead.py", "pages/4_Cold_start.py"]
#: a metric every run of the page must show (the page's headline)
HEADLINE = {
    "app.py": "Aggregate tok/s",
    "pages/1_Roofline.py": "Aggregate tok/s",
    "pages/3_Launch_overhead.py": "Aggregate tok/s",
    "pages/4_Cold_start.py": "Time to ready",
}


#: the tab of a lazy-tab page that shows a given part (only the open tab is built)
TABS = {
    "roofline:hbm": ("t_roofline", "HBM per GPU"),
    "roofline:table": ("t_roofline", "BF16/INT4 × CUDA graphs"),
    "launch:share": ("t_launch", "Quantised models gain more"),
    "launch:buckets": ("t_launch", "Capture buckets"),
    "launch:knobs": ("t_launch", "The ten knobs"),
    "launch:downloads": ("t_launch", "Breakdown and downloads"),
}


def open_page(page, tab: str | None = None, **query):
    state = dict([TABS[tab]]) if tab else None
    return pages.open_page(page, state=state, timeout=60, **query)


def metrics(at):
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("name", scenario_names())
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_every_named_scenario(page, name):
    at = open_page(page, scenario=name)
    shown = metrics(at)
    assert shown[HEADLINE[page]]
    if "Bound" in shown or page != "pages/4_Cold_start.py":
        assert shown["Bound"] in {"memory", "compute", "communication", "overhead"}
    assert not at.warning


def test_roofline_shows_the_seed_figures():
    # seed "The roofline flips": BF16 eager 6 + 2 = 8 ms → 125 tok/s
    shown = metrics(open_page("pages/1_Roofline.py", scenario="seed-3b-4090"))
    assert shown["Step time"] == "8.000 ms"
    assert shown["Aggregate tok/s"] == "125"
    assert shown["Bound"] == "memory"
    shown = metrics(
        open_page(
            "pages/1_Roofline.py",
            scenario="seed-3b-4090",
            weights_dtype="int4",
            cuda_graphs="full_decode_only",
        )
    )
    assert shown["Step time"] == "2.005 ms"


def test_weights_that_do_not_fit_warn_but_still_show_figures():
    at = open_page("pages/1_Roofline.py", scenario="seed-70b-bf16-1xh100")
    assert any("do not fit" in e.value for e in at.error)
    assert metrics(at)["Aggregate tok/s"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"batch": "-3"}, ["batch"]),
        ({"batch": "abc", "weights_dtype": "fp3"}, ["batch", "weights\\_dtype"]),
        ({"batch": "1e309"}, ["batch"]),
        ({"batch": "NaN"}, ["batch"]),
        ({"hardware": "nope"}, ["hardware", "h100\\-sxm"]),
        ({"model.layers": "0"}, ["model\\.layers"]),
        ({"what": "ever"}, ["unknown key"]),
        ({"scenario": "nope"}, ["scenario"]),
        ({"x": "a" * 10_000}, ["4096"]),
        ({"capture_sizes": "8,4,4"}, ["capture\\_sizes"]),
        ({"capture_sizes": "0,8"}, ["capture\\_sizes"]),
        ({"capture_sizes": ",".join(str(i) for i in range(1, 514))}, ["capture\\_sizes"]),
        ({"launch_us": "0"}, ["launch\\_us"]),
        ({"launch_us": "-2"}, ["launch\\_us"]),
        ({"launch_us": "10000000"}, ["launch\\_us"]),
        ({"cuda_graphs": "maybe"}, ["cuda\\_graphs"]),
        ({"kernels": "0"}, ["kernels"]),
        ({"weights_gb": "-1"}, ["weights\\_gb"]),
        ({"concurrency": "0"}, ["concurrency"]),
        ({"concurrency": "99999"}, ["concurrency"]),
        ({"loader": "turbo", "storage": "floppy"}, ["loader", "storage"]),
        ({"process_init_s": "-1"}, ["process\\_init\\_s"]),
        ({"sleep_level": "3"}, ["sleep\\_level"]),
    ],
)
@pytest.mark.parametrize("page", PAGES)
def test_bad_links_warn_and_the_page_keeps_working(page, query, named):
    at = open_page(page, **query)
    text = " ".join(w.value for w in at.warning)
    for word in named:
        assert word in text, text
    assert metrics(at)[HEADLINE[page]]


def test_good_keys_survive_beside_bad_ones():
    at = open_page(
        "pages/1_Roofline.py", scenario="seed-3b-4090", batch="abc", weights_dtype="int4"
    )
    assert metrics(at)["Step time"] == "3.500 ms"  # INT4 eager, batch left at the preset's 1
    assert any("batch" in w.value for w in at.warning)


def test_changing_the_batch_writes_the_url_and_the_figures():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090")
    before = metrics(at)["Aggregate tok/s"]
    at.number_input(key="w_batch").set_value(8).run()
    assert not at.exception
    assert at.query_params["batch"] in ("8", ["8"])
    assert at.query_params["scenario"] in ("seed-3b-4090", ["seed-3b-4090"])
    assert metrics(at)["Aggregate tok/s"] != before


def test_picking_hardware_drops_that_kinds_overrides():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090")
    at.selectbox(key="w_hardware").set_value("h100-sxm").run()
    assert at.query_params["hardware"] in ("h100-sxm", ["h100-sxm"])
    assert "hardware.hbm_bandwidth_tb_s" not in at.query_params


def test_picking_a_scenario_resets_the_overrides():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090", batch="4")
    at.selectbox(key="w_scenario").set_value("llama-8b-1xh100").run()
    # the link always names the engine and its version (the scenario's vLLM profile)
    assert {k: _param(at, k) for k in at.query_params} == {
        "scenario": "llama-8b-1xh100",
        "engine": VLLM,
    }


def link_parts(link: str) -> tuple[str, list[tuple[str, str]]]:
    """A share link's path and its decoded key=value pairs, in order."""
    parts = urlsplit(link)
    return parts.path, parse_qsl(parts.query, keep_blank_values=True)


def test_share_link_reproduces_the_view():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090", weights_dtype="int4")
    path, pairs = link_parts(at.sidebar.code[0].value)
    assert path.endswith("/Roofline")
    # the seed pins the ideal engine; the link names it with its version
    assert pairs == [("scenario", "seed-3b-4090"), ("engine", IDEAL), ("weights_dtype", "int4")]


def test_an_empty_capture_sizes_link_means_the_engines_sizes():
    at = open_page("pages/3_Launch_overhead.py", capture_sizes="")
    assert not at.warning
    _, pairs = link_parts(at.sidebar.code[0].value)
    assert "capture_sizes" not in dict(pairs)  # left to the engine
    assert metrics(at)["Graphs captured"] == metrics(open_page(LAUNCH))["Graphs captured"]


LAUNCH = "pages/3_Launch_overhead.py"


def test_launch_page_shows_the_70b_figures():
    # seed "The chef who calls out every order": 800 launches, 4.0 ms, 250 tok/s
    shown = metrics(open_page(LAUNCH, scenario="seed-70b-eager-4xh100"))
    assert shown["Kernels / step"] == "800"
    assert shown["Eager launch time"] == "4.000 ms"
    assert shown["Launch ceiling"] == "250 tok/s"
    assert shown["Graphs captured"] == "0"


@pytest.mark.parametrize(
    ("name", "eager", "graph", "speedup"),
    [
        ("seed-qa-awq-5.5gib", "8.056 ms", "5.911 ms", "1.36×"),
        ("seed-qa-bf16-14.2gib", "17.40 ms", "15.25 ms", "1.14×"),  # the post: 17.4 and 15.3
    ],
)
def test_launch_page_shows_the_qa_rows(name, eager, graph, speedup):
    at = open_page(LAUNCH, scenario=name)
    shown = metrics(at)
    assert (shown["Step, eager"], shown["Step, graph"], shown["Graph speed-up"]) == (
        eager,
        graph,
        speedup,
    )
    assert not at.warning and not at.error


def test_launch_page_padding_and_eager_fallback():
    at = open_page(LAUNCH, batch="33", capture_sizes="1,2,4,8,16,32,64")
    shown = metrics(at)
    assert shown["Padded batch"] == "64"
    at = open_page(LAUNCH, batch="100", capture_sizes="1,2,4,8,16,32,64")
    assert any("above the largest captured size" in w.value for w in at.warning)
    assert metrics(at)["Graph speed-up"] == "1.00×"


def test_bucket_editor_applies_good_sizes_and_names_bad_ones():
    at = open_page(LAUNCH, "launch:buckets", batch="33")
    at.text_area(key="w_capture_sizes").set_value("1, 2, 4, 8, 16, 32, 64").run()
    assert not at.exception
    assert at.query_params["capture_sizes"] in ("1,2,4,8,16,32,64", ["1,2,4,8,16,32,64"])
    assert metrics(at)["Padded batch"] == "64"
    at.text_area(key="w_capture_sizes").set_value("64, 32, x").run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "capture\\_sizes" in errors and "strictly increasing" in errors
    # the scenario keeps its last good sizes and the page keeps working
    assert at.query_params["capture_sizes"] in ("1,2,4,8,16,32,64", ["1,2,4,8,16,32,64"])
    assert metrics(at)["Padded batch"] == "64"


def test_bucket_preset_button():
    at = open_page(LAUNCH, "launch:buckets")
    at.button[[b.label for b in at.button].index("bounded (1 to 64)")].click().run()
    assert at.query_params["capture_sizes"] in ("1,2,4,8,16,24,32,64", ["1,2,4,8,16,24,32,64"])
    assert metrics(at)["Graphs captured"] == "16"


def test_weights_size_override_widget():
    at = open_page(LAUNCH, scenario="seed-qa-awq-5.5gib")
    # the "Overheads and efficiencies" panel is built only while open
    assert not [w for w in at.sidebar.number_input if w.key == "w_weights_gb"]
    at.session_state["x_overheads"] = True
    at.run()
    assert at.number_input(key="w_weights_gb").value == 5.905580032
    at.number_input(key="w_weights_gb").set_value(None).run()
    assert not at.exception
    assert at.query_params["weights_gb"] in ("auto", ["auto"])
    # params × 0.5 for INT4, less the input embedding decode does not read (152,064 × 3,584
    # = 0.545 B): 7.07 B × 0.5 = 3.54 GB; the AWQ checkpoint keeps its output head (another
    # 0.545 B) in BF16, 1.5 B more each: + 0.82 GB → 4.36 ms at 1 TB/s, + 2.15 ms of launches
    assert metrics(at)["Step, eager"] == "6.505 ms"


COLD = "pages/4_Cold_start.py"


def test_cold_start_page_shows_the_seed_table():
    shown = metrics(open_page(COLD, scenario="seed-70b-fp8-cold-start"))
    assert shown["Time to ready"] == "92.3 s"  # seed: ~93 s
    assert shown["Floor (items 1–3)"] == "14.0 s"
    assert shown["4 Weights → HBM"] == "23.7 s"  # seed: ~25 s
    assert shown["5 Graphs + JIT"] == "54.6 s"  # seed: ~54 s
    assert shown["Optimised"] == "27.8 s"  # seed: ~28 s
    shown = metrics(open_page(COLD, scenario="seed-70b-fp8-cold-start-optimised"))
    assert shown["Time to ready"] == "27.8 s"
    assert shown["4 Weights → HBM"] == "5.0 s"


def test_cold_start_controls_write_the_url():
    at = open_page(COLD, scenario="seed-70b-fp8-cold-start")
    at.selectbox(key="w_loader").set_value("runai_streamer").run()
    assert not at.exception
    assert at.query_params["loader"] in ("runai_streamer", ["runai_streamer"])
    assert metrics(at)["4 Weights → HBM"] == "5.0 s"
    at.toggle(key="w_compile_cache").set_value(True).run()
    assert metrics(at)["5 Graphs + JIT"] == "35.6 s"  # 5 s cached + 30.6 s capture
    at.selectbox(key="w_sleep_level").set_value(1).run()
    assert metrics(at)["Wake from sleep level 1"] == "0.35 s"


def test_cold_start_traps_show_where_they_apply():
    at = open_page(COLD, scenario="seed-70b-fp8-cold-start", storage="page_cache")
    assert any("warm-cache trap" in w.value for w in at.warning)
    at = open_page(COLD, scenario="seed-70b-fp8-cold-start", loader="pickle")
    assert any("executes arbitrary code" in e.value for e in at.error)
    at = open_page(COLD, scenario="seed-70b-fp8-cold-start")
    assert any("FP8 halves item 4 but not item 5" in i.value for i in at.info)


@pytest.mark.parametrize(
    "query",
    [
        {"bw_efficiency": "0.04", "flops_efficiency": "0.01"},
        {"launch_us": "0.004", "weights_gb": "0.001"},
        {"hardware.hbm_bandwidth_tb_s": "0.001", "hardware.h2d_gb_s": "0.001"},
        {"storage_gb_s": "0.001", "stream_gb_s": "0.005"},
    ],
)
@pytest.mark.parametrize("page", PAGES)
def test_valid_values_below_a_widgets_usual_minimum_are_kept(page, query):
    # the scenario accepts any positive value; no widget may crash on it or change it
    at = open_page(page, **query)
    assert not at.warning
    for key, value in query.items():
        assert at.query_params[key] in (value, [value])


@pytest.mark.parametrize("page", PAGES)
def test_weights_that_do_not_fit_are_named_on_every_page(page):
    at = open_page(page, model="llama-3.1-405b", weights_dtype="bf16", gpus="1")
    assert any("do not fit" in e.value for e in at.error)
    assert metrics(at)[HEADLINE[page]]


ROOFLINE = "pages/1_Roofline.py"


def after_reconnect(page, change, tab=None, **query):
    """What a server restart under an open page does: the browser, which showed ``page`` for
    ``query``, reconnects to a new, empty session, and its first interaction arrives there with
    the values of all its widgets, ``change`` (a function of the old AppTest) among them.

    AppTest has no public way to send widget values into a session's first run, hence
    ``_run`` and ``_tree``.
    """
    old = open_page(page, tab, **query)
    change(old)
    states = old._tree.get_widget_states()  # noqa: SLF001
    at = page_test(page, timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    if tab:  # the browser shows the same tab after the restart
        at.session_state[TABS[tab][0]] = TABS[tab][1]
    at._run(states)  # noqa: SLF001
    assert not at.exception, [e.value for e in at.exception]
    return at


def _param(at, key):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


@pytest.mark.parametrize(
    ("page", "change", "key", "value"),
    [
        (ROOFLINE, lambda at: at.number_input(key="w_batch").set_value(8), "batch", "8"),
        (
            ROOFLINE,
            lambda at: at.selectbox(key="w_weights_dtype").set_value("int4"),
            "weights_dtype",
            "int4",
        ),
        (
            COLD,
            lambda at: at.toggle(key="w_compile_cache").set_value(True),
            "compile_cache",
            "true",
        ),
        (
            LAUNCH,
            lambda at: at.text_area(key="w_capture_sizes").set_value("1, 2, 4"),
            "capture_sizes",
            "1,2,4",
        ),
        (
            LAUNCH,
            lambda at: at.button[[b.label for b in at.button].index("powers of 2")].click(),
            "capture_sizes",
            "1,2,4,8,16,32,64,128,256,512",
        ),
    ],
    ids=["sidebar-number", "sidebar-select", "cold-toggle", "bucket-text", "bucket-button"],
)
def test_the_first_change_after_a_reconnect_is_kept(page, change, key, value):
    seed = "seed-70b-fp8-cold-start" if page == COLD else "seed-3b-4090"
    tab = "launch:buckets" if page == LAUNCH else None
    before = metrics(open_page(page, tab, scenario=seed))
    at = after_reconnect(page, change, tab, scenario=seed)
    assert _param(at, "scenario") == seed
    assert _param(at, key) == value
    assert metrics(at) != before


def test_a_reconnect_changes_nothing_else():
    """Every other widget value the browser sends back equals the link's (exact floats kept),
    and a picked scenario replaces the overrides as it does without a reconnect."""
    query = {
        "scenario": "seed-3b-4090",
        "launch_us": "5.12345",
        "hardware.hbm_bandwidth_tb_s": "1.00812",
        "bw_efficiency": "0.873",
    }
    at = after_reconnect(ROOFLINE, lambda at: at.number_input(key="w_batch").set_value(2), **query)
    assert {k: _param(at, k) for k in at.query_params} == query | {"batch": "2", "engine": IDEAL}
    at = after_reconnect(
        ROOFLINE, lambda at: at.selectbox(key="w_scenario").set_value("llama-8b-1xh100"), **query
    )
    assert {k: _param(at, k) for k in at.query_params} == {
        "scenario": "llama-8b-1xh100",
        "engine": VLLM,
    }


@pytest.mark.parametrize(
    "query",
    [
        {"scenario": "seed-70b-fp8-cold-start"},
        {"scenario": "seed-70b-fp8-cold-start", "weights_dtype": "bf16"},
        {"scenario": "seed-70b-fp8-cold-start", "weights_dtype": "int4", "loader": "pickle"},
        {"scenario": "seed-qa-awq-5.5gib"},
        {},
    ],
)
def test_the_fp8_note_quotes_the_pages_own_figures(query):
    at = open_page(COLD, **query)
    shown = metrics(at)
    note = next(i.value for i in at.info if "but not item 5" in i.value)
    assert "(this scenario)" in note
    for label in ("Time to ready", "4 Weights → HBM", "5 Graphs + JIT"):
        assert shown[label] in note, (label, shown[label], note)


def test_bf16_doubles_the_seeds_item_4_on_the_page():
    fp8 = metrics(open_page(COLD, scenario="seed-70b-fp8-cold-start"))
    at = open_page(COLD, scenario="seed-70b-fp8-cold-start", weights_dtype="bf16")
    bf16 = metrics(at)
    assert (fp8["4 Weights → HBM"], bf16["4 Weights → HBM"]) == ("23.7 s", "47.4 s")
    assert bf16["5 Graphs + JIT"] == fp8["5 Graphs + JIT"]
    assert any("140.0 GB of weights" in c.value for c in at.caption)
    assert not [c.value for c in at.caption if "by Weights size [GB]" in c.value]
    # the share link carries only the dtype: the seed's 70 B parameters are the base's
    path, pairs = link_parts(at.sidebar.code[0].value)
    assert path.endswith("/Cold_start")
    assert pairs == [
        ("scenario", "seed-70b-fp8-cold-start"),
        ("engine", IDEAL),
        ("weights_dtype", "bf16"),
    ]
    # the caption says the model is not the preset's (70 B, every parameter at the dtype)
    assert any(
        "changed from the preset" in c.value
        and "parameters \\[B\\]\\, quantised weights" in c.value
        for c in at.caption
    )


@pytest.mark.parametrize(
    ("page", "near"),
    [
        (COLD, "item 4"),
        ("pages/1_Roofline.py", "HBM bar"),
        (LAUNCH, "this model"),
    ],
)
def test_a_pinned_weights_size_is_named_beside_its_figures(page, near):
    tab = {LAUNCH: "launch:share", "pages/1_Roofline.py": "roofline:hbm"}.get(page)
    at = open_page(page, tab, scenario="seed-qa-awq-5.5gib")
    notes = [c.value for c in at.main.caption if "by Weights size [GB]" in c.value]
    assert len(notes) == 1 and near in notes[0] and "5.906 GB" in notes[0], notes
    # the size INT4 gives: 7.62 B × 0.5 B, and 1.5 B more for the 2 × 0.545 B embedding and
    # head parameters the checkpoint keeps in BF16
    assert "INT4 (5.445 GB)" in notes[0]
    at = open_page(page, tab, scenario="seed-qa-awq-5.5gib", weights_gb="auto")
    assert not [c.value for c in at.main.caption if "by Weights size [GB]" in c.value]


@pytest.mark.parametrize(
    ("page", "key"),
    [
        ("pages/1_Roofline.py", "x_formulas_roofline"),
        (LAUNCH, "x_formulas_launch"),
        (COLD, "x_formulas_cold"),
    ],
)
def test_formulas_are_built_only_when_their_panel_is_open(page, key):
    closed = open_page(page)
    assert not closed.latex
    at = page_test(page, timeout=60)
    at.session_state[key] = True
    at.run()
    assert not at.exception and len(at.latex) >= 3


def _assumption(at) -> str:
    return next(c.value for c in at.caption if "profile" in c.value or "upper bounds" in c.value)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_names_the_engine_and_switches_to_ideal_in_one_click(page):
    at = open_page(page, scenario="llama-8b-1xh100")
    line = _assumption(at)
    assert "vLLM V1 engine" in line and "one click away" in line
    if page != COLD:
        assert "80 % of HBM bandwidth" in line and "ms host work per step" in line
    before = metrics(at)
    at.button(key="w_engine_switch").click().run()
    assert not at.exception
    assert _param(at, "engine") == IDEAL
    assert _param(at, "scenario") == "llama-8b-1xh100"
    assert "datasheet upper bounds" in _assumption(at)
    assert metrics(at) != before
    # and back: from ideal physics the button offers the default engine
    at.button(key="w_engine_switch").click().run()
    assert _param(at, "engine") == VLLM


def test_the_assumption_line_lists_the_scenarios_own_knobs_and_the_sources():
    at = open_page("pages/1_Roofline.py", scenario="seed-3b-4090")
    line = _assumption(at)
    assert "datasheet upper bounds" in line and "100 % of HBM bandwidth" in line
    assert "set by this scenario instead" in line
    # the sources, escaped plain text: no link, no markup survives; built only while open
    assert "bw\\_efficiency" not in " ".join(m.value for m in at.markdown)
    at.session_state["p_sources"] = True
    at.run()
    sources = " ".join(m.value for m in at.markdown)
    assert "bw\\_efficiency" in sources and "T\\_HBM \\= bytes" in sources


def test_the_roofline_page_shows_one_request():
    at = open_page("pages/1_Roofline.py", scenario="llama-8b-1xh100", engine="ideal")
    shown = metrics(at)
    for label in ("TTFT", "Prefill", "Prefill bound", "TPOT", "End-to-end", "Requests/s"):
        assert shown[label], label
    assert shown["Prefill bound"] == "compute"
    home = metrics(open_page("app.py", scenario="llama-8b-1xh100", engine="ideal"))
    assert (home["TTFT"], home["TPOT"], home["End-to-end"]) == (
        shown["TTFT"],
        shown["TPOT"],
        shown["End-to-end"],
    )


@pytest.mark.parametrize(
    ("value", "pause_s"),
    [("", 0.025), ("0", 0.0), ("40", 0.04), ("-1", 0.025), ("500", 0.025), ("fast", 0.025)],
)
def test_the_headline_pause_reads_its_setting(monkeypatch, value, pause_s):
    from ui import page

    monkeypatch.setenv("WHATIF_HEADLINE_PAUSE_MS", value)
    assert page._headline_pause_s() == pause_s


@pytest.mark.parametrize("page", ["app.py", "pages/1_Roofline.py", "pages/2_Serving.py"])
def test_every_page_pauses_after_its_headline_and_before_the_sidebar(monkeypatch, page):
    # issue 22: the browser paints the headline metrics before the rest of the page arrives
    from ui import page as entry

    events = []
    draw = entry.sidebar
    monkeypatch.setattr(entry, "HEADLINE_PAUSE_S", 0.001)
    monkeypatch.setattr(entry, "_pause", lambda s: events.append(("pause", s)))
    monkeypatch.setattr(entry, "sidebar", lambda *a: (events.append(("sidebar",)), draw(*a)))
    at = open_page(page)
    assert not at.exception
    assert events[:2] == [("pause", 0.001), ("sidebar",)]
    assert at.sidebar.number_input(key="w_batch").value >= 1  # the sidebar is all there


@pytest.mark.parametrize(
    ("page", "key", "value", "field"),
    [
        ("pages/1_Roofline.py", "w_batch", 8, "batch"),
        ("app.py", "w_gpus", 2, "gpus"),
        ("pages/2_Serving.py", "w_context_tokens", 4096, "context_tokens"),
    ],
)
def test_a_widget_change_sends_the_link_after_the_headline(monkeypatch, page, key, value, field):
    # issue 22: the link a callback writes is sent after the headline figures (one browser
    # re-render less before them), and the run reads it as the URL meanwhile
    from streamlit.runtime.state.query_params import QueryParams

    from ui import page as entry

    at = open_page(page, scenario="seed-3b-4090")
    events = []
    send = QueryParams._send_query_param_msg

    def sent(self):
        events.append(("link", dict(self._query_params).get(field)))
        return send(self)

    monkeypatch.setattr(QueryParams, "_send_query_param_msg", sent)
    monkeypatch.setattr(entry, "HEADLINE_PAUSE_S", 0.001)
    monkeypatch.setattr(entry, "_pause", lambda s: events.append(("headline sent",)))
    at.number_input(key=key).set_value(value).run()
    assert not at.exception
    assert events == [("headline sent",), ("link", str(value))]
    assert at.query_params[field] in (str(value), [str(value)])
    assert at.query_params["scenario"] in ("seed-3b-4090", ["seed-3b-4090"])
    # the next run reads the URL again: nothing is held back
    at.run()
    assert at.query_params[field] in (str(value), [str(value)])
    assert "_whatif_url_pending" not in at.session_state


@pytest.mark.parametrize("page", ["pages/1_Roofline.py", "app.py"])
def test_the_first_change_on_a_bare_address_sends_one_link_after_the_headline(monkeypatch, page):
    # opened without a query (the session holds the scenario): the first change's callback
    # restores the session's link and writes the new one; only one link leaves, after the
    # headline
    from streamlit.runtime.state.query_params import QueryParams

    from ui import page as entry

    at = open_page(page)
    events = []
    send = QueryParams._send_query_param_msg

    def sent(self):
        events.append(("link", dict(self._query_params).get("batch")))
        return send(self)

    monkeypatch.setattr(QueryParams, "_send_query_param_msg", sent)
    monkeypatch.setattr(entry, "HEADLINE_PAUSE_S", 0.001)
    monkeypatch.setattr(entry, "_pause", lambda s: events.append(("headline sent",)))
    at.number_input(key="w_batch").set_value(3).run()
    assert not at.exception
    assert events == [("headline sent",), ("link", "3")]
    assert at.query_params["batch"] in ("3", ["3"])


def test_a_link_written_by_the_page_itself_is_sent_at_once():
    # not a callback: a tab named on a page without tabs is dropped from the URL in the run
    at = pages.open_page(
        "app.py", pairs=[("scenario", "seed-3b-4090"), ("tab", "HBM per GPU")], timeout=60
    )
    assert "tab" not in at.query_params
    assert at.query_params["scenario"] in ("seed-3b-4090", ["seed-3b-4090"])
    assert "_whatif_url_pending" not in at.session_state


@pytest.mark.parametrize(
    ("value", "got"),
    [("", 7.0), ("  ", 7.0), ("3", 3.0), ("0", 0.0), ("10", 10.0), ("11", 7.0), ("-1", 7.0),
     ("nan", 7.0), ("inf", 7.0), ("fast", 7.0)],
)  # fmt: skip
def test_a_numeric_setting_out_of_its_range_keeps_its_default(monkeypatch, value, got):
    from ui.settings import env_number

    monkeypatch.setenv("WHATIF_SOME_SETTING", value)
    assert env_number("WHATIF_SOME_SETTING", 7, 0, 10) == got


@pytest.mark.parametrize(
    ("page", "key", "widget"),
    [
        (COLD, "x_cold_items", "w_process_init_s"),
        ("pages/5_Scale_to_zero.py", "x_warm_floor", "w_warm_replicas"),
        ("pages/2_Serving.py", "x_serving_more", "w_burstiness"),
        ("pages/1_Roofline.py", "x_overheads", "w_launch_us"),
    ],
)
def test_collapsed_panels_are_built_when_opened_and_keep_the_scenarios_values(page, key, widget):
    at = open_page(page)
    assert widget not in [w.key for w in at.number_input]
    at.session_state[key] = True
    at.run()
    assert not at.exception
    shown = {w.key: w.value for w in at.number_input}
    assert widget in shown
    field = widget.removeprefix("w_")
    s, _ = resolve([])
    if field in ("launch_us", "process_init_s"):
        assert shown[widget] == getattr(s, field)


@pytest.mark.parametrize("path", ["app.py", "pages/7_Compare.py"])
def test_a_tab_on_a_page_without_tabs_leaves_the_link(path):
    at = pages.open_page(path, scenario="seed-3b-4090", tab="HBM per GPU")
    assert "tab" not in at.query_params
