"""The Serving page's words and views: a request rate fits its metric at 1440 px, and the
Pareto view has a line per TP × dtype group, a read-off and a filter."""

from __future__ import annotations

from pathlib import Path

from model.overrides import resolve
from tests.pages import open_page

ROOT = Path(__file__).resolve().parent.parent


def test_a_request_rate_fits_its_metric_at_1440_px():
    from ui.lenses.serving import _rate

    assert _rate(0.977) == "0.98 req/s"  # was "0.977 req/s", cut to "0.977 r…"
    assert _rate(10.93) == "10.9 req/s"
    assert _rate(123.4) == "123 req/s"
    assert _rate(0.0123) == "0.01 req/s"
    assert all(len(_rate(x)) <= 10 for x in (0.001, 0.5, 0.977, 3.14159, 99.96, 512.0))


def test_the_runs_seven_metrics_state_their_unit_in_the_label():
    """The run's row holds seven metrics since "Peak output tok/s" joined it: a rate there is
    shown bare, its label saying req/s, so "0.98" is not cut to "0.98 r…" at 1440 px."""
    from ui.lenses.serving import RUN, _rate_bare

    assert _rate_bare(0.977) == "0.98" and _rate_bare(123.4) == "123"
    assert all(len(_rate_bare(x)) <= 4 for x in (0.001, 0.5, 0.977, 3.14159, 99.96, 512.0))
    labels = {m.label: m for m in RUN.items}
    assert "Peak output tok/s" in labels
    for label in ("Served req/s", "Goodput req/s", "Peak output tok/s"):
        assert labels[label].show(0.977).replace(",", "").replace(".", "").isdigit(), label


def test_the_pareto_view_has_a_line_per_group_a_read_off_and_a_filter():
    """Issue 40, item 5."""
    from model import serving
    from ui import serving_charts
    from ui.lens import View  # noqa: F401 - the lens's own view type
    from ui.lenses.serving import SERVING, pareto_groups

    s = resolve([("seed", "5")])[0]
    points = serving.pareto(s)
    groups = pareto_groups(points)
    fig = serving_charts.pareto_figure(points, {"gpus": 4, "weights_dtype": "fp8",
                                                "max_num_seqs": 1024}, 25.0)  # fmt: skip
    lines = [d for d in fig.spec["data"] if d["name"] in groups]
    assert len(lines) == len(groups) and all("lines" in d["mode"] for d in lines)
    assert fig.spec["layout"]["xaxis"]["type"] == "log"
    assert fig.spec["layout"]["xaxis"]["dtick"] == 1
    best = serving.pareto_best(points, 25.0)
    fast = [p for p in points if p["tokens_per_s_per_user"] >= 25.0]
    assert best["tokens_per_s_per_gpu"] == max(p["tokens_per_s_per_gpu"] for p in fast)
    assert serving.pareto_best(points, 1e9) is None
    v = SERVING.view(s, serving.serving_lens(s))
    note = SERVING.texts["pareto_note"](v)
    assert "same for one replica or several" in note and f"{25.0:.3g} tok/s per user" in note
    at = open_page(
        "pages/2_Serving.py", pairs=[("tab", "Pareto front")], state={"w_pareto_show": [groups[0]]}
    )
    assert at.multiselect(key="w_pareto_show").value == [groups[0]]


def test_the_pareto_front_is_computed_only_when_its_tab_shows_it():
    """Issue 39's speed budget: the front is most of what a change of lengths or of a prefix
    key costs, so the lens leaves it out and the Pareto tab (or the report) asks for it; the
    view is kept per scenario without its rate and SLOs, which do not move it."""
    from model import serving
    from ui import serving_worker

    pairs = [("request_rate", "6"), ("num_requests", "200"), ("seed", "31")]
    s = resolve(pairs)[0]
    assert "pareto" not in serving.serving_lens(s)
    open_page("pages/2_Serving.py", pairs=pairs)  # the first tab: Latency against load
    assert serving_worker.view_cached("pareto", s) is None
    at = open_page("pages/2_Serving.py", pairs=[*pairs, ("tab", "Pareto front")])
    kept = serving_worker.view_cached("pareto", s)
    assert kept is not None and kept["points"] and not kept.get("reason")
    assert at.multiselect(key="w_pareto_show").options  # the groups came from the view
    # another rate or SLO finds the same front kept; another length does not
    moved = s.model_copy(update={"request_rate": 9.0, "ttft_slo_ms": 300.0})
    assert serving_worker.view_cached("pareto", moved) is kept
    longer = s.model_copy(update={"output_tokens": 300})
    assert serving_worker.view_cached("pareto", longer) is None
