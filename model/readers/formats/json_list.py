"""A JSON array of benchmark results (a sweep's result files collected into one, ``vllm bench
sweep``'s summary.json): one row per object, each read as the reader of its own format reads it
(:mod:`~model.readers.formats.serve_json`, :mod:`~model.readers.formats.genai_perf`)."""

from __future__ import annotations

from model.errors import ScenarioError
from model.readers.formats.common import MAX_RUNS, _multi_run, _refuse, _Run
from model.readers.formats.genai_perf import _genai_json, _is_gp_json
from model.readers.formats.serve_json import _VLLM_ACCEPTED, _is_vllm, _vllm_object
from model.readers.measurements import Dataset, Reader


def _vllm_json_list(name: str, items: list) -> Dataset | None:
    """A JSON array of result objects (a sweep's files collected into one): one row per object
    (vLLM, SGLang or GenAI-Perf/AIPerf exports); other items are problems. None when no item
    is a result."""
    if not any(isinstance(o, dict) and (_is_vllm(o) or _is_gp_json(o)) for o in items):
        return None
    ds = Dataset(name, "vllm_bench_json", "serving")
    runs: list[_Run] = []
    kinds: set[str] = set()
    for i, obj in enumerate(items, 1):
        if len(runs) >= MAX_RUNS:
            ds.problem(f"item {i}", f"more than {MAX_RUNS} runs; the rest is not read")
            break
        if isinstance(obj, dict) and _is_gp_json(obj):
            try:
                one = _genai_json(f"item {i}", obj)
            except ScenarioError as exc:
                ds.problem(f"item {i}", exc.message)
                continue
            for p in one.problems:
                ds.problem(f"item {i}, {p.where}", p.message)
            run = _Run("serving", line=i, figures=one.figures, conditions=one.conditions)
            runs.append(run)
            kinds.add("genai_perf_json")
            continue
        if not isinstance(obj, dict) or not _is_vllm(obj):
            ds.problem(f"item {i}", "not a benchmark result object")
            continue
        run = _vllm_object(ds, obj, f"item {i}, ")
        if run.figures:
            run.line = i
            runs.append(run)
            kinds.add("sglang_bench_json" if run.sglang else "vllm_bench_json")
        else:
            ds.problem(f"item {i}", "no usable figure in this run")
    if not runs:
        _refuse(name, ds, "a JSON array of benchmark results", _VLLM_ACCEPTED)
    if len(kinds) == 1:
        ds.format = kinds.pop()
    return _multi_run(ds, runs)


#: how this module's formats are recognised and read (:mod:`model.readers.registry`)
READERS = (
    Reader(
        name="json_list",
        stage="json",
        order=0,
        formats=("vllm_bench_json", "sglang_bench_json", "genai_perf_json"),
        recognise=lambda v: isinstance(v, list),
        read=_vllm_json_list,
        accepted_json="vllm bench sweep summary.json",
        shown=35,
    ),
)
