"""The Measurements page's layout pieces (Streamlit): uploads, what was read, the fit report
with Apply and Reset, downloads and formulas. Every figure comes from :mod:`model.calibrate`;
user text (file names, what a file says) is shown escaped or in tables, never as markdown."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from model.calibrate import QUANTITY_UNITS, UNITS, Calibration
from model.readers.examples import examples
from model.readers.measurements import Dataset
from model.readers.registry import accepted
from model.readers.setup import linked_scenario, setup_mismatch
from model.scenario import Scenario
from ui import measure_data as data
from ui import state
from ui.measure_charts import is_startup
from ui.scenario_caption import calibrated_values, key_value
from ui.text import key_name, md_escape

KIND_NAMES = {
    "decode": "decode steps",
    "launch": "launch micro-benchmark",
    "cold_start": "cold-start items",
    "startup_log": "vLLM start-up log",
    "startup_bench": "vLLM start-up benchmark",
    "request": "request latency",
    "serving": "serving benchmark",
    "latency": "latency benchmark",
    "throughput": "throughput benchmark",
    "bandwidth": "capture kit: HBM bandwidth",
    "h2d": "capture kit: host-to-device",
}


def _error_change(err: dict) -> dict:
    """The fit's change of the median error as a metric delta: "-3.2 percentage points"
    (green: the error fell), or "unchanged" (never a signed zero drawn red)."""
    if err["after"] is None or err["before"] is None:
        return {}
    change = err["after"] - err["before"]
    if abs(change) < 0.05:
        return {"delta": "unchanged", "delta_color": "off", "delta_arrow": "off"}
    # a fall of the error is good: the sign stays (Streamlit reads it), colour inverted
    return {"delta": f"{change:+.1f} percentage points", "delta_color": "inverse"}


def headline(s: Scenario, sets: list[Dataset], cal: Calibration | None) -> None:
    c = st.columns(5)
    c[0].metric("Data sets", len(sets))
    c[1].metric("Points", 0 if cal is None else len(cal.points))
    if cal is not None:
        err = cal.to_json()["median_abs_error_pct"]
        c[2].metric(
            "Error, as configured",
            "–" if err["before"] is None else f"{err['before']:.1f} %",
            help="median over the points of |model − measured| / measured, with the "
            "scenario as it is",
        )
        c[3].metric(
            "Error, with the fit",
            "–" if err["after"] is None else f"{err['after']:.1f} %",
            **_error_change(err),
        )
        c[4].metric("Parameters fitted", len(cal.fits), help=", ".join(cal.fits) or None)
    if s.calibrated:
        st.success(
            f"This scenario is calibrated to measurements: {md_escape(calibrated_values(s))}."
        )


def sharing_notice() -> None:
    """A warning when uploads cannot be shared through the link (the store is unavailable)."""
    ok, text = data.sharing_status()
    if not ok:
        st.warning(text)


def upload_area() -> None:
    ok, text = data.sharing_status()
    if ok:
        st.caption(text)
    st.file_uploader(
        f"Measurement files (5 MB each at most, {data.MAX_DATASETS} data sets at once)",
        help="Recognised from their content, not their name: " + accepted() + ".",
        accept_multiple_files=True,
        key=state.watch_widget("w_meas_upload", None),
        on_change=data.on_upload,
    )
    st.text_area(
        "… or paste a log or a benchmark's output",
        key="w_meas_paste",
        height=120,
        max_chars=data.MAX_PASTE_CHARS,
        placeholder="INFO 06-19 23:05:01 [loader.py:447] Loading weights took 0.69 seconds …",
    )
    st.button("Read pasted text", on_click=data.on_paste, key="w_meas_paste_go")


def examples_area() -> None:
    st.markdown("**Example data sets** (published measurements, each with its source):")
    for ex in examples().values():
        row = st.columns([5, 1])
        row[0].markdown(f"{md_escape(ex.title)}  \n{md_escape(ex.what)} · source: `{ex.source}`")
        row[1].button(
            "Load",
            key=f"w_meas_ex_{ex.id}",
            on_click=data.on_example,
            args=(ex.id,),
            width="stretch",
        )


def errors_area(errs: list[tuple[str, str]]) -> None:
    for name, message in errs:
        st.error(f"**{md_escape(name)}**: {md_escape(message)}")


def notices_area(notes: list[str]) -> None:
    """What sharing could not do (texts from :func:`ui.measure_data.notices`, escaped there)."""
    for text in notes:
        st.warning(text)


def _conditions_mismatch(s: Scenario, ds: Dataset) -> list[str]:
    out = []
    ex = data.example_for(ds)
    if ex is not None and ex.scenario:  # an example states what it measured
        mine = {"model": s.model.id, "hardware": s.hardware.id, "gpus": s.gpus}
        mine["weights_dtype"] = s.weights_dtype
        for key in ("model", "hardware", "gpus", "weights_dtype"):
            if key in ex.scenario and str(ex.scenario[key]) != str(mine[key]):
                out.append(
                    f"it measured {key_name(key)} {ex.scenario[key]}, the scenario has {mine[key]}"
                )
        return out
    return setup_mismatch(s, ds.conditions)[0]


def mismatch_warning(s: Scenario, sets: list[Dataset]) -> None:
    """At the top of the page, before any fit is offered: the data sets measured on another
    model or GPU count than the scenario (one fit over them mixes what they measured)."""
    off = [(ds.name, _conditions_mismatch(s, ds)) for ds in sets]
    off = [(name, why) for name, why in off if why]
    if not off:
        return
    lines = [f"- **{md_escape(name)}**: {md_escape('; '.join(why))}" for name, why in off]
    st.warning(
        f"{len(off)} of the {len(sets)} data sets may not match the scenario; the fit below "
        "compares every point with this one scenario. Set the scenario to what was measured "
        "(each data set's section under What was read has the settings it states), or remove "
        "the data sets of other set-ups:\n\n" + "\n".join(lines)
    )
    for i, ds in enumerate(sets):  # one click to what a file states (issue 40, item 1)
        stated = [] if data.example_for(ds) is not None else setup_mismatch(s, ds.conditions)[1]
        if stated:
            st.button(
                f"Set the scenario to what {md_escape(ds.name)} states",
                key=f"w_meas_setup_top_{i}",
                on_click=state.apply_change,
                args=(stated,),
                help=", ".join(f"{k}={v}" for k, v in stated),
                icon=":material/tune:",
            )


def linked_area(s: Scenario, sets: list[Dataset]) -> None:
    """A benchmark result that names the scenario that predicted it (its ``whatif_link``, from
    the Serving page's "Run this on your cluster"): said when it is this scenario; otherwise
    one click opens that scenario (the data sets stay), so its measured points fall on the
    curves of the scenario they were run for."""
    from model import codecs

    here = codecs.to_query(s)
    for i, ds in enumerate(sets):
        linked, why = linked_scenario(ds.conditions)
        name = md_escape(ds.name)
        if why:
            st.warning(f"**{name}**: {md_escape(why)}; it is compared with this scenario.")
            continue
        if linked is None:
            continue
        if codecs.to_query(linked) == here:
            st.success(
                f"**{name}** is the benchmark of this scenario (the link in its metadata): "
                "its points below are this scenario's prediction against the cluster."
            )
            continue
        mine, theirs = set(codecs.to_params(s)), set(codecs.to_params(linked))
        differ = sorted({k for k, _ in mine ^ theirs})
        shown = ", ".join(md_escape(k) for k in differ[:8]) + (" …" if len(differ) > 8 else "")
        st.info(
            f"**{name}** was run for another scenario (the link in its metadata names "
            f"{md_escape(linked.model.name)} on {linked.gpus}× {md_escape(linked.hardware.name)}"
            f"; it differs from this one in {shown}): open it to compare the result with the "
            "scenario that predicted it."
        )
        if st.button(
            f"Open the scenario {name} names",
            key=state.watch_widget(f"w_meas_link_{i}", False),
            icon=":material/open_in_new:",
        ):
            state.write_scenario(linked)
            st.rerun()


def read_area(s: Scenario, sets: list[Dataset]) -> None:
    st.subheader("What was read")
    for i, ds in enumerate(sets):
        n_rows = len(ds.rows)
        title = (
            f"{ds.name} — {KIND_NAMES.get(ds.kind, ds.kind)} ({ds.format})"
            + (f", {n_rows} rows" if n_rows else "")
            + (f", {len(ds.problems)} not read" if ds.problems else "")
        )
        with st.expander(md_escape(title)):
            ex = data.example_for(ds)
            if ex is not None:
                st.caption(f"Example data set. Source: {md_escape(ex.source)}")
            mismatch = _conditions_mismatch(s, ds)
            if mismatch:
                st.warning(
                    "This measurement may not match the scenario: "
                    + md_escape("; ".join(mismatch))
                    + ". Set the scenario to what was measured before calibrating."
                )
            stated = [] if ex is not None else setup_mismatch(s, ds.conditions)[1]
            if stated:  # a file that names its model or GPU: one click sets the scenario to it
                st.button(
                    "Set the scenario to what this file states",
                    key=f"w_meas_setup_{i}",
                    on_click=state.apply_change,
                    args=(stated,),
                    help=", ".join(f"{k}={v}" for k, v in stated),
                )
            if ex is not None and ex.scenario:
                st.button(
                    "Set the scenario to what this example measured",
                    key=f"w_meas_match_{ex.id}",
                    on_click=state.apply_change,
                    args=(
                        [
                            (k, str(v).lower() if isinstance(v, bool) else str(v))
                            for k, v in ex.scenario.items()
                        ],
                    ),
                    help=", ".join(f"{k}={v}" for k, v in ex.scenario.items()),
                )
            left, right = st.columns(2)
            figs = {k: v for k, v in ds.figures.items() if not isinstance(v, list | dict)}
            if ds.conditions:
                left.markdown("**Conditions found**")
                left.dataframe(_kv(ds.conditions), hide_index=True, width="stretch")
            if figs:
                right.markdown("**Figures**")
                right.dataframe(_kv(figs), hide_index=True, width="stretch")
            items = ds.extra.get("items")
            if items:
                right.dataframe(_kv(items), hide_index=True, width="stretch")
            if ds.rows:
                st.dataframe(pd.DataFrame(ds.rows[:1000]), hide_index=True, width="stretch")
            if ds.problems:
                st.markdown("**Not read, and why**")
                st.dataframe(
                    pd.DataFrame([{"where": p.where, "why": p.message} for p in ds.problems]),
                    hide_index=True,
                    width="stretch",
                )
            st.button(
                "Remove this data set",
                key=f"w_meas_rm_{ds.name}",
                on_click=data.remove,
                args=(ds.name,),
            )
    st.button("Remove all data sets", key="w_meas_clear", on_click=data.clear)


def _kv(d: dict) -> pd.DataFrame:
    return pd.DataFrame({"name": list(d), "value": [str(v) for v in d.values()]})


def tab_labels(cal: Calibration) -> list[str]:
    q = {p.quantity for p in cal.points}
    labels = ["Fit and apply"]
    if q & {"step_ms", "tpot_ms"}:
        labels.append("Decode steps")
    if q & {"ttft_ms", "tpot_ms"}:
        labels.append("Request latency")
    if "launch_saving_ms" in q:
        labels.append("Launch overhead")
    if any(is_startup(x) for x in q) or q & {"read_gb_s", "hbm_gb_s", "h2d_gb_s"}:
        labels.append("Start-up and rates")
    labels.append("Residuals")
    return labels


def fit_report(s: Scenario, cal: Calibration) -> None:
    out = cal.to_json()
    if cal.fits:
        rows = [
            {
                "key": k,
                "before": f.before,
                "fitted": out["fit"][k]["value"],
                "± (1 s.e.)": out["fit"][k]["uncertainty"],
                "unit": UNITS.get(k, ""),
                "points": f.points,
                "from": f.data,
                "R²": out["fit"][k]["r2"],
                "note": f.note,
            }
            for k, f in cal.fits.items()
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    else:
        st.info("Nothing could be fitted from these data sets; see why below.")
    if cal.refused:
        st.markdown("**Not fitted, and why**")
        st.table(  # the reasons read whole, not cut at a cell's edge
            pd.DataFrame([{"key": k, "why": v} for k, v in cal.refused.items()]),
            hide_index=True,
        )
    for note in cal.notes:
        st.caption(md_escape(note))
    ds = pd.DataFrame(out["data_sets"])
    if not ds.empty:
        st.markdown("**Per data set**")
        st.dataframe(ds, hide_index=True, width="stretch")
    row = st.columns([1, 1, 3])
    keys = out["keys"]
    engine = cal.engine if cal.engine and cal.engine != s.engine else None
    applied = not engine and (
        not keys or all(float(f"{key_value(s, k):.4g}") == v for k, v in keys.items())
    )
    # the buttons act on their return value, not an on_click callback: a click that reaches a
    # session whose callbacks are not registered yet (a reconnect to a new session) still
    # applies; the run then starts again so the sidebar and its share link show the result
    if row[0].button(
        "Apply the fit",
        type="primary",
        disabled=(not keys and not engine) or applied,
        key=state.watch_widget("w_meas_apply", False),
        help="Writes the fitted values into the scenario as ordinary keys; every lens uses "
        "them and the share link carries them.",
    ):
        apply_fit(keys, list(s.calibrated or []), engine)
        st.rerun()
    if row[1].button(
        "Reset the calibration",
        disabled=not s.calibrated,
        key=state.watch_widget("w_meas_reset", False),
        help="Drops the calibrated keys: the engine profile's values apply again.",
    ):
        reset_fit(list(s.calibrated or []))
        st.rerun()
    if keys or engine:
        sets = [f"{key_name(k)} to {v:g} {UNITS.get(k, '')}".rstrip() for k, v in keys.items()]
        if engine:
            sets.insert(0, f"the engine to {engine} (the start-up log's vLLM release)")
        row[2].caption("Apply sets " + ", ".join(sets) + "; every page then uses them.")


def apply_fit(keys: dict, already: list[str], engine: str | None = None) -> None:
    listed = list(dict.fromkeys([*already, *keys]))
    pairs = [(k, repr(float(v))) for k, v in keys.items()]
    if keys:
        pairs.append(("calibrated", ",".join(listed)))
    if engine:
        pairs.insert(0, ("engine", engine))
    state.apply_change(pairs)


def reset_fit(keys: list[str]) -> None:
    state.apply_change([], drop_prefixes=(*keys, "calibrated"))


def rates_table(cal: Calibration) -> None:
    rows = [
        r for r in cal.residual_rows() if r["quantity"] in ("read_gb_s", "hbm_gb_s", "h2d_gb_s")
    ]
    if rows:
        st.markdown("**Rates**")
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def downloads(s: Scenario, cal: Calibration) -> None:
    """The residuals (CSV, the link in its first line, clean numbers) and the fit report
    (JSON, the link in a ``link`` field), named after the scenario."""
    from ui import export

    ctx = export.context(s, "measurements")
    frame = pd.DataFrame(cal.residual_rows())
    c = st.columns(2)
    c[0].download_button(
        "Residuals (CSV)",
        lambda: export.csv_text(frame, ctx.comment),
        file_name=ctx.file("residuals", "csv", page="measurements"),
        mime="text/csv",
        on_click="ignore",
    )
    c[1].download_button(
        "Fit report (JSON)",
        lambda: json.dumps(
            {"scenario": ctx.label, "link": ctx.link, **cal.to_json()}, indent=2, allow_nan=False
        ),
        file_name=ctx.file("calibration", "json", page="measurements"),
        mime="application/json",
        on_click="ignore",
    )


def formulas() -> None:
    st.markdown("Decode step, fitted for the efficiency *e* and the host work *h*:")
    st.latex(
        r"t_\text{step}(b) = \max\!\Big(\frac{W + b\,c\,K}{e\,B_\text{HBM}},\ "
        r"\frac{F(b)}{\eta\,P}\Big) + t_\text{comm} + N(b)\,\tau + h + b\,h_\text{seq}"
    )
    st.markdown(
        "Least squares on relative residuals (numpy `lstsq` in a damped Gauss-Newton loop), "
        "one standard error from the covariance:"
    )
    st.latex(
        r"\min_\theta \sum_i \Big(\frac{m_i(\theta) - y_i}{y_i}\Big)^2,\qquad "
        r"\operatorname{cov}\hat\theta = s^2 (J^\top J)^{-1},\ s^2 = \frac{\sum r_i^2}{n - p}"
    )
    st.markdown("Launch cost from an eager/graph pair, and the storage read rate from a log:")
    st.latex(
        r"t_\text{eager} - t_\text{graph} = N\tau + c,\qquad "
        r"R = \frac{\text{ranks}\times\text{GiB per rank}}{t_\text{load} - t_\text{H2D}}"
    )
    st.caption(
        "A parameter is refused when the points cannot tell it from another (one batch size "
        "cannot separate bandwidth from host work) or when its standard error exceeds its "
        "value. Units: " + ", ".join(f"{q} [{u}]" for q, u in QUANTITY_UNITS.items())
    )
