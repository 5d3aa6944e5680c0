"""Read the start-up timings out of a vLLM server log (SPEC 4.5, ``whatif parse-log``).

:func:`parse_log` turns the text of a vLLM start-up log, as people paste it, into a
:class:`~model.readers.measurements.Dataset` (``format="vllm_log"``, ``kind="startup_log"``) whose
``figures`` carry the SPEC 4.5 names, in seconds or GiB, the largest over the ranks that print
the same line; ``conditions`` what the log says about the run; ``extra`` the cold-start line
items the figures support (``items``), the vLLM ``version``, the number of ``ranks`` seen, the
number of ``lines_matched`` and of ``start_ups``. A text with no timing line at all is a
:class:`~model.errors.ScenarioError` naming the file and the lines looked for.

Figures (absent when the log lacks them)
    ``loading_weights_s``, ``model_loading_s``, ``model_loading_gib``, ``download_s``,
    ``dynamo_transform_s``, ``compile_s`` (every "Compiling a graph for … takes" of a rank,
    summed; on TPUs every XLA "Compilation finished in … [secs]", summed), ``compile_cache_load_s``
    (every "Directly load the compiled graph … took", summed), ``compile_cache_hit`` (true when a
    "Directly load the compiled graph" or "Directly load AOT compilation" line is present),
    ``torch_compile_total_s``, ``memory_profiling_s``, ``warmup_s``, ``graph_capture_s``,
    ``graph_capture_gib``, ``graphs_captured`` (capture progress bars: the largest count of each
    bar label, summed over labels), ``init_engine_s``, ``init_compilation_s``, ``kv_cache_gib``,
    ``kv_cache_tokens``, ``gpu_blocks`` (V0), ``max_concurrency`` with
    ``max_concurrency_tokens``, ``enforce_eager``, ``stream_gib``, ``stream_s``,
    ``stream_gib_s`` (Run:ai streamer).

Line formats recognised, by version (the message part; any prefix may precede it)
    * V0 ≤0.3 (vllm/worker/model_runner.py): ``Capturing the model for CUDA graphs. …``,
      ``Graph capturing finished in 6 secs.`` (whole seconds, no GiB).
    * V0 0.4–0.7 (model_runner.py): ``Loading model weights took 1.5874 GB`` (the value is GiB);
      llm_engine.py / gpu_executor.py / distributed_gpu_executor.py: ``# GPU blocks: N, # CPU
      blocks: M``; 0.6.3+ ``Maximum concurrency for 2048 tokens per request: 291.41x``;
      0.6.4 worker.py ``Memory profiling results: total_gpu_memory=23.64GiB … kv_cache_size=
      12.67GiB gpu_memory_utilization=0.98``; 0.6.5 the same with ``duration=71.88 seconds,``
      and commas; 0.6.5+ ``Capturing cudagraphs for decoding. …``, tqdm ``Capturing CUDA graph
      shapes: 100%|…| 35/35``, ``Graph capturing finished in 14 secs, took 0.21 GiB``,
      llm_engine.py ``init engine (profile, create kv cache, warmup model) took 14.18 seconds``;
      with -O3 the torch.compile lines below.
    * V0 0.7–0.10 (loader.py, model_runner.py, worker.py, executor_base.py): ``Loading weights
      took 0.69 seconds``, ``Model loading took 3.4 GB and 4.2 seconds`` (GB meaning GiB),
      ``Memory profiling takes 0.44 seconds``, ``the current vLLM instance can use
      total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.80) = …``, ``model weights take
      1.12GiB; … the rest of the memory reserved for KV Cache is 61.84GiB.``, ``# cuda blocks:
      36184, # CPU blocks: 2340``.
    * V1 0.8–0.11.1 (loader.py / default_loader.py, v1/worker/gpu_model_runner.py,
      compilation/backends.py, compilation/monitor.py, v1/core/kv_cache_utils.py,
      v1/worker/gpu_worker.py, v1/engine/core.py): ``Loading weights took 1.01 seconds``,
      ``Model loading took 4.1801 GiB and 2.524322 seconds``, ``Using cache directory: …/rank_0_0/
      backbone for vLLM's torch.compile``, ``Dynamo bytecode transform time: 7.51 s``,
      ``Compiling a graph for general shape takes 36.76 s`` (≤0.10) / ``… for shape 8 takes …``
      / ``… for dynamic shape takes 13.62 s`` (0.11), ``Directly load the compiled graph for
      shape None from the cache`` / ``…graph(s) for dynamic shape from the cache, took 1.495 s``,
      ``torch.compile takes 7.51 s in total``, ``GPU KV cache size: 613,024 tokens``,
      ``Maximum concurrency for 131,072 tokens per request: 4.68x``, ``Available KV cache memory:
      26.91 GiB`` (≥0.9), tqdm ``Capturing CUDA graphs: 100%|…| 67/67`` and (≥0.10) ``Capturing
      CUDA graphs (mixed prefill-decode, PIECEWISE): …| 51/51`` / ``(decode, FULL): …| 35/35``,
      ``Graph capturing finished in 17 secs, took 0.48 GiB``, ``init engine (profile, create kv
      cache, warmup model) took 34.11 seconds``; graphs off: ``Cudagraph is disabled under eager
      mode``, ``Skipping CUDA graph capture…``.
    * V1 ≥0.11.2: ``Model loading took 2.0513 GiB memory and 27.200487 seconds``; 2026
      (≥0.19): ``Model loading took 12.66 GiB memory and 31.66 seconds``, Model Runner V2
      ``Model loading took 7.64 GiB and 32.97 seconds``, ``Compiling a graph for compile range
      (1, 8192) takes 44.99 s``, ``Directly load the compiled graph(s) for compile range (1,
      8192) from the cache, took 5.958 s``, ``torch.compile took 82.29 s in total``
      (monitor.py:53), ``Initial profiling/warmup run took 76.71 s`` (monitor.py:81), ``CUDA
      graph pool memory: 0.45 GiB (actual), …``, ``init engine (…) took 90.00 s (compilation:
      8.90 s)``; weight_utils.py ``Time spent downloading weights for X: 33.1 seconds``.
    * ≤0.10 leaves the cache load out of ``torch.compile takes 3.70 s in total`` (Dynamo 3.70 s,
      then ``… from the cache, took 5.920 s``); later versions count it. Item 5 then uses the
      rank's Dynamo + compile + cache-load sum, with a problem saying so.
    * 2026 (decorators.py): ``Directly load AOT compilation from path …/rank_0_0/model`` (a
      cache hit, no time), ``saved AOT compiled function to …`` (compiled, no time);
      gpu_worker.py with ``kv_cache_memory_bytes`` set: ``Initial free memory 31.16 GiB,
      reserved 4.25 GiB memory for KV Cache as specified by kv_cache_memory_bytes config and
      skipped memory profiling``; kv_cache_utils.py prints ``GPU KV cache size: 29,056 tokens,
      Maximum concurrency for 2,048 tokens per request: 14.19x`` on one line.
    * CPU backend (cpu_model_runner.py, cpu_worker.py): ``Warming up model for the
      compilation...`` / ``Warming up done.`` (the compile, untimed), ``Explicitly set
      (1.0/15.51) GiB for KV cache on node 0.`` / ``Auto set (1.48/18.0) GiB for KV cache on node
      0, with …``; no graph capture. TPU (tpu_model_runner.py, tpu-inference
      compilation_manager.py): ``Compilation finished in 41.27 [secs].`` per graph family (V1),
      ``Compilation for prefill done in 12.50 s.`` (V0), ``… Encoder compilation finished in in
      3.1 [secs].``; no graph capture (item 5's capture part is 0). The platform comes from
      ``Automatically detected platform cpu.``, ``Platform plugin ascend is activated`` or the
      config's ``device_config=cpu``; a CPU or TPU log says its figures are partial, and a log
      without timings says which backend it came from.
    * Run:ai streamer (file_streamer.py): ``[RunAI Streamer] Overall time to stream 942.3 MiB of
      all files: 0.18s, 5.0 GiB/s`` (``… of all files to cpu: 41.52s, 1.7 GiB/s``).
    * Run and version: ``Initializing an LLM engine (v0.6.4.dev26+g92d86da2) with config:
      model='…', dtype=…, max_seq_len=…, load_format=LoadFormat.AUTO, tensor_parallel_size=N,
      enforce_eager=…`` (V0), ``Initializing a V0|V1 LLM engine (v0.7.3) with config: …``,
      ``vLLM API server version 0.11.2``, the ≥0.15 ASCII-art banner (``█ … version 0.19.0``,
      ``█ … model   openai/gpt-oss-20b``), ``non-default args: {'model': …}``, ``args:
      Namespace(…)``, ``Starting to load model X...``, ``Using max model len N``, a pasted
      ``$ vllm serve MODEL --flags`` or ``python -m vllm.entrypoints.openai.api_server …``.

Sources: the vLLM source files named above, and the public logs collected in
``shared/fixtures/vllm_logs/README.md`` (BentoML/BentoVLLM README; instructlab/instructlab#2092;
just-record/vllm_practice quickstart; vllm-project/vllm#10909, #11005, #20264, #25784, #29335,
#44106; generative-computing/mellea#416; noonghunna/club-3090#552; InftyAI/llmaz#423;
run-ai/runai-model-streamer#135), and those of the tests' own logs (pytorch/serve#3315, #3343;
ray-project/ray#65486, #53663; vllm-project/vllm#25607, #36634, #34399, #18136;
kyuz0/amd-strix-halo-vllm-toolboxes#5; SergiioB/intel-arc-pro-b70-inference-cookbook#4;
noonghunna/club-3090#178; vllm-project/tpu-inference#1729; kserve/kserve#4470).

Noise a pasted log carries, and what is done with it
    * ANSI colour and cursor codes (also with the ESC lost: ``[0;36m``, or in caret notation:
      ``^[[1;36m``), other control characters, a byte-order mark; carriage-return tqdm redraws
      (each redraw is a line); Windows and old-Mac line ends; a unit with tqdm debris glued on
      (``272.07 seconds7MB/s]``: a unit is followed by anything but a letter).
    * Records glued together: vLLM's header (``INFO 09-24 20:50:58``) past the start of a line
      means the paste lost newlines, or a progress bar ran into the next record; the line is cut
      before each header and the process prefixes right before it (a first piece that holds no
      phrase is the prefix of the record after it).
    * Markdown: code fences, ``> `` quote marks, backticks, ``**bold**``; terminal-UI borders
      (``│ … │``); Ray's ``[repeated 7x across cluster]``; trailing spaces.
    * Prefixes, stacked in any order: ISO timestamps (``2024-01-18T07:51:30+0800``,
      ``2025-06-19T23:05:01.123456789Z``, ``2026-05-01 23:13:17.078 |``), journald
      (``Aug 18 22:21:59 host vllm[123]:``), ``[pod/x/c]``, docker compose / kubectl
      (``vllm-1  | ``), the process prefix (``(VllmWorkerProcess pid=N)``, ``(Worker_TP1
      pid=N)``, ``(RayWorkerWrapper pid=N, ip=…)``, ``(EngineCore_DP0 pid=N)``, Ray Serve's
      ``(ServeReplica:default:LLMServer:m pid=N)``, ``(_EngineBackgroundProcess pid=N)``…; the
      innermost names the rank) and vLLM's own ``INFO MM-DD HH:MM:SS [file.py:NN]`` header. An
      unknown prefix before that header (TorchServe's ``2024-09-13T22:24:43,002 [INFO ]
      W-9000-model_1.0-stdout MODEL_LOG - ``, vllm-omni's ``[Stage-0]``) is skipped within
      :data:`PREFIX_SPAN` characters, keeping the process prefixes in it; messages are searched,
      not anchored, so an unknown prefix elsewhere only costs the rank identity.
    * Hard wraps: a line that carries no log prefix may continue the line before it when that
      line has a phrase whose value could not be read, or read something and the next line does
      not start like a message of its own (a capital letter, a bracket, a prompt), or a phrase
      spans the break. It is joined when, and only when, the joined text reads more values than
      the two lines read apart (so ``Model loading took 4.18`` + ``01 GiB and 2.52 seconds``,
      ``took 17 se`` + ``cs`` and ``Model loa`` + ``ding took …`` are joined, two complete
      prefix-less lines are not). Joins are tried without, then with, a space (the wrap may have
      eaten it), for up to three continuation lines.
    * Values: thousands separators are read; NaN, negative or absurd values (over a million
      seconds, over 100 000 GiB) and unreadable ones are problems naming the line, not figures.
      "GB" printed by old versions is GiB (a problem notes the conversion); MiB is divided by
      1024.
    * Safety and speed: no eval; every regular expression has bounded repetition and no
      ambiguous nested repetition (linear time); each phrase is read at its first occurrence in a line, within
      :data:`WINDOW` characters; lines over :data:`MAX_LINE` characters are skipped with a
      problem. Only the lines holding a phrase (or a word a hard wrap leaves beside a cut
      phrase: took, takes, secs, seconds, GiB, capturing), found with ``str.find`` over the
      lower-cased text, and their neighbours are examined: a 5 MB log is read in well under a
      second.

Ranks and start-ups
    Several ranks print the same line; each figure is the largest over the ranks (per rank, the
    compile, cache-load and Dynamo times of distinct graphs — compile range or shape, and the
    cache sub-directory such as ``backbone`` / ``eagle_head`` — are summed first). A rank is the
    process prefix (name and pid; no prefix is one rank); ``extra["ranks"]`` counts those that
    printed a weights or capture line.

    A log may hold several server starts. A new start-up begins at (a) a start marker — a pasted
    ``vllm serve`` / ``python -m vllm.entrypoints…`` command, the API server's version line or
    banner, ``non-default args``, ``args: Namespace(``, ``Initializing … LLM engine`` — when the
    current start-up already has figures and the marker comes from the main process (no prefix,
    or ``APIServer``) or from a process that already printed figures in it; or (b) a figure that
    the same process (``Worker_TP0``, ``EngineCore_DP1``… — pids change across restarts) already
    printed in this start-up, or any start-up figure from the process that printed ``init
    engine``, once an ``init engine … took`` line has been seen. Timestamps are not used to
    order lines (pastes interleave ranks), only to veto a split: a marker or repeat whose vLLM
    timestamp is earlier than the figures it would close is an out-of-order paste, not a
    restart. The figures, ranks and conditions are those of the last start-up that has figures;
    a problem says how many there were. Conditions missing from that start-up are taken from the
    start-up before it when the split had no marker (same command line); the version and engine
    are taken from earlier start-ups in any case.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

from model.errors import ScenarioError
from model.readers.measurements import Dataset, Reader, decode_text, number

MAX_LINE = 20_000  #: longer lines are skipped (a problem says which)
MAX_JOINS = 3  #: continuation lines joined onto one line at most

#: figure keys in the order they are reported (SPEC 4.5 first, then this parser's extras)
FIGURE_KEYS = (
    "loading_weights_s",
    "model_loading_s",
    "model_loading_gib",
    "download_s",
    "dynamo_transform_s",
    "compile_s",
    "compile_cache_load_s",
    "compile_cache_hit",
    "torch_compile_total_s",
    "memory_profiling_s",
    "warmup_s",
    "graph_capture_s",
    "graph_capture_gib",
    "graphs_captured",
    "init_engine_s",
    "init_compilation_s",
    "kv_cache_gib",
    "kv_cache_tokens",
    "gpu_blocks",
    "max_concurrency",
    "max_concurrency_tokens",
    "enforce_eager",
    "stream_gib",
    "stream_s",
    "stream_gib_s",
)

#: per rank, several lines of these add up (one per compiled graph), keyed by a label
_SUMMED = ("dynamo_transform_s", "compile_s", "compile_cache_load_s")
#: integer figures
_INTS = ("kv_cache_tokens", "gpu_blocks", "max_concurrency_tokens", "graphs_captured")
#: figures that mark a rank as a worker that loaded weights or captured graphs
_RANK_KEYS = ("loading_weights_s", "model_loading_s", "model_loading_gib", "stream_s")

_NO_TIMING = (
    "no vLLM start-up timing line found (looked for 'Loading weights took', 'Model loading took', "
    "'Loading model weights took', 'Dynamo bytecode transform time', 'Compiling a graph for … "
    "takes', 'torch.compile takes/took … in total', 'Memory profiling takes', 'Graph capturing "
    "finished in', 'init engine (profile, create kv cache, warmup model) took', 'GPU KV cache "
    "size', '# GPU blocks', 'Overall time to stream', 'Compilation finished in' (TPU)); accepted "
    "is the text of a vLLM server or LLM() start-up log"
)

# ---------------------------------------------------------------------------------------------
# Cleaning: bounded, anchored patterns only

_ANSI = re.compile(
    r"\x1b\[[0-?]{0,32}[ -/]{0,8}[@-~]"  # CSI (colours, cursor moves)
    r"|\x1b\][^\x07\x1b\n]{0,512}(?:\x07|\x1b\\)?"  # OSC (titles, links)
    r"|\x1b[@-Z\\-_]?"  # other escapes, a lone ESC
    r"|\^\[\[[0-?]{0,32}[ -/]{0,8}[@-~]"  # caret notation (cat -v, less): ^[[1;36m
    r"|\[(?:\d{1,3};){0,5}\d{1,3}m"  # a colour code whose ESC was lost in the paste
)
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\ufeff]")
_RAY_REPEAT = re.compile(r"\s{0,3}\[repeated \d{1,7}x across cluster\]")

_QUOTE = re.compile(r">[> \t]{0,16}")
_BORDER_L = re.compile(r"[\u2502\u2503\u2551|][ \t]?")
_BORDERS = "\u2502\u2503\u2551|"
_ISO_TS = re.compile(
    r"\[?(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,]\d{1,9})?"
    r"(?:[ ]?(?:Z|UTC|[+-]\d{2}:?\d{2}))?\]?(?:[ \t]{1,8}|$)"
)
_TIME_ONLY = re.compile(r"\[?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\]?[ \t]{1,8}")
_JOURNAL = re.compile(
    r"[A-Z][a-z]{2}[ ]{1,2}\d{1,2} \d{2}:\d{2}:\d{2} [\w.-]{1,100} [\w.@/-]{1,100}"
    r"(?:\[\d{1,10}\])?:[ \t]"
)
_POD = re.compile(r"\[(?:pod|deployment|statefulset|job|daemonset|replicaset)/[^\]\s]{1,200}\]\s?")
_COMPOSE = re.compile(r"[\w.-]{1,100}(?:[ ]{1,3}[\w.-]{1,100})?[ \t]{1,40}\|[ \t]?")
_PROC = re.compile(
    r"\((?:([A-Za-z_][\w .:=-]{0,80}?)[ ]{1,3})?pid=(\d{1,10})(?:,[ ]{0,3}ip=[^)\s]{1,64})?\)[ \t]?"
)
_HEADER = re.compile(
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ \t]{1,3}(?:\d{4}-)?(\d{2})-(\d{2})[ \t]{1,3}"
    r"(\d{2}):(\d{2}):(\d{2})(?:[.,]\d{1,6})?[ \t]{1,3}"
    r"(?:\[?([\w./-]{1,200}?):\d{1,6}\]?:?[ \t]?)?"
)
_HEADER_NODATE = re.compile(
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ \t]{1,3}\[?([\w./-]{1,200}?):\d{1,6}\]?:?[ \t]"
)
_LEVEL = re.compile(r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::|[ \t])")
#: vLLM's own record header anywhere in a line (after an unknown prefix, or several records on one
#: line when a paste lost its newlines)
_HEADER_AT = re.compile(
    r"(?<![\w])(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ \t]{1,3}(?:\d{4}-)?\d{2}-\d{2}[ \t]{1,3}"
    r"\d{2}:\d{2}:\d{2}"
)
_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL")
_FENCE = re.compile(r"(?:```|~~~)")
_FENCE_TAG = re.compile(r"(?:```|~~~)[\w+.-]{0,20}(?:[ \t]|$)")
PREFIX_SPAN = 400  #: how far into a line an unknown prefix may push vLLM's own header

_GENERIC_WORKERS = ("vllmworkerprocess", "rayworker")


@dataclass
class _Row:
    """One cleaned line: the message, who printed it and where."""

    no: int  # 1-based line number in the text
    msg: str
    rank: str  # the process prefix ("EngineCore_DP0 pid=441"), "" when none
    role: str  # the process across restarts ("EngineCore_DP0"; the pid for generic workers)
    prefixed: bool  # the line started with a log prefix (not a hard-wrap continuation)
    ts: tuple | None  # ("vllm"|"iso", month, day, h, m, s) of the line, when it shows one


def _clean(raw: str, no: int) -> list[_Row]:
    """The records of one line without their noise: none for a blank line or a code fence, one
    as a rule, several when a paste lost its newlines (see :func:`_records`)."""
    s = raw
    if "\x1b" in s or "[" in s:
        s = _ANSI.sub("", s)
    s = _CTRL.sub("", s).replace("\t", " ").replace("\xa0", " ")
    if not s.strip():
        return []
    if _FENCE.match(s.lstrip()):
        m = _FENCE_TAG.match(s.lstrip())
        rest = s.lstrip()[m.end() :] if m else ""
        if not rest.strip():  # a fence, maybe with its language tag
            return []
        s = rest  # a fence glued to the text after it (newlines lost)
    s = s.replace("**", "").replace("`", "")
    rows = []
    for part in _records(s):
        row = _clean_one(part, no)
        if row is not None:
            rows.append(row)
    return rows


def _proc_start(s: str, end: int) -> int:
    """Where the process prefixes that end at ``end`` (``(EngineCore_DP0 pid=7) (Worker pid=9) ``)
    begin; ``end`` when there are none."""
    for _ in range(8):
        j = end
        while j > 0 and s[j - 1] in " \t":
            j -= 1
        if j == 0 or s[j - 1] != ")":
            return end
        k = s.rfind("(", max(0, j - 120), j)
        if k < 0:
            return end
        m = _PROC.match(s, k)
        if not m or s[m.end() : end].strip():
            return end
        end = k
    return end


def _records(s: str) -> list[str]:
    """One string per vLLM record in ``s``. A line holding vLLM's header (``INFO 09-24 20:50:58``)
    past its start holds several records when a paste lost its newlines: it is cut before each
    header (and the process prefixes right before it). A first piece that says nothing (no
    phrase) is the prefix of the record after it, not a record: it stays attached."""
    if sum(map(s.count, _LEVELS)) < 2:  # one header at most: one record (fast path)
        return [s]
    cuts = []
    for m in _HEADER_AT.finditer(s, 1):
        c = _proc_start(s, m.start())
        if c > (cuts[-1] if cuts else 0):
            cuts.append(c)
        if len(cuts) >= 64:
            break
    if not cuts:
        return [s]
    parts = [s[a:b] for a, b in zip([0, *cuts], [*cuts, len(s)], strict=True)]
    if not _PHRASES.search(parts[0].lower()):
        parts[0:2] = [parts[0] + parts[1]]
    return parts


def _clean_one(s: str, no: int) -> _Row | None:
    """The message of one record without its prefixes, or None when nothing is left."""
    prefixed = False
    name = pid = None
    ts = None
    headed = False
    for _ in range(12):
        s = s.lstrip()
        m = _QUOTE.match(s) or _BORDER_L.match(s)
        if m and m.end():
            s = s[m.end() :]
            continue
        m = _ISO_TS.match(s)
        if m:
            if ts is None:
                ts = ("iso", *(int(g) for g in m.groups()[1:6]))
            prefixed, s = True, s[m.end() :]
            continue
        m = _JOURNAL.match(s) or _POD.match(s) or _TIME_ONLY.match(s)
        if m:
            prefixed, s = True, s[m.end() :]
            continue
        m = _PROC.match(s)
        if m:
            name, pid = (m.group(1) or "").strip(), m.group(2)
            prefixed, s = True, s[m.end() :]
            continue
        m = _HEADER.match(s)
        if m:
            ts = ("vllm", *(int(g) for g in m.groups()[:5]))
            prefixed, s, headed = True, s[m.end() :], True
            break
        m = _HEADER_NODATE.match(s)
        if m:
            prefixed, s, headed = True, s[m.end() :], True
            break
        if _LEVEL.match(s):
            prefixed, headed = True, True
            break
        m = _COMPOSE.match(s)
        if m:
            prefixed, s = True, s[m.end() :]
            continue
        break
    if not headed:
        # an unknown prefix (TorchServe's "[INFO ] W-9000-model_1.0-stdout MODEL_LOG - ", a
        # "[Stage-0] " tag) before vLLM's own header: skipped, keeping the innermost process
        m = _HEADER_AT.search(s, 1, PREFIX_SPAN)
        if m and not _PHRASES.search(s[: m.start()].lower()):
            for p in _PROC.finditer(s, 0, m.start()):
                name, pid = (p.group(1) or "").strip(), p.group(2)
            h = _HEADER.match(s, m.start())
            if h:
                ts = ("vllm", *(int(g) for g in h.groups()[:5]))
                prefixed, s = True, s[h.end() :]
    s = s.rstrip()
    if s and s[-1] in _BORDERS:  # a terminal UI's right border
        s = s[:-1]
    if "repeated" in s:
        s = _RAY_REPEAT.sub("", s)
    s = s.strip()
    if pid is None:
        rank = role = ""
    else:
        rank = f"{name} pid={pid}".strip()
        generic = not name or name.lower().startswith(_GENERIC_WORKERS)
        role = rank if generic else name
    if not s and not prefixed:
        return None
    return _Row(no, s, rank, role, prefixed, ts)


# ---------------------------------------------------------------------------------------------
# Scanning one message: what it says, as hits

_V = r"(\S{1,40}?)"  # a value token, read by number() afterwards (so NaN, -3 are seen)
_SEC = r"[ ]{0,3}(?:seconds?|secs?|s)(?![A-Za-z])"
_GIB = r"[ ]{0,3}(GiB|GB|MiB|MB|TiB|TB|KiB)(?![A-Za-z])"
_SP = r"[ ]{0,3}"

_RE = {
    "loading_weights": re.compile(r"loading weights took" + _SP + _V + _SEC, re.I),
    "v0_weights": re.compile(r"loading model weights took(?: in total)?" + _SP + _V + _GIB, re.I),
    "v0_weights_s": re.compile(r"loading model weights took" + _SP + _V + _SEC, re.I),
    "model_loading_gib": re.compile(r"model loading took" + _SP + _V + _GIB, re.I),
    "model_loading_s": re.compile(
        r"(?:GiB|GB|MiB|MB)\b(?:[ ]{1,3}memory)?[ ]{1,3}and" + _SP + _V + _SEC, re.I
    ),
    "download": re.compile(
        r"time spent downloading weights for .{0,300}?:" + _SP + _V + _SEC, re.I
    ),
    "dynamo": re.compile(r"dynamo bytecode transform time:?" + _SP + _V + _SEC, re.I),
    "compile": re.compile(
        r"compiling a graph for (.{1,120}?) (?:takes|took)" + _SP + _V + _SEC, re.I
    ),
    "cache_label": re.compile(
        r"directly load(?:ed)? the compiled graph(?:\(s\)|s)? for (.{1,120}?) from the cache", re.I
    ),
    "cache_time": re.compile(r"from the cache,?" + _SP + r"took" + _SP + _V + _SEC, re.I),
    "cache_dir": re.compile(
        r"using cache directory:? \S{0,400}?rank_\d{1,4}_\d{1,4}/?(\S{0,80})", re.I
    ),
    "total": re.compile(r"torch\.compile (?:takes|took)" + _SP + _V + _SEC, re.I),
    "memprof": re.compile(r"memory profiling takes" + _SP + _V + _SEC, re.I),
    "memprof_duration": re.compile(r"duration=" + _SP + _V + _SEC, re.I),
    "total_gpu_memory": re.compile(r"total_gpu_memory[ ]{0,3}[=(]" + _SP + _V + _GIB, re.I),
    "kv_cache_size": re.compile(r"kv_cache_size=" + _SP + _V + _GIB, re.I),
    "kv_reserved": re.compile(r"reserved for kv cache is" + _SP + _V + _GIB, re.I),
    "weights_take": re.compile(r"model weights take" + _SP + _V + _GIB, re.I),
    "warmup": re.compile(r"warmup run took" + _SP + _V + _SEC, re.I),
    "capture_s": re.compile(r"graph capturing finished in" + _SP + _V + _SEC, re.I),
    "capture_gib": re.compile(r"," + _SP + r"took" + _SP + _V + _GIB, re.I),
    "bar": re.compile(
        r"(capturing[^:|\n]{0,120}?):[ ]{0,4}(\d{1,3})%[^/\n]{0,600}?(\d{1,7})/(\d{1,7})", re.I
    ),
    "init": re.compile(r"init engine\b[^)]{0,120}\)?" + _SP + r"took" + _SP + _V + _SEC, re.I),
    "init_compilation": re.compile(r"\(compilation:" + _SP + _V + _SEC, re.I),
    "kv_avail": re.compile(r"available kv cache memory:?" + _SP + _V + _GIB, re.I),
    "kv_bytes_set": re.compile(
        r"reserved" + _SP + _V + _GIB + r"[ ]{1,3}(?:of )?memory for kv cache", re.I
    ),
    "kv_cpu_set": re.compile(r"set \(" + _SP + r"([^/()\s]{1,40})/[^)]{0,40}\)" + _GIB, re.I),
    "xla_compile": re.compile(
        r"compilation (?:for ([\w -]{1,40}?) )?(?:done|finished) in (?:in )?"
        + _SP
        + _V
        + r"[ ]{0,3}\[?(?:seconds?|secs?|s)\]?(?![A-Za-z])",
        re.I,
    ),
    "platform": re.compile(r"automatically detected platform:?[ ]{1,3}([\w-]{1,20})", re.I),
    "kv_tokens": re.compile(r"gpu kv cache size:?" + _SP + _V + r"[ ]{0,3}tokens", re.I),
    "blocks": re.compile(
        r"#?[ ]{0,2}(gpu|cuda|xpu|npu|hpu|tpu|rocm)[ ]{1,2}blocks:" + _SP + _V + r"(?:,|$|\s)", re.I
    ),
    "concurrency": re.compile(
        r"maximum concurrency for"
        + _SP
        + r"([\d,]{1,15})"
        + _SP
        + r"tokens per request:"
        + _SP
        + _V
        + r"[ ]{0,3}x",
        re.I,
    ),
    "stream": re.compile(
        r"overall time to stream"
        + _SP
        + _V
        + _GIB
        + r"[^:]{0,80}:"
        + _SP
        + _V
        + _SEC
        + r"(?:"
        + _SP
        + r","
        + _SP
        + _V
        + r"[ ]{0,3}(GiB|GB|MiB|MB)/s)?",
        re.I,
    ),
    "cudagraph_none": re.compile(
        r"cudagraph_mode['\"]?[ ]{0,3}[:=][ ]{0,3}<?(?:cudagraphmode\.)?['\"]?(?:none|0)\b", re.I
    ),
    # run and version
    "engine_banner": re.compile(
        r"initializing an? (?:(v[01]) )?llm engine(?: \(v?(\d{1,3}\.[\w.+-]{1,80})\))?", re.I
    ),
    "api_version": re.compile(
        r"vllm api server version" + _SP + r"v?(\d{1,3}\.[\w.+-]{1,80})", re.I
    ),
    "vllm_version": re.compile(r"\bvllm version:?" + _SP + r"v?(\d{1,3}\.\d[\w.+-]{0,80})", re.I),
    "banner_version": re.compile(r"\bversion[ ]{1,8}v?(\d{1,3}\.\d{1,4}[\w.+-]{0,80})"),
    "banner_model": re.compile(r"\bmodel[ ]{1,8}(\S{1,300})[ ]*$"),
    "start_load": re.compile(r"starting to load model (\S{1,300}?)(?:\.{2,3})?[ ]{0,8}$", re.I),
    "max_model_len": re.compile(r"using max model len (\d{1,9})", re.I),
    "weights_format": re.compile(r"using model weights format \[?'?\*?\.?([\w]{1,20})", re.I),
    "serve": re.compile(
        r"(?:[$#>%][ ]{0,3})?(?:vllm[ ]{1,3}serve|python[\d.]{0,5}[ ]{1,3}-m[ ]{1,3}"
        r"vllm\.entrypoints\.[\w.]{1,80})\b(.{0,5000})",
        re.I,
    ),
}

#: config-line keys (``key=value`` of an engine config, ``'key': value`` of non-default args,
#: ``key=value`` of an argparse Namespace)
_CONFIG_RE = {
    "model": re.compile(
        r"(?<![\w.-])['\"]?model['\"]?[ ]{0,3}[=:][ ]{0,3}"
        r"(?:'([^']{1,300})'|\"([^\"]{1,300})\"|([^\s,'\"{}()\[\]]{1,300}))"
    ),
    "tensor_parallel_size": re.compile(r"tensor_parallel_size['\"]?[ ]{0,3}[=:][ ]{0,3}(\d{1,5})"),
    "pipeline_parallel_size": re.compile(
        r"pipeline_parallel_size['\"]?[ ]{0,3}[=:][ ]{0,3}(\d{1,5})"
    ),
    "data_parallel_size": re.compile(
        r"(?<![\w])data_parallel_size['\"]?[ ]{0,3}[=:][ ]{0,3}(\d{1,5})"
    ),
    "load_format": re.compile(
        r"load_format['\"]?[ ]{0,3}[=:][ ]{0,3}['\"]?(?:LoadFormat\.)?([\w.-]{1,40})"
    ),
    "dtype": re.compile(r"(?<![\w])dtype['\"]?[ ]{0,3}[=:][ ]{0,3}['\"]?(?:torch\.)?(\w{1,20})"),
    "gpu_memory_utilization": re.compile(
        r"gpu_memory_utilization['\"]?[ ]{0,3}[=:(][ ]{0,3}([\d.]{1,10})"
    ),
    "max_model_len": re.compile(
        r"(?<![\w])max_(?:model|seq)_len['\"]?[ ]{0,3}[=:][ ]{0,3}(\d{1,9})"
    ),
    "block_size": re.compile(r"(?<![\w])block_size['\"]?[ ]{0,3}[=:][ ]{0,3}(\d{1,5})"),
    "enforce_eager": re.compile(r"enforce_eager['\"]?[ ]{0,3}[=:][ ]{0,3}(True|False)", re.I),
    "platform": re.compile(r"device_config=['\"]?(cpu|tpu|xpu|hpu|npu|neuron)\b"),
}
_CONFIG_LINE = (
    "with config:",
    "non-default args",
    "args: namespace(",
    "engine args",
    "engineargs(",
)

_SERVE_FLAGS = {
    "model": re.compile(r"--model[= ][ ]{0,3}['\"]?([^\s'\"]{1,300})"),
    "tensor_parallel_size": re.compile(r"(?:--tensor-parallel-size|-tp)[= ][ ]{0,3}(\d{1,5})"),
    "pipeline_parallel_size": re.compile(r"(?:--pipeline-parallel-size|-pp)[= ][ ]{0,3}(\d{1,5})"),
    "data_parallel_size": re.compile(r"(?:--data-parallel-size|-dp)[= ][ ]{0,3}(\d{1,5})"),
    "load_format": re.compile(r"--load-format[= ][ ]{0,3}([\w.-]{1,40})"),
    "dtype": re.compile(r"--dtype[= ][ ]{0,3}(\w{1,20})"),
    "gpu_memory_utilization": re.compile(r"--gpu-memory-utilization[= ][ ]{0,3}([\d.]{1,10})"),
    "max_model_len": re.compile(r"--max-model-len[= ][ ]{0,3}(\d{1,9})"),
    "block_size": re.compile(r"--block-size[= ][ ]{0,3}(\d{1,5})"),
}


@dataclass
class _Hit:
    kind: str  # fig, miss, cond, flag, marker
    key: str
    raw: str = ""  # the value text as printed
    unit: str = ""
    label: str = ""
    more: dict = field(default_factory=dict)  # companion figures of the same line


def _fig(hits, key, m, group=1, unit="", label="", **more):
    hits.append(_Hit("fig", key, m.group(group), unit, label, more))


WINDOW = 400  #: characters read after a phrase (every phrase is read where it first occurs)


def _near(name: str, msg: str, i: int, before: int = 8, after: int = WINDOW):
    """Search pattern ``name`` in a window around position i (bounded work on any line)."""
    return _RE[name].search(msg, max(0, i - before), i + after)


def _scan(msg: str) -> list[_Hit]:
    """Everything one message says (figures, conditions, flags, start markers); a trigger phrase
    whose value could not be read is a ``miss``. Each phrase is read at its first occurrence,
    within :data:`WINDOW` characters, so the work per line is bounded whatever the line holds."""
    low = msg.lower()  # positions may drift by a character on exotic text; windows allow it
    hits: list[_Hit] = []
    if not _PHRASES.search(low):
        return hits

    def one(phrase, name, key, unit_group=None, what="seconds", before=8, after=WINDOW):
        i = low.find(phrase)
        if i < 0:
            return None
        m = _near(name, msg, i, before, after)
        if m:
            _fig(hits, key, m, 1, m.group(unit_group) if unit_group else "s")
        else:
            hits.append(_Hit("miss", key, msg, what))
        return m

    # weights
    one("loading weights took", "loading_weights", "loading_weights_s")
    i = low.find("loading model weights took")
    if i >= 0:  # V0: GB meaning GiB; some forks print seconds instead
        m = _near("v0_weights", msg, i)
        if m:
            _fig(hits, "model_loading_gib", m, 1, m.group(2))
        else:
            m = _near("v0_weights_s", msg, i)
            if m:
                _fig(hits, "loading_weights_s", m, 1, "s")
            else:
                hits.append(_Hit("miss", "model_loading_gib", msg, "GiB"))
    i = low.find("model loading took")
    if i >= 0:
        m = _near("model_loading_gib", msg, i)
        if m:
            _fig(hits, "model_loading_gib", m, 1, m.group(2))
            m2 = _RE["model_loading_s"].search(msg, m.start(2), m.end() + WINDOW)
            if m2:
                _fig(hits, "model_loading_s", m2, 1, "s")
            elif " and" in low[m.end() : m.end() + 40] or low.rstrip().endswith(("and", "memory")):
                hits.append(_Hit("miss", "model_loading_s", msg, "seconds"))
        else:
            hits.append(_Hit("miss", "model_loading_gib", msg, "GiB and seconds"))
    one("time spent downloading weights", "download", "download_s", after=800)
    i = low.find("overall time to stream")
    if i >= 0:
        m = _near("stream", msg, i, after=600)
        if m:
            more = {"stream_gib": (m.group(1), m.group(2))}
            if m.group(4):
                more["stream_gib_s"] = (m.group(4), m.group(5))
            hits.append(_Hit("fig", "stream_s", m.group(3), "s", "", more))
        else:
            hits.append(_Hit("miss", "stream_s", msg, "size, seconds and rate"))
    # torch.compile
    i = low.find("using cache directory")
    if i >= 0:
        m = _near("cache_dir", msg, i, after=1000)
        if m:
            hits.append(_Hit("flag", "cache_dir", m.group(1).strip("/")))
    one("dynamo bytecode transform time", "dynamo", "dynamo_transform_s")
    i = low.find("compiling a graph for")
    if i >= 0:
        m = _near("compile", msg, i)
        if m:
            _fig(hits, "compile_s", m, 2, "s", " ".join(m.group(1).lower().split()))
        elif "takes" in low[i : i + WINDOW] or "took" in low[i : i + WINDOW]:
            hits.append(_Hit("miss", "compile_s", msg, "seconds"))
    i = low.find("load the compiled graph")
    if i >= 0:
        hits.append(_Hit("flag", "compile_cache_hit", "1"))
        m = _near("cache_label", msg, i, before=24)
        label = " ".join(m.group(1).lower().split()) if m else ""
        if "took" in low[i : i + WINDOW]:
            m = _near("cache_time", msg, i, before=0)
            if m:
                _fig(hits, "compile_cache_load_s", m, 1, "s", label)
            else:
                hits.append(_Hit("miss", "compile_cache_load_s", msg, "seconds"))
    compil = "compil" in low
    if compil and "load aot compil" in low:  # 2026: the compiled model loaded from the AOT cache
        hits.append(_Hit("flag", "compile_cache_hit", "1"))
    if compil and any(p in low for p in _COMPILE_UNTIMED):  # compiled, no time printed for it
        hits.append(_Hit("flag", "compiled", "1"))
    i = low.find("compilation") if compil else -1
    if i >= 0 and (" done in " in low[i : i + 80] or " finished in " in low[i : i + 80]):
        # XLA precompilation on TPUs (tpu_model_runner.py, tpu-inference): one line per graph
        # family, summed
        m = _near("xla_compile", msg, i, before=0, after=120)
        if m:
            label = "xla " + " ".join((m.group(1) or "").lower().split())
            _fig(hits, "compile_s", m, 2, "s", label.strip())
        else:
            hits.append(_Hit("miss", "compile_s", msg, "seconds"))
    if "torch.compile take" in low or "torch.compile took" in low:
        one("torch.compile t", "total", "torch_compile_total_s")
    # memory profiling, KV cache
    one("memory profiling takes", "memprof", "memory_profiling_s")
    if "memory profiling results" in low:
        one("duration=", "memprof_duration", "memory_profiling_s")
    one("kv_cache_size=", "kv_cache_size", "kv_cache_gib", 2, "GiB")
    one("reserved for kv cache is", "kv_reserved", "kv_cache_gib", 2, "GiB")
    one("available kv cache memory", "kv_avail", "kv_cache_gib", 2, "GiB")
    kv = "for kv cache" in low
    i = low.find("memory for kv cache") if kv else -1  # kv_cache_memory_bytes set (≥0.11)
    if i >= 0 and "reserved" in low[max(0, i - 80) : i]:
        m = _RE["kv_bytes_set"].search(msg, max(0, i - 80), i + 40)
        if m:
            _fig(hits, "kv_cache_gib", m, 1, m.group(2))
    i = low.find("for kv cache on node") if kv else -1  # CPU: "Auto set (1.48/18.0) GiB for …"
    if i >= 0:
        m = _RE["kv_cpu_set"].search(msg, max(0, i - 80), i + 4)
        if m:
            _fig(hits, "kv_cache_gib", m, 1, m.group(2))
    one("gpu kv cache size", "kv_tokens", "kv_cache_tokens", None, "tokens")
    i = low.find("model weights take")
    if i >= 0:
        m = _near("weights_take", msg, i)
        if m:
            _fig(hits, "profile_weights_gib", m, 1, m.group(2))
    i = low.find("total_gpu_memory")
    if i >= 0:
        m = _near("total_gpu_memory", msg, i)
        if m:
            hits.append(_Hit("cond", "total_gpu_memory_gib", m.group(1), m.group(2)))
    i = low.find(" blocks:")
    if i >= 0 and "#" in low[max(0, i - 16) : i]:
        m = _near("blocks", msg, i, before=16, after=40)
        if m and m.group(1).lower() != "cpu":
            hits.append(_Hit("fig", "gpu_blocks", m.group(2), "", ""))
    i = low.find("maximum concurrency for")
    if i >= 0:
        m = _near("concurrency", msg, i)
        if m:
            more = {"max_concurrency_tokens": (m.group(1), "")}
            hits.append(_Hit("fig", "max_concurrency", m.group(2), "x", "", more))
        else:
            hits.append(_Hit("miss", "max_concurrency", msg, "concurrency"))
    one("warmup run took", "warmup", "warmup_s")
    # CUDA graphs
    i = low.find("graph capturing finished")
    if i >= 0:
        m = _near("capture_s", msg, i)
        if m:
            _fig(hits, "graph_capture_s", m, 1, "s")
            m2 = _RE["capture_gib"].search(msg, m.end(), m.end() + 60)
            if m2:
                _fig(hits, "graph_capture_gib", m2, 1, m2.group(2))
            elif "took" in low[m.end() : m.end() + 20]:
                hits.append(_Hit("miss", "graph_capture_gib", msg, "GiB"))
        else:
            hits.append(_Hit("miss", "graph_capture_s", msg, "seconds"))
        hits.append(_Hit("flag", "capture", "1"))
    if "%" in low:
        start = 0
        for _ in range(4):  # a line holds one bar; a few if cursor codes glued redraws together
            i = low.find("captur", start)
            if i < 0:
                break
            m = _near("bar", msg, i, before=0, after=900)
            if m:
                label = " ".join(m.group(1).lower().split())
                hits.append(_Hit("flag", "bar", m.group(3), "", label, {"total": m.group(4)}))
            start = i + 6
    if any(p in low for p in _CAPTURE_PHRASES) or (
        "cuda graph addresses" in low and "registering" in low
    ):
        hits.append(_Hit("flag", "capture", "1"))
    if any(p in low for p in _EAGER_PHRASES):
        hits.append(_Hit("flag", "eager_true", "1"))
    i = low.find("cudagraph_mode")
    if i >= 0 and _near("cudagraph_none", msg, i, before=0, after=60):
        hits.append(_Hit("flag", "eager_true", "1"))
    # init engine
    i = low.find("init engine")
    if i >= 0 and "took" in low[i : i + 300]:
        m = _near("init", msg, i, after=300)
        if m:
            _fig(hits, "init_engine_s", m, 1, "s")
            m2 = _RE["init_compilation"].search(msg, m.end(), m.end() + 80)
            if m2:
                _fig(hits, "init_compilation_s", m2, 1, "s")
        else:
            hits.append(_Hit("miss", "init_engine_s", msg, "seconds"))
    _scan_run(msg, low, hits)
    return hits


def _scan_run(msg: str, low: str, hits: list[_Hit]) -> None:
    """Start markers, version, engine and the run's conditions of one message."""
    blocks = "\u2588" in msg or "\u2580" in msg or "\u2584" in msg  # the ASCII-art banner
    i = low.find("llm engine")
    if i >= 0 and "initializ" in low[max(0, i - 40) : i]:
        m = _near("engine_banner", msg, i, before=40, after=120)
        if m:
            hits.append(_Hit("marker", "engine"))
            if m.group(1):
                hits.append(_Hit("flag", "engine", m.group(1).upper(), "explicit"))
            elif m.group(0).lower().startswith("initializing an llm"):
                hits.append(_Hit("flag", "engine", "V0", "explicit"))
            if m.group(2):
                hits.append(_Hit("cond", "vllm_version", m.group(2)))
    i = low.find("version")
    if i >= 0:
        m = None
        for phrase, name in (
            ("vllm api server version", "api_version"),
            ("vllm version", "vllm_version"),
        ):
            j = low.find(phrase)
            if j >= 0:
                m = _near(name, msg, j, after=120)
                if m:
                    break
        if m is None and blocks:
            m = _near("banner_version", msg, i, before=0, after=120)
        if m:
            hits.append(_Hit("cond", "vllm_version", m.group(1)))
            hits.append(_Hit("marker", "api"))
    if blocks and "version" not in low:
        i = low.rfind("model")
        if i >= 0:
            m = _RE["banner_model"].search(msg, max(0, i - 1))
            if m:
                hits.append(_Hit("cond", "model", m.group(1)))
    i = low.find("starting to load model")
    if i >= 0:
        m = _RE["start_load"].search(msg, max(0, i - 8))
        if m:
            hits.append(_Hit("cond", "model_loaded", m.group(1)))
    i = low.find("using max model len")
    if i >= 0:
        m = _near("max_model_len", msg, i, after=60)
        if m:
            hits.append(_Hit("cond", "max_model_len", m.group(1)))
    i = low.find("using model weights format")
    if i >= 0:
        m = _near("weights_format", msg, i, after=80)
        if m:
            hits.append(_Hit("cond", "weights_format", m.group(1).lower()))
    i = low.find("detected platform") if "platform" in low else -1
    if i >= 0:
        m = _RE["platform"].search(msg, max(0, i - 20), i + 60)
        if m:
            hits.append(_Hit("cond", "platform", m.group(1).lower()))
    i = low.find("platform plugin ") if "platform" in low else -1
    if i >= 0:
        m = _PLUGIN.search(msg, i, i + 80)
        if m:
            hits.append(_Hit("cond", "platform", m.group(1).lower()))
    if "on v1 engine" in low or "v1 engine" in low:
        hits.append(_Hit("flag", "engine", "V1", "hint"))
    if "serve" in low[:40] or "entrypoints" in low[:80]:
        m = _RE["serve"].match(msg)
        if m:
            hits.append(_Hit("marker", "serve"))
            args = m.group(1)
            if "serve" in m.group(0)[: m.start(1)].lower():
                first = args.split(None, 1)
                if first and not first[0].startswith("-"):
                    hits.append(_Hit("cond", "model", first[0].strip("'\"")))
            for key, rx in _SERVE_FLAGS.items():
                mm = rx.search(args)
                if mm:
                    hits.append(_Hit("cond", key, mm.group(1)))
            if _EAGER_FLAG.search(args):
                hits.append(_Hit("cond", "enforce_eager", "True"))
    config = any(k in low for k in _CONFIG_LINE)
    if config:
        if "non-default args" in low or "args: namespace(" in low:
            hits.append(_Hit("marker", "args"))
        for key, rx in _CONFIG_RE.items():
            mm = rx.search(msg)
            if mm:
                value = next(g for g in mm.groups() if g is not None)
                hits.append(_Hit("cond", key, value))
    elif "gpu_memory_utilization" in low:
        mm = _CONFIG_RE["gpu_memory_utilization"].search(msg)
        if mm:
            hits.append(_Hit("cond", "gpu_memory_utilization", mm.group(1)))
    # engine hints from wording that only one engine prints
    if any(p in low for p in _V0_PHRASES) or (" blocks:" in low and "# " in low):
        hits.append(_Hit("flag", "engine", "V0", "hint"))
    if "gpu kv cache size" in low or "available kv cache memory" in low:
        hits.append(_Hit("flag", "engine", "V1", "hint"))


#: every phrase :func:`_scan` reads (lower case); a message holding none says nothing
_PHRASE_WORDS = (
    "loading weights took",
    "loading model weights took",
    "model loading took",
    "downloading weights",
    "overall time to stream",
    "using cache directory",
    "dynamo bytecode",
    "compiling a graph",
    "load the compiled graph",
    "load aot compil",
    "saved aot compiled",
    "model for the compilation",
    "compilation for ",
    "compilation finished in",
    "compilation done in",
    "for kv cache",
    "detected platform",
    "platform plugin",
    "torch.compile t",
    "memory profiling",
    "kv_cache_size=",
    "available kv cache memory",
    "gpu kv cache size",
    "reserved for kv cache",
    "model weights take",
    "total_gpu_memory",
    "gpu_memory_utilization",
    " blocks:",
    "concurrency for",
    "warmup run took",
    "graph capturing",
    "cuda graph pool",
    "graph addresses",
    "for cuda graphs",
    "cudagraphs for",
    "graph is disabled",
    "graphs are disabled",
    "cudagraph is disabled",
    "skipping cuda graph",
    "cudagraph_mode",
    "init engine",
    "llm engine",
    "server version",
    "vllm version",
    "starting to load model",
    "max model len",
    "model weights format",
    "v1 engine",
    "vllm serve",
    "vllm.entrypoints",
    "with config:",
    "args: namespace",
    "non-default args",
    "engine args",
    "engineargs(",
    "\u2588",
    "\u2580",
    "\u2584",
)
#: what the whole text is searched for (with str.find): the phrases, and the words a hard wrap
#: leaves on the line of a phrase it cut in two
_GATE_WORDS = (*_PHRASE_WORDS, "took", "takes", "secs", "seconds", "gib", "capturing")


def _trie(words) -> str:
    """One regular expression matching any of ``words`` (literals), factored by prefix so the
    engine tries a handful of branches per position instead of every word."""
    root: dict = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        if "" in node:  # a shorter phrase is complete: longer ones add nothing to a search
            return ""
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(node)]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root)


_PHRASES = re.compile(_trie(_PHRASE_WORDS) + r"|capturing[^%\n]{0,160}%")
#: what a log from a platform other than CUDA or ROCm lacks
_PLATFORM_NOTE = {
    "cpu": "a CPU-backend log: vLLM captures no CUDA graphs on CPU and prints no compile time "
    "(the model compiles during 'Warming up model for the compilation')",
    "tpu": "a TPU-backend log: TPUs capture no CUDA graphs; XLA precompiles each shape "
    "('Compilation finished in … [secs]')",
}
#: lines that show the model was compiled without printing how long it took
_COMPILE_UNTIMED = (
    "saved aot compiled function",
    "warming up model for the compilation",
)
_PLUGIN = re.compile(r"platform plugin ([\w-]{1,20}) is activated", re.I)
_CAPTURE_PHRASES = (
    "capturing the model for cuda graphs",
    "capturing cudagraphs for decoding",
    "cuda graph pool memory",
)
_EAGER_PHRASES = (
    "cudagraph is disabled",
    "cuda graph is disabled",
    "cuda graphs are disabled",
    "skipping cuda graph capture",
)
_V0_PHRASES = (
    "loading model weights took",
    "capturing the model for cuda graphs",
    "capturing cudagraphs for decoding",
    "memory profiling takes",
    "memory profiling results",
)
_EAGER_FLAG = re.compile(r"--enforce[-_]eager\b(?![= ]{1,3}(?:false|0)\b)", re.I)


def _score(hits: list[_Hit]) -> int:
    return sum(1 + len(h.more) for h in hits if h.kind in ("fig", "cond"))


# ---------------------------------------------------------------------------------------------
# Start-ups


@dataclass
class _Start:
    """What one server start-up printed."""

    first_line: int
    by: str  # "begin", "marker" or "repeat"
    best: dict = field(default_factory=dict)  # key -> (value, line, more)
    summed: dict = field(default_factory=dict)  # key -> rank -> label -> value
    bars: dict = field(default_factory=dict)  # rank -> label -> (n, total, line)
    seen: dict = field(default_factory=dict)  # role -> set of figure ids
    init_roles: set = field(default_factory=set)
    init_ts: tuple | None = None
    last_ts: tuple | None = None
    ranks: set = field(default_factory=set)
    conditions: dict = field(default_factory=dict)
    cache_dir: dict = field(default_factory=dict)  # rank -> current cache sub-directory
    eager_said: int = 0  # line saying graphs are disabled
    capture_seen: int = 0  # line showing graph capture
    engine_votes: dict = field(default_factory=dict)
    engine_explicit: str | None = None
    cache_hit: bool = False
    compiled_untimed: int = 0  # line showing the model was compiled, with no time printed
    totals: dict = field(default_factory=dict)  # rank -> its "torch.compile takes … in total"
    procs: set = field(default_factory=set)  # every process prefix that printed a matched line
    streams: list = field(default_factory=list)  # (line, rank, GiB, s) of each streamer line

    @property
    def has_figures(self) -> bool:
        return bool(self.best or self.summed or self.bars or self.cache_hit)


def _earlier(a: tuple | None, b: tuple | None) -> bool:
    """Whether timestamp a is before b (only comparable when both are of the same clock)."""
    return a is not None and b is not None and a[0] == b[0] and a[1:] < b[1:]


class _Parser:
    def __init__(self, ds: Dataset):
        self.ds = ds
        self.starts: list[_Start] = [_Start(1, "begin")]
        self.lines_matched = 0
        self.gb_line = 0

    @property
    def cur(self) -> _Start:
        return self.starts[-1]

    def _new_start(self, row: _Row, by: str) -> _Start:
        prev = self.cur
        st = _Start(row.no, by)
        if by == "repeat":  # same command line: carry what it said about the run
            st.conditions = dict(prev.conditions)
            st.engine_explicit = prev.engine_explicit
            if prev.eager_said:
                st.eager_said = prev.eager_said
        self.starts.append(st)
        return st

    # --- one row ------------------------------------------------------------------------------

    def apply(self, row: _Row, hits: list[_Hit]) -> None:
        st = self.cur
        markers = [h for h in hits if h.kind == "marker"]
        if markers and st.has_figures:
            main_like = (
                row.role == ""
                or row.role.lower().startswith("apiserver")
                or any(h.key == "serve" for h in markers)
            )
            if (main_like or st.seen.get(row.role)) and not _earlier(row.ts, st.last_ts):
                st = self._new_start(row, "marker")
        figs = [h for h in hits if h.kind == "fig"]
        if figs and st.init_roles:
            ids = {self._fig_id(h, row) for h in figs}
            again = ids & st.seen.get(row.role, set()) or row.role in st.init_roles
            if again and not _earlier(row.ts, st.init_ts):
                st = self._new_start(row, "repeat")
        matched = False
        for h in hits:
            if h.kind == "fig":
                matched |= self._figure(st, row, h)
            elif h.kind == "miss":
                self._miss(row, h)
            elif h.kind == "cond":
                self._condition(st, row, h)
            elif h.kind == "flag":
                matched |= self._flag(st, row, h)
        if matched:
            st.procs.add(row.rank)
            self.lines_matched += 1
            if row.ts is not None and (st.last_ts is None or _earlier(st.last_ts, row.ts)):
                st.last_ts = row.ts

    def _fig_id(self, h: _Hit, row: _Row) -> str:
        if h.key in _SUMMED:
            return f"{h.key}|{self.cur.cache_dir.get(row.rank, '')}|{h.label}"
        return h.key

    def _value(self, row: _Row, key: str, raw: str, unit: str) -> float | None:
        """A figure's value in seconds / GiB / count, or None with a problem."""
        text = raw.strip().rstrip(".,;:")
        v = number(text)
        where = f"line {row.no}"
        if v is None:
            self.ds.problem(where, f"{key}: the value '{raw[:40]}' is not a number; line ignored")
            return None
        if v < 0:
            self.ds.problem(
                where, f"{key}: a negative value ({text}) is not a measurement; ignored"
            )
            return None
        u = unit.lower()
        if u in ("gb", "tb", "mb") and key not in ("stream_gib", "stream_gib_s"):
            if not self.gb_line:
                self.gb_line = row.no
        if u in ("mib", "mb"):
            v /= 1024.0
        elif u in ("tib", "tb"):
            v *= 1024.0
        elif u == "kib":
            v /= 1024.0 * 1024.0
        limit = 1e6 if key.endswith("_s") else 1e5 if key.endswith(("_gib", "_gib_s")) else 1e12
        if v > limit or not math.isfinite(v):
            self.ds.problem(where, f"{key}: {text} {unit} is not a plausible value; ignored")
            return None
        return float(v)

    def _figure(self, st: _Start, row: _Row, h: _Hit) -> bool:
        v = self._value(row, h.key, h.raw, h.unit)
        if v is None:
            return False
        more = {}
        for k, (raw, unit) in h.more.items():
            mv = self._value(row, k, raw, unit)
            if mv is not None:
                more[k] = mv
        fid = self._fig_id(h, row)
        st.seen.setdefault(row.role, set()).add(fid)
        if h.key in _RANK_KEYS:
            st.ranks.add(row.rank)
        if h.key == "init_engine_s":
            st.init_roles.add(row.role)
            if row.ts is not None and (st.init_ts is None or _earlier(row.ts, st.init_ts)):
                st.init_ts = row.ts
        if h.key in _SUMMED:
            label = f"{st.cache_dir.get(row.rank, '')}|{h.label}"
            per = st.summed.setdefault(h.key, {}).setdefault(row.rank, {})
            if h.label.startswith("xla"):  # each XLA line is a graph family of its own
                label = f"{label} #{sum(1 for k in per if k.startswith(label))}"
            per[label] = max(per.get(label, 0.0), v)
            return True
        if h.key == "torch_compile_total_s":
            st.totals[row.rank] = max(st.totals.get(row.rank, 0.0), v)
        if h.key == "stream_s":
            st.streams.append((row.no, row.rank, more.get("stream_gib"), v))
        old = st.best.get(h.key)
        if old is None or v > old[0]:
            st.best[h.key] = (v, row.no, more)
        return True

    def _miss(self, row: _Row, h: _Hit) -> None:
        snippet = h.raw if len(h.raw) <= 120 else h.raw[:117] + "…"
        self.ds.problem(
            f"line {row.no}",
            f"looks like a {h.key} line but no {h.unit} could be read (cut or reformatted?): "
            f"'{snippet}'",
        )

    def _condition(self, st: _Start, row: _Row, h: _Hit) -> None:
        key, raw = h.key, h.raw.strip().strip("'\"")
        if not raw:
            return
        c = st.conditions
        if key in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
            v = number(raw)
            if v is not None and v >= 1 and v == int(v):
                c[key] = int(v)
        elif key in ("max_model_len", "block_size"):
            v = number(raw)
            if v is not None and v >= 1 and v == int(v):
                c.setdefault(key, int(v))
        elif key == "gpu_memory_utilization":
            v = number(raw.rstrip("."))
            if v is not None and 0 < v <= 1:
                c[key] = v
        elif key == "total_gpu_memory_gib":
            v = self._value(row, key, h.raw, h.unit)
            if v is not None:
                c[key] = v
        elif key == "enforce_eager":
            if raw.lower() == "true":
                st.eager_said = st.eager_said or row.no
            else:
                c.setdefault("_eager_config_false", row.no)
        elif key == "load_format":
            c[key] = raw.lower()
        elif key == "dtype":
            if raw.lower() not in ("none", "auto") or key not in c:
                c[key] = raw.lower()
        elif key == "model_loaded":
            c.setdefault("_model_loaded", raw)
        elif key == "model":
            if raw.lower() not in ("none", "null"):
                c[key] = raw
        elif key == "vllm_version":
            c.setdefault(key, raw.lstrip("vV").rstrip(".,"))
        else:
            c[key] = raw

    def _flag(self, st: _Start, row: _Row, h: _Hit) -> bool:
        if h.key == "cache_dir":
            st.cache_dir[row.rank] = h.raw
        elif h.key == "compile_cache_hit":
            st.cache_hit = True
            return True
        elif h.key == "capture":
            st.capture_seen = st.capture_seen or row.no
            st.ranks.add(row.rank)
        elif h.key == "eager_true":
            st.eager_said = st.eager_said or row.no
        elif h.key == "compiled":
            st.compiled_untimed = st.compiled_untimed or row.no
        elif h.key == "bar":
            n, total = int(h.raw), int(h.more["total"])
            per = st.bars.setdefault(row.rank, {})
            old = per.get(h.label)
            if old is None or n > old[0]:
                per[h.label] = (n, total, row.no)
            st.capture_seen = st.capture_seen or row.no
            return True
        elif h.key == "engine":
            if h.unit == "explicit":
                st.engine_explicit = h.raw
            else:
                st.engine_votes[h.raw] = st.engine_votes.get(h.raw, 0) + 1
        return False

    # --- the result ---------------------------------------------------------------------------

    def result(self) -> tuple[dict, dict, dict]:
        with_figs = [s for s in self.starts if s.has_figures]
        if not with_figs:
            platform = next(
                (s.conditions["platform"] for s in self.starts if "platform" in s.conditions), ""
            )
            why = _PLATFORM_NOTE.get(platform, "")
            why = f" ({why})" if why else ""
            if self.ds.problems:
                raise ScenarioError(
                    self.ds.name,
                    f"no usable vLLM start-up timing value ({self.ds.problems[0]}){why}; accepted "
                    "is the text of a vLLM server or LLM() start-up log",
                )
            text, accepted = _NO_TIMING.split("; ", 1)
            raise ScenarioError(self.ds.name, f"{text}{why}; {accepted}")
        st = with_figs[-1]
        n = len(with_figs)
        if n > 1:
            lines = ", ".join(str(s.first_line) for s in with_figs)
            self.ds.problem(
                "",
                f"{n} start-ups in this log (starting at lines {lines}); figures are of the last "
                f"one (from line {st.first_line})",
            )
        if self.starts[-1] is not st and not self.starts[-1].has_figures:
            self.ds.problem(
                f"line {self.starts[-1].first_line}",
                "a later start-up begins here but printed no timing line; figures are of the one "
                "before it",
            )
        if self.gb_line:
            self.ds.problem(
                f"line {self.gb_line}",
                "'GB' in this vLLM version means GiB (the value is 2^30 bytes); reported as GiB",
            )
        figures = self._figures(st)
        conditions = self._conditions(st, figures)
        platform = conditions.get("platform", "")
        xla = sum(
            1
            for per in st.summed.get("compile_s", {}).values()
            for label in per
            if label.split("|", 1)[-1].startswith("xla")
        )
        if platform in _PLATFORM_NOTE and not xla:
            self.ds.problem("", f"{_PLATFORM_NOTE[platform]}; figures are partial")
        if xla:
            self.ds.problem(
                "",
                "compile_s is the XLA precompilation of the TPU backend ('Compilation finished "
                "in … [secs]', summed); TPUs capture no CUDA graphs",
            )
        info = {
            "start": st,
            "count": n,
            "compiled_untimed": st.compiled_untimed,
            "compile_parts_s": self._parts_over_total(st),
            "xla": bool(xla),
        }
        return figures, conditions, info

    @staticmethod
    def _parts_over_total(st: _Start) -> float | None:
        """The compile time of the rank whose "torch.compile takes … in total" leaves out its
        cache load (vLLM ≤0.10 adds only the Dynamo and compile times to that total): Dynamo +
        compile + cache load of the rank, the largest over such ranks; None when no total does."""
        loads = st.summed.get("compile_cache_load_s", {})
        best = None
        for rank, total in st.totals.items():
            load = sum(loads.get(rank, {}).values())
            if not load:
                continue
            dynamo = sum(st.summed.get("dynamo_transform_s", {}).get(rank, {}).values())
            compiled = sum(st.summed.get("compile_s", {}).get(rank, {}).values())
            parts = dynamo + compiled + load
            if total < dynamo + load - 0.05:
                best = max(best or 0.0, round(parts, 6))
        return best

    def _figures(self, st: _Start) -> dict:
        f: dict = {}
        for key, (v, _line, more) in st.best.items():
            f[key] = v
            f.update(more)
        self._stream_note(st)
        for key, per_rank in st.summed.items():
            f[key] = round(max(sum(labels.values()) for labels in per_rank.values()), 6)
        if "model_loading_gib" not in f and "profile_weights_gib" in f:
            f["model_loading_gib"] = f["profile_weights_gib"]
        f.pop("profile_weights_gib", None)
        if st.cache_hit:
            f["compile_cache_hit"] = True
        if st.bars:
            best = 0
            for labels in st.bars.values():
                best = max(best, sum(n for n, _t, _l in labels.values()))
                for label, (n, total, line) in labels.items():
                    if n < total:
                        self.ds.problem(
                            f"line {line}",
                            f"the capture bar '{label}' stops at {n}/{total} (excerpt cut?); "
                            f"{n} counted",
                        )
            if best > 0:
                f["graphs_captured"] = best
        if st.capture_seen or "graph_capture_s" in f:
            if st.eager_said:
                self.ds.problem(
                    f"line {st.eager_said}",
                    f"says CUDA graphs are disabled, but line {st.capture_seen} shows graph "
                    "capture; enforce_eager is reported false",
                )
            f["enforce_eager"] = False
        elif st.eager_said:
            f["enforce_eager"] = True
        elif "_eager_config_false" in st.conditions:
            f["enforce_eager"] = False
        blocks = f.get("gpu_blocks")
        bs = st.conditions.get("block_size")
        if blocks is not None and bs and "kv_cache_tokens" not in f:
            f["kv_cache_tokens"] = blocks * bs
        for k in _INTS:
            if k in f:
                f[k] = int(round(f[k]))
        order = {k: i for i, k in enumerate(FIGURE_KEYS)}
        return dict(sorted(f.items(), key=lambda kv: order.get(kv[0], len(order))))

    def _stream_note(self, st: _Start) -> None:
        """Streamer lines of one start that are not one model's shards (one rank streaming
        twice, or sizes more than 25 % apart: a draft model, an encoder, a reload): the
        figures keep the longest, and a note says which lines were left out of them."""
        if len(st.streams) < 2 or "stream_s" not in st.best:
            return
        sizes = [g for _n, _r, g, _s in st.streams if g]
        ranks = [r for _n, r, _g, _s in st.streams]
        apart = bool(sizes) and max(sizes) > 1.25 * min(sizes)
        if not apart and len(set(ranks)) == len(ranks):
            return  # one line per rank, of one size: the shards of one model
        kept = st.best["stream_s"][1]

        def said(n, g, s):
            return f"line {n}: {g:,.3g} GiB in {s:,.3g} s" if g else f"line {n}: {s:,.3g} s"

        others = [said(n, g, s) for n, _r, g, s in st.streams if n != kept]
        kept_text = next(said(n, g, s) for n, _r, g, s in st.streams if n == kept)
        more = "" if len(others) <= 3 else f" and {len(others) - 3} more"
        note = (
            f"{len(st.streams)} Run:ai streamer lines in one start do not read as one model's "
            f"shards: the figures keep the longest ({kept_text}) and leave out "
            f"{'; '.join(others[:3])}{more}; another model (a draft or an encoder) or a reload "
            "may have streamed too"
        )
        notes = self.ds.extra.setdefault("notes", [])
        if note not in notes:
            notes.append(note)

    def _conditions(self, st: _Start, figures: dict) -> dict:
        c = dict(st.conditions)
        earlier = [s for s in self.starts if s is not st and s.first_line < st.first_line]
        for s in reversed(earlier):
            for key in ("vllm_version", "platform"):
                if key not in c and key in s.conditions:
                    c[key] = s.conditions[key]
        if "model" not in c and "_model_loaded" in c:
            c["model"] = c["_model_loaded"]
        engine = st.engine_explicit
        if engine is None:
            for s in reversed(earlier):
                engine = engine or s.engine_explicit
        if engine is None:
            procs = [r.lower() for r in st.procs | st.ranks]
            if any(r.startswith(("enginecore", "worker_", "vllmworker ")) for r in procs):
                st.engine_votes["V1"] = st.engine_votes.get("V1", 0) + 2
            if any(r.startswith("vllmworkerprocess") for r in procs):
                st.engine_votes["V0"] = st.engine_votes.get("V0", 0) + 2
            v0, v1 = st.engine_votes.get("V0", 0), st.engine_votes.get("V1", 0)
            if v0 != v1:
                engine = "V0" if v0 > v1 else "V1"
        version = c.get("vllm_version")
        if engine is None and version:
            parts = re.match(r"(\d+)\.(\d+)", version)
            if parts:
                mm = (int(parts.group(1)), int(parts.group(2)))
                engine = "V0" if mm < (0, 8) else "V1" if mm >= (0, 11) else None
        if engine:
            c["engine"] = engine
        tp = c.get("tensor_parallel_size")
        if tp or c.get("pipeline_parallel_size") or c.get("data_parallel_size"):
            c["gpus"] = (
                (tp or 1) * c.get("pipeline_parallel_size", 1) * c.get("data_parallel_size", 1)
            )
        elif st.ranks:
            # only the ranks the excerpt shows: the server may have more (7 of 8 logged)
            c["gpus"] = len(st.ranks)
            notes = self.ds.extra.setdefault("notes", [])
            note = (
                f"gpus: at least {len(st.ranks)}: the log shows {len(st.ranks)} ranks and states "
                "no tensor-, pipeline- or data-parallel size, so an excerpt may miss some"
            )
            if len(st.ranks) > 1 and note not in notes:
                notes.append(note)
        order = (
            "model",
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
            "gpus",
            "platform",
            "load_format",
            "weights_format",
            "dtype",
            "gpu_memory_utilization",
            "total_gpu_memory_gib",
            "max_model_len",
            "block_size",
            "engine",
            "vllm_version",
        )
        return {k: c[k] for k in order if k in c}


# ---------------------------------------------------------------------------------------------
# The text


def _lines_to_read(text: str) -> list[int]:
    """Indices of the lines that hold a phrase or a word of :data:`_GATE_WORDS` (searched in the
    lower-cased text without colour codes or markdown), with the line before (a wrap may cut a
    phrase in two) and up to :data:`MAX_JOINS` lines after (continuations). Plain ``str.find``
    over the whole text: a 5 MB log is scanned in well under a second."""
    low = _ANSI.sub("", text).replace("`", "").replace("**", "").lower()  # keeps every newline
    starts = [0, *accumulate(len(line) + 1 for line in low.split("\n"))]
    n = len(starts) - 1
    hit: set[int] = set()
    find = low.find
    for word in _GATE_WORDS:
        i = find(word)
        while i >= 0:
            hit.add(bisect_right(starts, i) - 1)
            end = find("\n", i)
            if end < 0:
                break
            i = find(word, end + 1)
    want: set[int] = set()
    for k in hit:
        want.update(range(max(0, k - 1), min(n, k + MAX_JOINS + 1)))
    return sorted(want)


def _normalise(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[1:] if text.startswith("\ufeff") else text


def parse_log(text: str, name: str = "log") -> Dataset:
    """The start-up figures of a vLLM log (see the module docstring), or a
    :class:`ScenarioError` keyed by ``name`` when it holds no timing line."""
    if not isinstance(text, str):
        raise ScenarioError(name, "not text; accepted is the text of a vLLM start-up log")
    if not text.strip():
        raise ScenarioError(name, "the log is empty; " + _NO_TIMING.split("; ", 1)[1])
    ds = Dataset(name=name, format="vllm_log", kind="startup_log")
    text = _normalise(text)
    lines = text.split("\n")
    parser = _Parser(ds)
    too_long = set()
    if max(map(len, lines)) > MAX_LINE:
        too_long = {i for i, line in enumerate(lines) if len(line) > MAX_LINE}
        for i in sorted(too_long):
            ds.problem(
                f"line {i + 1}",
                f"{len(lines[i]):,} characters long (more than {MAX_LINE:,}); skipped",
            )
    rows: list[_Row] = []
    for i in _lines_to_read(text):
        if i in too_long:
            continue
        raw = lines[i]
        rows.extend(_clean(raw, i + 1))
    _read_rows(rows, parser)
    figures, conditions, info = parser.result()
    st = info["start"]
    ds.figures = figures
    ds.conditions = conditions
    notes = ds.extra.get("notes", [])
    ds.extra = {
        "items": _items(
            figures,
            ds,
            conditions.get("engine"),
            info["compiled_untimed"],
            info["compile_parts_s"],
            info["xla"],
        ),
        "version": conditions.get("vllm_version"),
        "ranks": max(1, len(st.ranks)),
        "lines_matched": parser.lines_matched,
        "start_ups": info["count"],
        **({"notes": notes} if notes else {}),
    }
    return ds


def _may_continue(msg: str, hits: list[_Hit], nxt: str) -> bool:
    """Whether ``nxt`` (a line without a log prefix) may be the rest of ``msg``: the message has
    a phrase whose value was not read, or it read something and ``nxt`` does not start like a
    message of its own (capital letter, bracket, prompt), or a phrase spans the break."""
    if any(h.kind == "miss" for h in hits):
        return True
    if nxt[0] not in _STARTS and any(h.kind in ("fig", "cond", "marker") for h in hits):
        return True
    if nxt[0] in _STARTS:
        return False
    tail = msg[-40:].lower()
    for sep in ("", " "):
        m = _PHRASES.search(tail + sep + nxt[:40].lower())
        if m and m.start() < len(tail) < m.end():
            return True
    return False


_STARTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ([{$#")


def _read_rows(rows: list[_Row], parser: _Parser) -> None:
    """Scan the rows in order, joining hard-wrapped continuations (see the module docstring):
    a row without a log prefix that directly follows is joined when the joined text reads more
    than the two apart, for at most :data:`MAX_JOINS` rows and :data:`MAX_LINE` characters."""
    cache: dict[int, list[_Hit]] = {}

    def scan(k: int) -> list[_Hit]:
        if k not in cache:
            cache.clear()  # only the current row and the next are ever asked twice
            cache[k] = _scan(rows[k].msg) if rows[k].msg else []
        return cache[k]

    i = 0
    n = len(rows)
    while i < n:
        row = rows[i]
        hits = scan(i)
        j = i + 1
        joins = 0
        while (
            joins < MAX_JOINS
            and j < n
            and rows[j].no == rows[j - 1].no + 1
            and not rows[j].prefixed
            and rows[j].msg
            and len(row.msg) + len(rows[j].msg) < MAX_LINE
        ):
            nxt = rows[j]
            if not _may_continue(row.msg, hits, nxt.msg):
                break
            base = _score(hits) + _score(scan(j))
            joined = None
            for sep in ("", " "):
                text = row.msg + sep + nxt.msg
                jhits = _scan(text)
                if _score(jhits) > base:
                    joined = (text, jhits)
                    break
            if joined is None:
                break
            row = _Row(row.no, joined[0], row.rank, row.role, row.prefixed, row.ts)
            hits = joined[1]
            j += 1
            joins += 1
        parser.apply(row, hits)
        i = j


def parse_log_bytes(name: str, data: bytes) -> Dataset:
    """:func:`parse_log` of an uploaded file's bytes (decoded by
    :func:`~model.readers.measurements.decode_text`: size-limited, binary refused)."""
    return parse_log(decode_text(name, data), name)


# ---------------------------------------------------------------------------------------------
# Cold-start line items (SPEC 4.3)


def _items(
    f: dict,
    ds: Dataset,
    engine: str | None = None,
    compiled_untimed: int = 0,
    parts_s: float | None = None,
    xla: bool = False,
) -> dict:
    """Items 4 (weights) and 5 (compile + capture) as far as the figures support them.

    Item 4 is ``model_loading_s``, else ``loading_weights_s``, else ``stream_s``. Item 5's compile
    part is ``torch_compile_total_s``, else the sum of ``dynamo_transform_s``, ``compile_s`` and
    ``compile_cache_load_s``, else ``init_compilation_s``; its capture part ``graph_capture_s``.
    ``parts_s`` replaces the total when a rank's total leaves out its cache load (vLLM ≤0.10:
    "torch.compile takes 3.70 s in total" after "… from the cache, took 5.920 s").
    With graphs disabled (``enforce_eager``) a missing part is 0: eager mode captures nothing and
    compiles nothing unless asked to, and unless the log shows a compile it did not time
    (``compiled_untimed``, the line: CPU's "Warming up model for the compilation", "saved AOT
    compiled function"). On TPUs (``xla``: the compile part is XLA's precompilation) the capture
    part is 0. A part the log lacks is named in a problem."""
    items: dict = {}
    for key in ("model_loading_s", "loading_weights_s", "stream_s"):
        if key in f:
            items["item4_s"] = f[key]
            break
    eager = f.get("enforce_eager") is True
    compile_s = None
    if "torch_compile_total_s" in f:
        compile_s = f["torch_compile_total_s"]
        if parts_s is not None and parts_s > compile_s:
            ds.problem(
                "",
                f"'torch.compile takes {compile_s:g} s in total' leaves out the load of the "
                "compiled graphs from the cache (vLLM ≤0.10 counts only Dynamo and compile time "
                f"in it): item 5's compile part is Dynamo + compile + cache load, {parts_s:g} s",
            )
            compile_s = parts_s
    else:
        parts = [
            f[k] for k in ("dynamo_transform_s", "compile_s", "compile_cache_load_s") if k in f
        ]
        if parts:
            compile_s = round(sum(parts), 6)
            if "dynamo_transform_s" in f and not (
                "compile_s" in f or "compile_cache_load_s" in f or f.get("compile_cache_hit")
            ):
                ds.problem(
                    "",
                    "item 5's compile part is the Dynamo transform alone: no 'Compiling a graph' "
                    "or 'Directly load the compiled graph' line, so Inductor's time is missing",
                )
            elif "dynamo_transform_s" not in f and not xla:
                ds.problem(
                    "",
                    "item 5's compile part lacks the Dynamo transform time (no 'Dynamo bytecode "
                    "transform time' line)",
                )
        elif "init_compilation_s" in f:
            compile_s = f["init_compilation_s"]
    capture_s = f.get("graph_capture_s")
    if xla and capture_s is None:
        capture_s = 0.0
    if eager:
        if capture_s is None:
            capture_s = 0.0
        if compile_s is None and compiled_untimed:
            ds.problem(
                f"line {compiled_untimed}",
                "the model was compiled here but vLLM printed no compile time: item 5 lacks its "
                "compile part",
            )
            items["item5_s"] = capture_s
            items["item5_capture_s"] = capture_s
            return items
        if compile_s is None:
            compile_s = 0.0
            ds.problem(
                "",
                "item 5 taken as 0: CUDA graphs are disabled (enforce_eager) and the log shows no "
                "torch.compile line",
            )
    if compile_s is None and capture_s is None:
        return items
    if compile_s is None:
        why = "; a V0 engine compiles nothing unless run with -O3" if engine == "V0" else ""
        ds.problem(
            "",
            "item 5 is the graph capture alone: the log has no torch.compile time ('torch.compile "
            f"takes … in total', 'Dynamo bytecode transform time'){why}",
        )
    if capture_s is None:
        ds.problem(
            "",
            "item 5 is the compile time alone: the log has no 'Graph capturing finished in' line",
        )
    items["item5_s"] = round((compile_s or 0.0) + (capture_s or 0.0), 6)
    if compile_s is not None:
        items["item5_compile_s"] = compile_s
    if capture_s is not None:
        items["item5_capture_s"] = capture_s
    return items


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="vllm_log",
        stage="log",
        order=10,
        formats=("vllm_log",),
        recognise=lambda text: True,
        read=lambda name, text: parse_log(text, name),
        accepted="vLLM start-up logs",
        shown=20,
    ),
)
