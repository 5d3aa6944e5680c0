"""Text shared by pages and charts (no streamlit here): number formatting, and user text made
literal for Streamlit markdown and for Plotly."""

from __future__ import annotations

import html
import re

#: every ASCII punctuation character: CommonMark lets a backslash escape any of them
_MD_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
#: where GFM would start an autolink: after ':' (https:, mailto:, and Streamlit's :icon: and
#: :color[…] directives), after '@' (e-mail addresses) and between 'www' and '.'
_MD_AUTOLINK = re.compile(r"(?<=[:@])|(?<=www)(?=\.)", re.IGNORECASE)
WORD_JOINER = "\u2060"  # invisible, and not a character any autolink or directive accepts
_LINE_BREAKS = re.compile(r"[\r\n\v\f\u2028\u2029]+")


def release_product(engine_id: str) -> str:
    """The engine's name as its releases are named: SGLang for sglang, vLLM for the rest (the
    label of the release select and of the controls that point to it)."""
    return "SGLang" if str(engine_id).startswith("sglang") else "vLLM"


def md_escape(text: object) -> str:
    """User text (a model or hardware name, an id, a source, an error quoting input) made
    literal for Streamlit markdown: ``st.markdown``, ``st.caption``, ``st.info`` and the other
    alerts, metric labels and every ``help=`` tooltip.

    Every ASCII punctuation character is backslash-escaped, so no emphasis, link, image, HTML,
    heading, list, table, LaTeX, colour or icon directive survives. Escapes alone do not stop
    GFM's autolinks (``https://…``, ``www.…``, ``a@b.c`` become links whatever the
    backslashes; checked in Chromium on Streamlit 1.67), so an invisible word joiner also goes
    after each ``:`` and ``@`` and between ``www`` and ``.``. Line breaks become spaces: the
    text stays on its line.
    """
    text = _LINE_BREAKS.sub(" ", str(text))
    text = _MD_AUTOLINK.sub(WORD_JOINER, text)
    return _MD_PUNCT.sub(r"\\\1", text)


def plotly_text(text: object) -> str:
    """Text from data (names, ids, labels) made literal for Plotly, which renders a subset of
    HTML (``<b>``, ``<i>``, ``<a href>``, ``<br>``, ``<span style>``) in titles, axis titles,
    tick labels, legend names, annotations, text and hover labels: ``&``, ``<`` and ``>``
    become entities (Plotly shows them as the characters), and ``%`` becomes ``&#37;`` so
    that ``%{x}`` in a hovertemplate stays text instead of a template field."""
    return html.escape(str(text), quote=False).replace("%", "&#37;")


def share(x: float) -> str:
    """A fraction as a percentage, or as a multiple once it passes 10× (1000 %)."""
    return f"{x:.0%}" if x < 10 else f"{x:,.0f}×"


def duration(seconds: float) -> str:
    """A time with a unit that keeps it readable: µs, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:,.3g} s" if seconds < 1000 else f"{seconds:,.0f} s"


def latency(seconds: float) -> str:
    """A latency with three significant digits, trailing zeros kept so figures side by side
    read alike: 13.0 ms, 23.5 ms, 1.60 ms, 3.34 s, 135 ms."""
    value, unit = (seconds * 1e3, "ms") if seconds < 0.9995 else (seconds, "s")
    if value >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:#.3g} {unit}"


def scenario_label(s, batch: bool = True) -> str:
    """A scenario in one line of plain text (user text inside: escape it for markdown or
    Plotly): "Llama 3.1 70B · FP8 · 4× H100 SXM · vLLM · batch 1" (without the batch where
    ``batch`` is False: a lens that does not read it)."""
    parts = [s.model.name, s.weights_dtype.upper(), f"{gpus_text(s)} {s.hardware.name}"]
    parts.append(s.engine_profile.name)
    if batch:
        parts.append(f"batch {s.batch:,}")
    return " · ".join(parts)


#: the source posts behind the formulas, by the plain name the pages use for each (one name
#: per source, used alike everywhere a page cites it)
SOURCE_NAMES = {
    "roofline": "the roofline post",
    "launch": "the kernel-launch post",
    "qa": "the CUDA graphs Q&A post",
    "cold_start": "the cold-start post",
}
#: each source's own title and what it is (the formulas' "Sources" lines)
SOURCE_TITLES = {
    "roofline": "*The roofline flips: why optimising small models is a different performance "
    "game* (blog post, Cuda-Graphs on lo0)",
    "launch": "*The chef who calls out every order: SMs, CUDA streams and CUDA graphs* (blog "
    "post, Cuda-Graphs on lo0)",
    "qa": "*CUDA graphs & kernel fusion* (a course's question-and-answer page, vLLM 0.26)",
    "cold_start": "*Speeding up model cold start: from minutes to seconds* (blog post, "
    "Cuda-Graphs on lo0)",
}


def gpus_text(s) -> str:
    """A replica's GPUs in a caption: "4×"; with data-parallel ranks "8× (TP 4 × DP 2, EP)";
    disaggregated "12× (1P×4 + 2D×4)"."""
    if getattr(s, "disaggregated", False):
        pg, dg = s.prefill_gpus or s.gpus, s.decode_gpus or s.gpus
        return f"{s.replica_gpus}× ({s.prefill_instances}P×{pg} + {s.decode_instances}D×{dg})"
    if s.data_parallel == 1:
        return f"{s.gpus}×" + (" (EP)" if s.expert_parallel else "")
    ep = ", EP" if s.expert_parallel else ""
    return f"{s.replica_gpus}× (TP {s.gpus} × DP {s.data_parallel}{ep})"


#: a scenario key as the pages name it (the widget's label, in words): the sidebar's
#: "Modified from …" line and the lists of settings that override the engine's
KEY_NAMES = {
    "max_num_seqs": "sequences per step",
    "frontend_ms": "front-end time",
    "request_rate": "request rate",
    "max_concurrency": "max concurrency",
    "burstiness": "burstiness",
    "num_requests": "requests per run",
    "lengths": "request lengths",
    "seed": "random state",
    "ttft_slo_ms": "TTFT objective",
    "tpot_slo_ms": "TPOT objective",
    "slo_attainment": "SLO attainment",
    "hardware": "hardware",
    "model": "model",
    "engine": "engine",
    "gpus": "GPUs",
    "weights_dtype": "weights dtype",
    "weights_gb": "weights size",
    "kv_dtype": "KV-cache dtype",
    "batch": "batch",
    "context_tokens": "context tokens",
    "prompt_tokens": "prompt tokens",
    "output_tokens": "output tokens",
    "kernels": "kernels per step",
    "kernels_per_layer": "kernels per layer",
    "launch_us": "launch cost τ",
    "host_ms": "host work",
    "host_us_per_seq": "host work per sequence",
    "api_us_per_token": "API-server work per token",
    "frontend_us_per_token": "front-end work per prompt token",
    "frontend_queued_ms": "queued front-end time",
    "api_server_count": "API servers",
    "range_ratio": "length range ratio",
    "prefix_caching": "prefix caching",
    "async_scheduling": "asynchronous scheduling",
    "shared_prefix_tokens": "shared prefix tokens",
    "prefix_groups": "prefix groups",
    "data_parallel": "data-parallel ranks",
    "expert_parallel": "expert parallelism",
    "speculative": "speculative decoding",
    "num_speculative_tokens": "draft tokens per step",
    "spec_acceptance": "draft acceptance rate",
    "spec_acceptance_length": "mean acceptance length",
    "draft_model": "draft model",
    "disaggregated": "prefill/decode disaggregation",
    "prefill_gpus": "GPUs per prefill instance",
    "prefill_instances": "prefill instances",
    "decode_gpus": "GPUs per decode instance",
    "decode_instances": "decode instances",
    "kv_transfer_gb_s": "KV transfer rate",
    "cuda_graphs": "CUDA graphs",
    "launch_model": "launch model",
    "bw_efficiency": "bandwidth efficiency",
    "flops_efficiency": "FLOPS efficiency (decode)",
    "prefill_efficiency": "FLOPS efficiency (prefill)",
    "allreduce_latency_us": "all-reduce latency",
    "max_num_batched_tokens": "prefill chunk size",
    "gpu_memory_utilization": "GPU memory share",
    "graph_mb_per_graph": "memory per graph",
    "capture_s_per_graph": "capture seconds per graph",
    "capture_sizes": "capture sizes",
    "loader": "loader",
    "storage": "storage tier",
    "concurrency": "read streams",
    "storage_gb_s": "storage bandwidth",
    "stream_gb_s": "bandwidth per stream",
    "compile_s": "cold compile",
    "compile_cached_s": "cached compile",
    "process_init_s": "process init",
    "cuda_context_s": "CUDA context",
    "allocator_s": "allocator",
    "compile_cache": "compile cache",
    "sleep_level": "sleep level",
    "gpu_hour_usd": "GPU price",
    "traffic": "traffic profile",
    "rate_scale": "rate scale",
    "idle_timeout_s": "idle timeout",
    "warm_replicas": "warm replicas",
    "prewarm_hours": "pre-warm hours",
    "sla_s": "start-up SLA",
    "sla_penalty_usd": "penalty per miss",
    "shared_while_asleep": "shared while asleep",
    "calibrated": "calibration",
    "hardware.memory_gb": "GPU memory",
    "hardware.hbm_bandwidth_tb_s": "HBM bandwidth",
    "hardware.h2d_gb_s": "H2D per GPU",
    "hardware.interconnect_gb_s": "GPU link bandwidth",
    "hardware.gpu_hour_usd": "hardware price",
}


#: a hardware or model field in words (the page caption says which fields differ from the
#: preset whose name a hardware or a model carries)
FIELD_NAMES = {
    "memory_gb": "memory [GB]",
    "hbm_bandwidth_tb_s": "HBM bandwidth [TB/s]",
    "h2d_gb_s": "H2D [GB/s]",
    "interconnect_gb_s": "GPU link [GB/s]",
    "gpu_hour_usd": "price [USD/GPU-hour]",
    "params_b": "parameters [B]",
    "active_params_b": "active parameters [B]",
    "layers": "layers",
    "hidden": "hidden size",
    "heads": "attention heads",
    "kv_heads": "KV heads",
    "head_dim": "head size",
    "vocab": "vocabulary",
    "experts": "experts",
    "experts_per_token": "experts per token",
    "tied_embeddings": "tied embeddings",
    "quantised": "quantised weights",
    "max_context_tokens": "max context",
    "kv_lora_rank": "KV latent rank",
    "qk_rope_head_dim": "RoPE head size",
    "vision_params_b": "vision encoder parameters [B]",
    "sliding_window": "sliding window [tokens]",
    "sliding_window_layers": "sliding-window layers",
}


def field_name(field: str) -> str:
    """A hardware or model field in words: ``params_b`` → "parameters [B]",
    ``peak_tflops.bf16`` → "peak BF16 [TFLOPS]"."""
    if field.startswith("peak_tflops."):
        return f"peak {field.partition('.')[2].upper()} [TFLOPS]"
    return FIELD_NAMES.get(field, field.replace("_", " "))


_FIGURE_WORDS = {
    "ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "end-to-end latency",
    "e2e": "end-to-end", "kv": "KV", "slo": "SLO", "gpus": "GPUs", "gpu": "GPU",
    "hbm": "HBM", "h2d": "host-to-device", "jit": "JIT", "tflops": "TFLOPS", "ai": "AI",
    "num": "number of", "seqs": "sequences", "tok": "tokens", "usd": "$",
}  # fmt: skip
_FIGURE_UNITS = {"ms": "ms", "s": "s", "us": "µs", "gb": "GB", "gib": "GiB", "mb": "MB",
                 "tb": "TB", "pct": "%", "usd": "$", "b": "billion"}  # fmt: skip


def figure_words(figure: str) -> str:
    """A figure's key in words for a table (issue 40, item 9): ``p99_ttft_ms`` → "p99 TTFT
    [ms]", ``peak_hour.replicas_needed`` → "peak hour: replicas needed"."""
    head, _, tail = figure.rpartition(".")
    parts = tail.split("_")
    unit = None
    if len(parts) > 2 and parts[-1] == "s" and parts[-2] in ("tb", "gb", "mb"):
        unit, parts = f"{_FIGURE_UNITS[parts[-2]]}/s", parts[:-2]  # a rate: GB/s
    elif len(parts) > 1 and parts[-1] in _FIGURE_UNITS:
        unit, parts = _FIGURE_UNITS[parts[-1]], parts[:-1]
    time = len(parts) > 1 and parts[0] == "t"  # t_step → step time
    parts = parts[1:] if time else parts
    words = " ".join(
        f"[{_FIGURE_UNITS[p]}]" if p in ("s", "ms", "gb") and i else _FIGURE_WORDS.get(p, p)
        for i, p in enumerate(parts)
    ) + (" time" if time else "")
    text = f"{words} [{unit}]" if unit else words
    return f"{figure_words(head)}: {text}" if head else text


def key_name(key: str) -> str:
    """A scenario key in words; a dotted key not named here is its part's ("hardware details",
    "model details": a hardware or model edited in a link or a YAML file)."""
    if key in KEY_NAMES:
        return KEY_NAMES[key]
    head = key.partition(".")[0]
    if head == "hardware" and key.startswith("hardware.peak_tflops"):
        return "peak TFLOPS"
    return f"{head} details" if head in ("hardware", "model") else key.replace("_", " ")


def modified_keys(s) -> list[str]:
    """What the scenario changes from its base (its named preset, or the built-in defaults),
    each setting once, in words, in the order the share link lists them."""
    from model import codecs

    raw = s.raw
    base = codecs._base_of(raw)  # noqa: SLF001 - the same base the link is written against
    names: list[str] = []
    for key, _ in codecs.to_params(raw):
        if key == "scenario" or (key == "engine" and raw.engine == base.engine):
            continue
        if key in ("weights_dtype", "kv_dtype") and getattr(raw, key) == getattr(base, key):
            continue  # stated because the model changed (codecs.to_params), not changed

        name = key_name(key)
        if name not in names:
            names.append(name)
    return names


def modified_caption(s) -> str:
    """ "Modified from <preset>: batch, weights dtype." (plain text, not escaped), or "" when
    the scenario is its base as it stands."""
    names = modified_keys(s)
    if not names:
        return ""
    base = s.raw.scenario or "the built-in defaults"
    return f"Modified from {base}: {', '.join(names)}."


#: one line for each term a newcomer may not know (metric and widget help, and the landing
#: page's glossary)
GLOSSARY = {
    "Decode and prefill": "Prefill reads the whole prompt in one pass; decode then makes one "
    "token per step for every sequence in the batch.",
    "Arithmetic intensity (AI)": "FLOPs done per byte read from memory [FLOP/B]. Decode reads "
    "all the weights for a few FLOPs each, so its AI is low.",
    "Ridge point": "The AI where the memory roof meets the compute roof (peak FLOPS ÷ memory "
    "bandwidth): below it a step waits on memory, above it on the arithmetic.",
    "Bound": "What limits a step: memory (HBM reads), compute (FLOPs), communication (the "
    "all-reduce between GPUs) or overhead (kernel launches and host work).",
    "HBM": "The GPU's own memory: it holds the weights, the KV cache and the CUDA graphs.",
    "KV cache": "The attention keys and values kept for every token of every sequence; it "
    "grows with batch × context and caps the batch that fits.",
    "TP (tensor parallelism)": "The model split across the GPUs of one replica; every layer "
    "then adds an all-reduce between them.",
    "Launch cost τ": "CPU time to launch one GPU kernel, a few µs. Eager decode pays it for "
    "every kernel of every step.",
    "Launch tax": "The launches' time N·τ of an eager step, as a share of the GPU's own time.",
    "Eager": "Every kernel launched one by one from the CPU (vLLM's enforce-eager).",
    "CUDA graphs": "A recorded sequence of kernels replayed with one launch: the launch cost "
    "goes, at the price of capture time at start-up and some GPU memory.",
    "Piecewise graphs": "Graphs of the pieces between attention layers; attention still "
    "launches kernel by kernel, so a step pays about 2 × layers launches.",
    "Full graphs": "One graph for the whole decode step: one launch per step "
    "(full_decode_only; full_and_piecewise adds piecewise graphs for mixed steps).",
    "Capture sizes": "The batch sizes captured as graphs; a batch is padded up to the next "
    "one, and a batch above the largest runs eager.",
    "TTFT": "Time to first token: the prompt's prefill plus one step.",
    "TPOT": "Time per output token: one decode step at the batch.",
    "H2D": "Host-to-device copy: the weights from host RAM over PCIe into the GPU.",
    "Amdahl's law": "Speeding up a share f of the time by s speeds up the whole by "
    "1 / ((1 − f) + f/s).",
    "Cold start": "The time from starting the server to its first answer: process, CUDA "
    "context, allocator, weights, then graph capture and compilation.",
    "Sleep mode": "vLLM parks an idle server instead of stopping it: level 1 keeps the weights "
    "in host RAM, level 2 discards them.",
    "p99 wait": "The start-up wait 99 % of requests stay under (1 in 100 waits longer).",
    "SLA": "The start-up wait a request tolerates; each request over it costs the penalty.",
    "Break-even cold start": "The cold start below which scaling to zero costs less per day "
    "than keeping a replica warm.",
}


def step_ms(ms: float) -> str:
    """A decode step's time in a metric: three decimals below 10 ms (8.000 ms, 2.005 ms: the
    worked examples' precision), two below 100 ms, one up to 10 s, then seconds, so any step
    fits its column of six at 1440 px (11.34 ms, 164.9 ms, 4,157.2 ms, 12.35 s; "11.335 ms"
    was cut to "11.335 …")."""
    if ms < 10:
        return f"{ms:.3f} ms"
    if ms < 100:
        return f"{ms:.2f} ms"
    if ms < 10_000:
        return f"{ms:,.1f} ms"
    return f"{ms / 1000:,.2f} s"


def fmt(value: float, digits: int = 3) -> str:
    """A number with ``digits`` significant digits and thousands separators."""
    if value is None:
        return "–"
    if abs(value) >= 10**digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


#: what each value of ``decode.bound`` / ``request.prefill_bound`` means (a metric's help)
BOUND_HELP = {
    "memory": "Reading the weights and the KV cache from HBM takes longest.",
    "compute": "The FLOPs take longest: the step is past the ridge point (enough FLOPs per "
    "byte read that the arithmetic, not memory, sets the pace).",
    "communication": "The tensor-parallel all-reduce takes longer than the HBM reads and the "
    "FLOPs: faster links or fewer GPUs help more than quantising.",
    "overhead": "Launches and host work take longer than the GPU's work: the GPU waits for "
    "the CPU (CUDA graphs and a lighter host loop help).",
}
