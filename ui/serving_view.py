"""The Serving page's own controls: the clients (rate, concurrency, requests, lengths,
burstiness, random state), the objectives and the engine's limits. Each is a scenario key, so
it joins the share link; a value outside its bounds is refused with a warning naming the key
(the scenario keeps its value)."""

from __future__ import annotations

import streamlit as st

from model.lengths import length_sets
from model.scenario import Scenario
from ui.state import field_widget
from ui.text import md_escape


def _rate_text(s: Scenario) -> str:
    return "inf" if s.request_rate == "inf" else f"{s.request_rate:g}"


def _auto_switch(where, label: str, key: str, s: Scenario, help: str) -> None:
    """A selectbox for an ``auto`` / ``true`` / ``false`` key whose ``auto`` is the engine's
    (``prefix_caching``, ``async_scheduling``), ``auto`` showing what the engine does."""
    engine_on = bool(getattr(s.engine_figures, key))
    field_widget(
        where.selectbox,
        label,
        key,
        getattr(s, key),
        options=["auto", "true", "false"],
        format_func=lambda k: (
            f"auto ({'on' if engine_on else 'off'})"
            if k == "auto"
            else {"true": "on", "false": "off"}[k]
        ),
        help=help,
    )


def controls(s: Scenario) -> None:
    sets = length_sets()
    c = st.columns([2, 2, 2, 3, 2, 2])
    field_widget(
        c[0].text_input,
        "Request rate [req/s]",
        "request_rate",
        _rate_text(s),
        help="Requests per second the clients send (gamma arrivals, Poisson at burstiness 1), "
        "above 0 and at most 1,000,000, or inf to send them all at once.",
    )
    field_widget(
        c[1].number_input,
        "Max concurrency",
        "max_concurrency",
        s.max_concurrency,
        value=None,
        step=1,
        placeholder="none",
        help="Requests in flight at most (vllm bench serve --max-concurrency); a request "
        "waits on the client until one finishes, and that wait is not in its TTFT. Empty: no "
        "limit.",
    )
    field_widget(
        c[2].number_input,
        "Requests",
        "num_requests",
        s.num_requests,
        step=100,
        help="Requests in the run (1 to 1,000,000); the capacity search and the sweep use at "
        "most 1,000.",
    )
    field_widget(
        c[3].selectbox,
        "Lengths",
        "lengths",
        s.lengths,
        options=["fixed", "random", *sets],
        format_func=lambda k: (
            f"fixed: {s.prompt_tokens:,} in, {s.output_tokens:,} out"
            if k == "fixed"
            else f"random: {s.prompt_tokens:,} / {s.output_tokens:,} ± {s.range_ratio:.0%}"
            if k == "random"
            else f"{sets[k].name}: {s.prompt_tokens:,} / {s.output_tokens:,} mean"
            if sets[k].scale == "means"
            else sets[k].name
        ),
        help="Every request the sidebar's prompt and output tokens; random, each length "
        "drawn uniformly within ± range ratio of them (vllm bench serve's random dataset, "
        "--random-range-ratio); ShareGPT, the spread of vllm bench serve's ShareGPT prompts "
        "and replies around the sidebar's tokens as means; or lengths drawn from a real "
        "trace's distribution (presets/lengths.yaml names each source).",
    )
    field_widget(
        c[4].number_input,
        "TTFT SLO [ms]",
        "ttft_slo_ms",
        s.ttft_slo_ms,
        step=50.0,
        format="%g",
        help="Time-to-first-token objective. The default, 450 ms with TPOT 40 ms at p99, is "
        "MLPerf Inference v5.0's interactive Llama 2 70B scenario.",
    )
    field_widget(
        c[5].number_input,
        "TPOT SLO [ms]",
        "tpot_slo_ms",
        s.tpot_slo_ms,
        step=5.0,
        format="%g",
        help="Time-per-output-token objective.",
    )
    box = st.expander(
        "Burstiness, random state, attainment and engine limits",
        key="x_serving_more",
        on_change="rerun",
    )
    if box.open:  # built only while open
        with box:
            d = st.columns(5)
            field_widget(
                d[0].number_input,
                "Burstiness",
                "burstiness",
                s.burstiness,
                step=0.1,
                format="%g",
                help="Shape of the gamma inter-arrival times: 1 is Poisson, below 1 burstier, "
                "above 1 more even (vllm bench serve --burstiness).",
            )
            field_widget(
                d[1].number_input,
                "Random state",
                "seed",
                s.seed,
                step=1,
                help="Picks the random draws of arrivals and lengths: the same value, the same run.",
            )
            field_widget(
                d[2].number_input,
                "SLO attainment",
                "slo_attainment",
                s.slo_attainment,
                step=0.01,
                format="%g",
                help="Share of requests that must meet both objectives (0.99: the p99).",
            )
            field_widget(
                d[3].number_input,
                "max_num_seqs",
                "max_num_seqs",
                s.raw.max_num_seqs,
                value=None,
                step=1,
                placeholder=f"auto ({s.max_num_seqs:,})",
                help="Sequences one engine step may run (vLLM --max-num-seqs); empty: the "
                "engine's default for this GPU.",
            )
            field_widget(
                d[4].number_input,
                "Front-end [ms]",
                "frontend_ms",
                s.raw.frontend_ms,
                value=None,
                step=1.0,
                format="%g",
                placeholder=f"auto ({s.frontend_ms:g})",
                help="Per-request time before the first schedule (HTTP, chat template, "
                "tokenisation), in every TTFT; empty: the engine profile's.",
            )

    box = st.expander(
        "Prefix caching, length spread and API servers",
        key="x_serving_prefix",
        on_change="rerun",
    )
    if box.open:  # built only while open
        with box:
            e = st.columns(5)
            _auto_switch(
                e[0],
                "Prefix caching",
                "prefix_caching",
                s,
                help="Automatic prefix caching: prompts that start with the same whole 16-token "
                "blocks reuse their KV cache and skip their prefill; shared blocks count once; "
                "unreferenced ones are evicted least recently used first. auto: the engine's "
                "default (vLLM V1 and SGLang on, vLLM V0 off).",
            )
            field_widget(
                e[1].number_input,
                "Shared prefix tokens",
                "shared_prefix_tokens",
                s.shared_prefix_tokens,
                step=64,
                help="Tokens every prompt starts with (a system prompt, a shared document), "
                "part of the prompt; 0 to the prompt tokens (vllm bench serve "
                "--random-prefix-len).",
            )
            field_widget(
                e[2].number_input,
                "Prefix groups",
                "prefix_groups",
                s.prefix_groups,
                step=1,
                help="How many distinct shared prefixes the requests draw from, uniformly "
                "(1: one system prompt; many: many documents, which compete for the cache).",
            )
            field_widget(
                e[3].number_input,
                "Range ratio",
                "range_ratio",
                s.range_ratio,
                step=0.05,
                format="%g",
                help="lengths=random: each length drawn uniformly from [L(1 − r), L(1 + r)], r "
                "in [0, 1) (vllm bench serve --random-range-ratio).",
            )
            field_widget(
                e[4].number_input,
                "API servers",
                "api_server_count",
                s.api_server_count,
                step=1,
                help="API-server processes sharing the front-end work and the streaming of "
                "tokens (vllm serve --api-server-count). Each costs the engine's "
                f"{s.api_us_per_token:g} µs per streamed token and "
                f"{s.frontend_queued_ms:g} ms per request plus "
                f"{s.frontend_us_per_token:g} µs per prompt token.",
            )
            f = st.columns(5)
            _auto_switch(
                f[0],
                "Async scheduling",
                "async_scheduling",
                s,
                help="The engine core schedules the next step while the GPU runs this one "
                f"(vllm serve --async-scheduling): its {s.host_us_per_seq:g} µs per running "
                "sequence overlaps the GPU instead of adding to every step. auto: the "
                "engine release's default (vLLM on from 0.14, off in 0.11-0.13; SGLang on).",
            )

    box = st.expander(
        "Data and expert parallelism",
        key="x_serving_dp",
        on_change="rerun",
    )
    if box.open:  # built only while open
        with box:
            _parallel_controls(s)

    box = st.expander(
        "Prefill/decode disaggregation",
        key="x_serving_pd",
        on_change="rerun",
    )
    if box.open:  # built only while open
        with box:
            _disaggregation_controls(s)

    box = st.expander(
        "Speculative decoding",
        key="x_serving_spec",
        on_change="rerun",
    )
    if box.open:  # built only while open
        with box:
            _speculative_controls(s)


def _speculative_controls(s: Scenario) -> None:
    """The keys of speculative decoding (issue 42); each ``auto`` shows the value in effect
    (the method's published default, or the α of a measured acceptance length)."""
    from model import speculative
    from model.scenario import draft_candidates, speculative_methods

    mp = speculative.methods()
    f = st.columns(5)
    options = speculative_methods(s.model)
    if s.speculative not in options:  # a link's value the model no longer takes
        options.append(s.speculative)
    field_widget(
        f[0].selectbox,
        "Method",
        "speculative",
        s.speculative,
        options=options,
        format_func=lambda k: "none" if k == "none" else f"{k}: {mp[k].name}",
        help="Speculative decoding: a drafter proposes k tokens per sequence, one step of the "
        "model verifies them. n-gram matches the prompt (host time only); EAGLE and EAGLE-3 "
        "run a one-layer head on the model's hidden states; MTP the model's own "
        "multi-token-prediction module (DeepSeek-V3/R1); draft, a smaller model of the family.",
    )
    off = s.speculative == "none"
    numbers = (
        (
            "Draft tokens k",
            "num_speculative_tokens",
            {"step": 1},
            f"{speculative.k_of(s)}",
            "num_speculative_tokens, 1 to 16: tokens drafted per sequence per step (vllm "
            "serve --speculative-config's num_speculative_tokens); empty: the method's default.",
        ),
        (
            "Acceptance α",
            "spec_acceptance",
            {"step": 0.05, "format": "%g"},
            f"{speculative.alpha_of(s):.2f}",
            "Per-token acceptance rate, 0 to below 1: the share of drafted tokens the model "
            "accepts, each given the ones before it; a step emits (1 − α^(k+1)) / (1 − α) "
            "tokens. Empty: the method's published default, or the α of the acceptance length "
            "beside.",
        ),
        (
            "Acceptance length τ",
            "spec_acceptance_length",
            {"step": 0.1, "format": "%g"},
            f"{speculative.tokens_per_step(s):.2f}",
            "Instead of α: the mean acceptance length you measured (vLLM logs 'Mean "
            "acceptance length', the bonus token included), 1 to below k + 1; α is solved from "
            "it. Leave α empty to use it.",
        ),
    )
    for col, (label, key, kw, auto, text) in zip(f[1:4], numbers, strict=True):
        field_widget(
            col.number_input,
            label,
            key,
            getattr(s, key),
            value=None,
            placeholder="auto" if off else f"auto ({auto})",
            disabled=off,
            help=text,
            **kw,
        )
    candidates = draft_candidates(s.model)
    field_widget(
        f[4].selectbox,
        "Draft model",
        "draft_model",
        s.draft_model or "auto",
        options=["auto", *candidates],
        format_func=lambda k: f"auto ({candidates[0]})" if k == "auto" and candidates else k,
        disabled=s.speculative != "draft",
        help="speculative=draft: the model preset that drafts, smaller than the model and of "
        "its vocabulary; empty: the smallest such preset.",
    )


def _disaggregation_controls(s: Scenario) -> None:
    """The six keys of prefill/decode disaggregation (issue 42 §2; :mod:`model.disagg`)."""
    from model import disagg

    off = not s.disaggregated
    f = st.columns([1.5, 1, 1, 1, 1, 1.1])
    field_widget(
        f[0].toggle,
        "Disaggregated",
        "disaggregated",
        s.disaggregated,
        help="Serve as a prefill pool and a decode pool (xPyD): a prompt is prefilled on a "
        "prefill instance, its KV cache moves to a decode instance, which decodes without "
        "prefill chunks in its steps (DistServe, Splitwise; vLLM's disaggregated prefilling "
        "with a KV connector).",
    )
    for col, (label, key, role, what) in zip(
        f[1:5],
        (
            ("Prefill instances", "prefill_instances", "prefill", "instances"),
            ("GPUs per prefill", "prefill_gpus", "prefill", "gpus"),
            ("Decode instances", "decode_instances", "decode", "instances"),
            ("GPUs per decode", "decode_gpus", "decode", "gpus"),
        ),
        strict=True,
    ):
        auto = what == "gpus"  # GPUs per instance: empty takes the scenario's gpus
        field_widget(
            col.number_input,
            label,
            key,
            getattr(s, key),
            step=1,
            disabled=off,
            **({"value": None, "placeholder": f"auto ({s.gpus})"} if auto else {}),
            help=(
                f"{key}: GPUs per {role} instance, its tensor-parallel degree, 1 to 64. "
                "Empty: gpus."
                if auto
                else f"{key}: {role} instances per replica "
                f"({'x' if role == 'prefill' else 'y'} of xPyD), 1 to 64."
            ),
        )
    on = s if s.disaggregated else s.model_copy(update={"disaggregated": True})
    field_widget(
        f[5].number_input,
        "KV transfer [GB/s]",
        "kv_transfer_gb_s",
        s.kv_transfer_gb_s,
        value=None,
        step=10.0,
        format="%g",
        placeholder=f"auto ({disagg.transfer_rate_b_s(on) / 1e9:,.0f})",
        disabled=off,
        help="kv_transfer_gb_s: how fast a prompt's KV cache moves from a prefill to a decode "
        "instance, above 0. Empty: the interconnect's (NVLink inside a node of 8 GPUs, a 400 "
        "Gb/s RDMA NIC per GPU across nodes), over the ranks that hold the KV's shards.",
    )


def _parallel_controls(s: Scenario) -> None:
    """The two keys of attention data parallelism and expert parallelism (issue 42 §3)."""
    moe = bool(s.model.experts)
    f = st.columns([1, 1, 3])
    field_widget(
        f[0].number_input,
        "Data-parallel ranks",
        "data_parallel",
        s.data_parallel,
        step=1,
        help="data_parallel (vllm serve --data-parallel-size): ranks of `gpus` GPUs each, every "
        "one with its own batch, scheduler and KV cache; a mixture of experts spreads its "
        "experts over all the ranks' GPUs and its MoE layers exchange every rank's tokens. A "
        "replica is gpus × data_parallel GPUs (at most 64).",
    )
    field_widget(
        f[1].toggle,
        "Expert parallelism",
        "expert_parallel",
        s.expert_parallel,
        disabled=not moe and not s.expert_parallel,
        help="expert_parallel (--enable-expert-parallel): whole experts on each GPU, spread "
        "over the replica's GPUs, instead of every expert sliced across them. Mixture-of-"
        "experts models only.",
    )
    f[2].caption(
        f"A replica is {s.gpus} × {s.data_parallel} = {s.gpus * s.data_parallel} GPUs. "
        + (
            f"{md_escape(s.model.name)} has {s.model.experts} experts, "
            f"{s.model.experts_per_token} per "
            "token: with data-parallel ranks its attention runs per rank (the MLA latent is not "
            "split) and its MoE layers carry every rank's tokens."
            if moe
            else f"{md_escape(s.model.name)} is dense: its data-parallel ranks are independent "
            "replicas "
            "behind one server, and expert parallelism does not apply."
        )
    )


def run_on_cluster(s: Scenario, replicas: int | None) -> None:
    """ "Run this on your cluster" (issue 43, section 2): the ``vllm serve`` line, SGLang's
    equivalent, the ``vllm bench serve`` run that reproduces this page's run (its result
    carries the link, so uploading it on Measurements compares it with this scenario) and a
    Kubernetes Deployment of the replicas the rate needs. Built only while open."""
    from model import codecs
    from model.commands import commands
    from ui import export, state

    box = st.expander("Run this on your cluster", key="x_run_cluster", on_change="rerun")
    if not box.open:
        return
    link = codecs.to_url(s, state.page_url("serving"))
    out = commands(s, link, replicas=max(int(replicas or 1), 1))
    with box:
        st.caption(
            f"Written for {out.engine_release} (the engine profile's release); every flag is "
            "the scenario's value. The benchmark's result names this scenario in its "
            "metadata (`whatif_link`)."
        )
        for text in out.missing:
            st.warning(f"Not accepted by that release: {md_escape(text)}")
        left, right = st.columns(2)
        with left:
            st.markdown("**vLLM server**")
            st.code(out.vllm_serve, language="bash", wrap_lines=True)
            st.markdown("**The benchmark that reproduces this run**")
            st.code(out.vllm_bench_serve, language="bash", wrap_lines=True)
        with right:
            st.markdown("**SGLang server (the equivalent)**")
            st.code(out.sglang_serve, language="bash", wrap_lines=True)
            st.markdown(
                f"**Kubernetes** ({max(int(replicas or 1), 1)} replica(s): the rate's, "
                "from the capacity above)"
            )
            st.code(out.kubernetes, language="yaml", wrap_lines=True)
        ctx = export.context(s, "serving")
        st.download_button(
            "Kubernetes manifest (YAML)",
            out.kubernetes,
            file_name=ctx.file("deployment", "yaml", page="serving"),
            mime="application/yaml",
            on_click="ignore",
        )
        for note in out.notes:
            st.caption(md_escape(note))
