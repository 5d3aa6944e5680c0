"""Peer comparison: NVIDIA AIConfigurator vs this project's Serving lens, on the SAME rows of
the published serving table (tests/data/published_serving.csv).

AIConfigurator is a peer tool, never a dependency of the app: it lives in its own virtualenv
and runs in a subprocess of that venv's interpreter, so the project's venv never imports it::

    python3 -m venv .venv-aic && .venv-aic/bin/pip install aiconfigurator
    PYTHONPATH=. .venv/bin/python benchmarks/peer_compare.py            # whole table
    PYTHONPATH=. .venv/bin/python benchmarks/peer_compare.py --limit 5  # a quick try

(``pip install -e .[peer]`` names the same package as an optional extra; ``pip install
--dry-run`` into the app's venv changed none of its packages, only added ~18 (matplotlib,
scipy, bokeh, tornado, ...), but the separate venv above is what this script runs by default.
The extra is pinned below 0.13: AIConfigurator announces the move of its CLI to the
``aisimulate`` distribution in 0.13.)

What AIConfigurator is asked, per run (``aiconfigurator.cli.api.cli_estimate``, mode "agg",
the programmatic form of ``aiconfigurator cli estimate``; database mode SILICON, falling back
to HYBRID where the silicon tables miss an op, which the cache records):

* model: the run's preset mapped to the HuggingFace id AIConfigurator ships a config for
  (``MODELS`` below); two models it does not ship (Qwen3-14B, Llama-3.2-3B) get their public
  HF config.json written to a temp folder, which AIConfigurator accepts as a local model path;
* system: h100-sxm -> h100_sxm, h200 -> h200_sxm, a100-80gb -> a100_sxm, l40s -> l40s (GPUs it
  has no tables for are skipped with the reason);
* backend: the run's engine (vllm / sglang; NIM -> trtllm, an assumption), at AIConfigurator's
  current database version for that system (its versions are not the runs' versions);
* parallelism: gpus = TP (``pp2`` in the run id -> PP 2; ``ep`` -> MoE expert parallel;
  ``dpattn`` -> attention DP); MoE models otherwise MoE-TP = TP;
* isl/osl: the run's mean prompt tokens (with the chat template's tokens through a chat
  endpoint, ``tools.published_serving.chat_template_tokens``) and the output tokens it generated
  (``tools.published_serving.generated_mean``, as this project's runs take them;
  ``prefix_cached_tokens=N`` in the notes -> AIConfigurator's ``prefix``); ctx_tokens:
  AIConfigurator's default (= isl). ``--ctx-tokens engine`` passes the engine's prefill chunk instead (vLLM 8192, 2048 on A100 / GPUs under
  70 GiB, ``mnbtN`` from the run id; SGLang / TRT-LLM 8192), but AIConfigurator reads
  ctx_tokens as the prefill tokens in EVERY mixed step, so a chunk far above isl inflates its
  TTFT (Qwen3-8B H100 isl 233 batch 1: 205 ms at 8192 vs 39 ms at the default) and its
  saturated throughput (gpt-oss-20b batch 1000: 23.6k vs 6.4k tok/s);
* concurrency (AIConfigurator takes a batch size, not a request rate):
  - ``max_concurrency`` when the run states one;
  - rate ``inf`` (or blank) without a cap, the flood: min(num_requests, the engine's
    max_num_seqs (vLLM 1024, or 256 on A100 / GPUs under 70 GiB), AIConfigurator's KV-cache
    capacity) -- the largest batch, found by bisection, that AIConfigurator says fits;
  - a finite rate without a cap: Little's law, concurrency = rate x AIConfigurator's request
    latency, iterated to a fixed point (then capped as for the flood).
  In every case the batch is lowered to what AIConfigurator says fits the KV cache.

Metrics compared (AIConfigurator gives steady-state means, no distributions, so p99s are not
compared): mean/median TTFT ~ ttft; mean/median TPOT and ITL ~ tpot; output_throughput ~
tokens/s (per replica: AIConfigurator's tokens/s is the whole TP*PP*DP group, = tokens/s/gpu x
GPUs); request_throughput ~ seq/s; total_token_throughput ~ seq/s x (printed prompt + osl),
as the benchmark counts it; mean/median E2EL ~ request_latency. This project's figures come from ``tools.published_serving.compare()``.

Answers are cached in benchmarks/peer_compare_cache.json (keyed by the request and the
AIConfigurator version), so a rerun is fast.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / "peer_compare_cache.json"
DEFAULT_AIC_PYTHON = ROOT / ".venv-aic" / "bin" / "python"

# project model preset -> AIConfigurator model path, by weights dtype ("*" = any dtype)
MODELS = {
    ("qwen3-1.7b", "*"): "Qwen/Qwen3-1.7B",
    ("qwen3-8b", "*"): "Qwen/Qwen3-8B",
    ("qwen3-14b", "*"): "local:Qwen/Qwen3-14B",
    ("qwen3-32b", "fp8"): "Qwen/Qwen3-32B-FP8",
    ("qwen3-32b", "*"): "Qwen/Qwen3-32B",
    ("qwen3-235b-a22b", "fp8"): "Qwen/Qwen3-235B-A22B-FP8",
    ("qwen3-235b-a22b", "*"): "Qwen/Qwen3-235B-A22B",
    ("deepseek-r1", "*"): "deepseek-ai/DeepSeek-R1",
    ("gpt-oss-20b", "*"): "openai/gpt-oss-20b",
    ("gpt-oss-120b", "*"): "openai/gpt-oss-120b",
    # Llama 3.3 70B has Llama 3.1 70B's shape; the FP8 checkpoint is NVIDIA's 3.1 70B FP8
    ("llama-3.3-70b", "fp8"): "nvidia/Llama-3.1-70B-Instruct-FP8",
    ("llama-3.3-70b", "*"): "meta-llama/Meta-Llama-3.1-70B",
    ("llama-3.2-3b", "*"): "local:meta-llama/Llama-3.2-3B",
}
# public HF config.json fields for models AIConfigurator 0.12 ships no config for
LOCAL_CONFIGS = {
    "Qwen/Qwen3-14B": {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 5120,
        "intermediate_size": 17408,
        "max_position_embeddings": 40960,
        "num_attention_heads": 40,
        "num_hidden_layers": 40,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vocab_size": 151936,
    },
    "meta-llama/Llama-3.2-3B": {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "max_position_embeddings": 131072,
        "num_attention_heads": 24,
        "num_hidden_layers": 28,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 32.0,
            "high_freq_factor": 4.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "vocab_size": 128256,
    },
}
MOE = ("qwen3-235b-a22b", "deepseek-r1", "gpt-oss-20b", "gpt-oss-120b")
SYSTEMS = {"h100-sxm": "h100_sxm", "h200": "h200_sxm", "a100-80gb": "a100_sxm", "l40s": "l40s"}
BIG_GPU = {"h100-sxm": True, "h200": True, "a100-80gb": False, "l40s": False}  # vLLM defaults

FAMILY = {
    "mean_ttft_ms": ("TTFT", "ttft"),
    "median_ttft_ms": ("TTFT", "ttft"),
    "mean_tpot_ms": ("TPOT/ITL", "tpot"),
    "median_tpot_ms": ("TPOT/ITL", "tpot"),
    "mean_itl_ms": ("TPOT/ITL", "tpot"),
    "median_itl_ms": ("TPOT/ITL", "tpot"),
    "output_throughput": ("throughput", "tokens_s"),
    "request_throughput": ("throughput", "seq_s"),
    "total_token_throughput": ("throughput", "total_tokens_s"),
    "mean_e2el_ms": ("E2EL", "e2el"),
    "median_e2el_ms": ("E2EL", "e2el"),
}


# --------------------------------------------------------------------------------------------
# worker: runs inside the AIConfigurator venv (``--worker``); imports nothing of the project
# --------------------------------------------------------------------------------------------


def _worker() -> None:
    import contextlib
    import io
    import logging
    import tempfile
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    import aiconfigurator
    from aiconfigurator.cli.api import cli_estimate

    version = getattr(aiconfigurator, "__version__", "?")
    tmp = Path(tempfile.mkdtemp(prefix="aic-models-"))

    def model_path(name: str) -> str:
        if not name.startswith("local:"):
            return name
        hf = name.removeprefix("local:")
        d = tmp / hf.replace("/", "--")
        d.mkdir(exist_ok=True)
        (d / "config.json").write_text(json.dumps(LOCAL_CONFIGS[hf]))
        return str(d)

    def estimate(job: dict, bs: int, db: str):
        kw = dict(job["kw"])
        kw["model_path"] = model_path(kw["model_path"])
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            r = cli_estimate(batch_size=int(bs), database_mode=db, **kw)
        raw = r.raw
        return {
            "bs": int(bs),
            "ttft": float(r.ttft),
            "tpot": float(r.tpot),
            "tokens_s": float(raw.get("tokens/s", 0.0)),
            "tokens_s_gpu": float(raw.get("tokens/s/gpu", 0.0)),
            "seq_s": float(raw.get("seq/s", 0.0)),
            "e2el": float(raw.get("request_latency", 0.0)),
            "num_gpus": int(raw.get("num_total_gpus", 0)),
            "backend_version": r.backend_version,
            "kv_overflow": bool(r.kv_cache_warning),
            "memory_gb": float(raw.get("memory", 0.0) or 0.0),
        }

    def probe(job, bs, db):
        """(estimate, "fit" | "over") -- "over" where the batch overflows AIConfigurator's KV
        cache or its memory check (its OOM error counts the whole batch's KV cache)."""
        try:
            out = estimate(job, bs, db)
        except RuntimeError as exc:
            if str(exc).startswith("OOM"):
                return None, "over"
            raise
        return out, ("over" if out["kv_overflow"] else "fit")

    def solve(job: dict, db: str) -> dict:
        """The estimate at the run's concurrency, lowered to what fits AIConfigurator's KV."""
        target = max(1, int(job["concurrency"]))
        note = []
        out, state = probe(job, target, db)
        if state == "over":  # bisect the largest batch that fits
            lo, hi, best = 1, target, None
            b1, s1 = probe(job, 1, db)
            if s1 == "over":
                raise RuntimeError("OOM even at batch 1: the model does not fit its memory model")
            best = b1
            while hi - lo > max(1, lo // 20):
                mid = (lo + hi) // 2
                o, st = probe(job, mid, db)
                if st == "over":
                    hi = mid
                else:
                    lo, best = mid, o
            note.append(f"batch {target} over AIC's KV capacity -> {best['bs']}")
            out = best
        if job.get("rate"):  # Little's law fixed point: concurrency = rate x latency
            rate, cap = float(job["rate"]), out["bs"]
            c = min(cap, max(1, round(rate * out["e2el"] / 1000)))
            for _ in range(12):
                o, _ = probe(job, c, db)
                if o is None:
                    break
                nxt = min(cap, max(1, round(rate * o["e2el"] / 1000)))
                out = o
                if abs(nxt - c) <= max(1, c // 50):
                    break
                c = max(1, (c + nxt) // 2) if abs(nxt - c) > 1 else nxt
            # an open loop below capacity serves what is offered
            out = dict(
                out,
                seq_s=min(out["seq_s"], rate),
                tokens_s=min(out["tokens_s"], rate * job["kw"]["osl"]),
            )
            note.append(f"rate {rate}/s -> Little's-law concurrency {out['bs']}")
        out["note"] = "; ".join(note)
        return out

    print(json.dumps({"hello": version}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        res = {"key": job["key"]}
        errors = []
        for db in ("SILICON", "HYBRID"):
            try:
                res.update(solve(job, db), database_mode=db, ok=True)
                break
            except Exception as exc:  # noqa: BLE001
                errors.append(
                    f"{db}: {str(exc).splitlines()[0][:220] if str(exc) else type(exc).__name__}"
                )
        else:
            res.update(ok=False, reason=" | ".join(errors))
        res["aic_version"] = version
        print(json.dumps(res), flush=True)


# --------------------------------------------------------------------------------------------
# driver: runs in the project's venv
# --------------------------------------------------------------------------------------------


def _engine(row: dict) -> str:
    text = " ".join((row.get("engine") or "", row.get("engine_version") or "")).lower()
    if "sglang" in text:
        return "sglang"
    if "nim" in text:
        return "trtllm"  # NIM's optimised profiles are TRT-LLM engines (not stated by the run)
    if "vllm" in text or re.search(r"^\s*v?0\.\d", row.get("engine_version") or ""):
        return "vllm"
    notes = (row.get("notes") or "").lower()
    if "sglang" in notes:
        return "sglang"
    if "vllm" in notes:
        return "vllm"
    return "vllm"  # the table's unlabelled runs are vLLM benchmark_serving sweeps


def job_for(run_id: str, row: dict, ctx_mode: str = "aic") -> tuple[dict | None, str | None]:
    """AIConfigurator's inputs for one run, or (None, why it cannot take the run)."""
    from tools import published_serving as ps
    from tools.published import prefix_cached_tokens

    gpu, model, dtype = row["gpu"], row["model"], row["weights_dtype"]
    if gpu not in SYSTEMS:
        return None, f"GPU {gpu}: no AIConfigurator system tables"
    path = MODELS.get((model, dtype)) or MODELS.get((model, "*"))
    if path is None:
        return None, f"model {model}: no AIConfigurator model config (or its HF id is unknown here)"
    engine = _engine(row)
    gpus = int(row["gpus"])
    tp, pp, dp = gpus, 1, 1
    if re.search(r"pp(\d)", run_id):
        pp = int(re.search(r"pp(\d)", run_id).group(1))
        tp = gpus // pp
    if "dpattn" in run_id:
        tp, dp = 1, gpus
    kw = dict(
        model_path=path,
        system_name=SYSTEMS[gpu],
        backend_name=engine,
        # the prompt the server prefilled, as this project is given it (chat template included)
        isl=round(float(row["prompt_tokens"])) + ps.chat_template_tokens(row),
        osl=max(round(ps.generated_mean(row)), 1),
        tp_size=tp,
        pp_size=pp,
        attention_dp_size=dp,
    )
    if model in MOE:
        if re.search(r"tp\d+ep", run_id):
            kw.update(moe_tp_size=1, moe_ep_size=tp * dp)
        else:
            kw.update(moe_tp_size=tp * dp, moe_ep_size=1)
    prefix = prefix_cached_tokens(row.get("notes") or "")
    if prefix:
        kw["prefix"] = prefix
    if dtype == "int4":
        if model in MOE:
            kw["moe_quant_mode"] = "int4_wo"
        kw["gemm_quant_mode"] = "int4_wo"
    elif dtype == "fp8" and path.startswith("local:"):
        kw["gemm_quant_mode"] = "fp8_block"
    if engine in ("vllm", "sglang") and not model.startswith("gpt-oss"):
        kw["kvcache_quant_mode"] = "bfloat16"  # the engines' default KV dtype ('auto')
    big = BIG_GPU[gpu]
    m = re.search(r"mnbt(\d+)", run_id)
    if engine == "vllm":
        chunk = int(m.group(1)) if m else (8192 if big else 2048)
        engine_cap = 1024 if big else 256
    else:
        chunk = int(m.group(1)) if m else 8192
        engine_cap = None
    if ctx_mode == "engine":
        kw["ctx_tokens"] = chunk
    conc = row["max_concurrency"].strip()
    rate = row["request_rate"].strip() or "inf"
    n = round(float(row["num_requests"])) if row["num_requests"].strip() else None
    # the prompt as the benchmark counts it in its totals (no chat template; cached tokens in)
    job = {"kw": kw, "rate": None, "printed": float(row["prompt_tokens"])}
    if conc:
        c = int(conc)
        job["how"] = f"max_concurrency {c}"
    else:
        limits = [x for x in (n, engine_cap) if x]
        c = min(limits) if limits else 1024
        job["how"] = (
            f"flood: min(num_requests {n}, engine max_num_seqs {engine_cap}, AIC KV capacity)"
        )
        if rate != "inf":
            job["rate"] = float(rate)
            job["how"] = f"rate {rate}/s: Little's law, capped at {c}"
    if n:
        c = min(c, n)
    job["concurrency"] = c
    job["key"] = json.dumps({"kw": kw, "c": c, "rate": job["rate"], "v": 1}, sort_keys=True)
    return job, None


def aic_version(aic_python: Path) -> str | None:
    if not aic_python.exists():
        return None
    proc = subprocess.run(
        [
            str(aic_python),
            "-W",
            "ignore",
            "-c",
            "import importlib.metadata as m; print(m.version('aiconfigurator'))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def run_worker(aic_python: Path, jobs: list[dict], cache: dict, version: str) -> None:
    env = dict(os.environ, PYTHONPATH="", AICONFIGURATOR_LOG_LEVEL="ERROR")
    proc = subprocess.Popen(
        [str(aic_python), "-W", "ignore", str(Path(__file__).resolve()), "--worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=str(HERE),
    )
    assert proc.stdin and proc.stdout
    proc.stdout.readline()  # hello
    t0 = time.time()
    for i, job in enumerate(jobs, 1):
        proc.stdin.write(json.dumps(job) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            print("AIConfigurator worker died", file=sys.stderr)
            break
        res = json.loads(line)
        cache[f"{version}|{job['key']}"] = {k: v for k, v in res.items() if k != "key"}
        save_cache(cache)
        print(
            f"  [{i}/{len(jobs)} {time.time() - t0:5.0f}s] {job['run']}: "
            f"{'ok' if res.get('ok') else 'cannot: ' + res.get('reason', '')[:100]}",
            file=sys.stderr,
            flush=True,
        )
    proc.stdin.close()
    proc.wait(timeout=60)


def load_cache() -> dict:
    try:
        return json.loads(CACHE.read_text())
    except (OSError, ValueError):
        return {}


def save_cache(cache: dict) -> None:
    tmp = CACHE.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=0, sort_keys=True) + "\n")
    tmp.replace(CACHE)


def _med(xs):
    return f"{median(xs):6.0%}" if xs else "     —"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--aic-python",
        type=Path,
        default=DEFAULT_AIC_PYTHON,
        help="interpreter of the venv holding aiconfigurator (default %(default)s)",
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N runs")
    ap.add_argument("--runs", action="store_true", help="also print one line per run")
    ap.add_argument(
        "--ctx-tokens",
        choices=("aic", "engine"),
        default="aic",
        help="AIConfigurator's ctx_tokens: its default (= isl, one prefill per mixed "
        "step) or the engine's prefill chunk (default %(default)s)",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker()
        return 0

    version = aic_version(args.aic_python)
    if version is None:
        print(
            f"aiconfigurator is not installed at {args.aic_python}; nothing to compare.\n"
            "Install it in a separate venv:  python3 -m venv .venv-aic && "
            ".venv-aic/bin/pip install aiconfigurator"
        )
        return 0

    from tools import published_serving as ps

    all_runs = list(ps.runs().items())
    if args.limit:
        all_runs = all_runs[: args.limit]
    cache = load_cache()
    skipped: dict[str, str] = {}
    jobs: dict[str, dict] = {}
    for run_id, rows in all_runs:
        job, why = job_for(run_id, rows[0], args.ctx_tokens)
        if job is None:
            skipped[run_id] = why
        else:
            jobs[run_id] = dict(job, run=run_id)
    todo = [j for j in jobs.values() if f"{version}|{j['key']}" not in cache]
    t0 = time.time()
    if todo:
        print(
            f"asking AIConfigurator {version} about {len(todo)} runs "
            f"({len(jobs) - len(todo)} cached)",
            file=sys.stderr,
        )
        run_worker(args.aic_python, todo, cache, version)
    aic = {}
    for run_id, job in jobs.items():
        res = cache.get(f"{version}|{job['key']}")
        if res is None:
            skipped[run_id] = "no answer (worker stopped)"
        elif not res.get("ok"):
            skipped[run_id] = "AIConfigurator: " + res["reason"]
        else:
            aic[run_id] = dict(res, how=job["how"], printed=job["printed"], osl=job["kw"]["osl"])

    own = {}
    own_skip = {}
    wanted = {r for r, _ in all_runs}
    for rec in ps.compare():
        if rec["run"] not in wanted:
            continue
        if "skipped" in rec:
            own_skip[rec["run"]] = rec["skipped"]
        else:
            own[(rec["run"], rec["metric"])] = rec

    both = []
    for (run_id, metric), rec in own.items():
        if run_id not in aic or metric not in FAMILY:
            continue
        fam, field = FAMILY[metric]
        a = aic[run_id]
        if field == "total_tokens_s":  # as the benchmark counts it (ps.as_benchmark_counts)
            got = a["seq_s"] * (a["printed"] + a["osl"])
        else:
            got = a[field]
        both.append(
            dict(rec, family=fam, aic=got, aic_error=(got - rec["measured"]) / rec["measured"])
        )

    def block(title, keyf, order):
        print(f"\n{title:<34} {'rows':>5} {'runs':>5} {'this project':>13} {'AIConfigurator':>15}")
        for k in order:
            sel = [r for r in both if keyf(r) == k]
            if not sel:
                continue
            print(
                f"  {k:<32} {len(sel):>5} {len({r['run'] for r in sel}):>5} "
                f"{_med([abs(r['error']) for r in sel]):>13} "
                f"{_med([abs(r['aic_error']) for r in sel]):>15}"
            )

    classes = ("concurrency 1", "light load", "saturation")
    fams = ("TTFT", "TPOT/ITL", "throughput", "E2EL")
    print(
        f"Peer comparison on the published serving table: median |error| on the SAME rows "
        f"(AIConfigurator {version}, agg estimate; p99 rows not compared)"
    )
    print(
        f"runs in table: {len(all_runs)}; modelled by AIConfigurator: {len(aic)}; "
        f"by both: {len({r['run'] for r in both})}; rows compared: {len(both)}"
    )
    block("all rows", lambda r: "all", ["all"])
    block("by load class", lambda r: r["class"], classes)
    block("by metric family", lambda r: r["family"], fams)
    block("by split", lambda r: "held out" if r["held_out"] else "fit", ("fit", "held out"))
    block(
        "by split x class",
        lambda r: f"{'held out' if r['held_out'] else 'fit'} · {r['class']}",
        [f"{s} · {c}" for s in ("fit", "held out") for c in classes],
    )
    block(
        "by class x family",
        lambda r: f"{r['class']} · {r['family']}",
        [f"{c} · {f}" for c in classes for f in fams],
    )

    if args.runs:
        print("\nper run (median |error| over its compared rows: project / AIC; AIC concurrency)")
        for run_id in aic:
            sel = [r for r in both if r["run"] == run_id]
            if sel:
                print(
                    f"  {run_id:<62} {_med([abs(r['error']) for r in sel])} "
                    f"{_med([abs(r['aic_error']) for r in sel])}  bs={aic[run_id]['bs']} "
                    f"{aic[run_id]['database_mode']} {aic[run_id].get('note', '')}"
                )

    only_aic = sorted(r for r in aic if r not in {x["run"] for x in both})
    reasons: dict[str, list[str]] = {}
    for run_id, why in skipped.items():
        short = re.sub(r"\d+(\.\d+)?", "N", why)[:150] if why.startswith("AIConfig") else why
        reasons.setdefault(short, []).append(run_id)
    print(f"\nruns AIConfigurator could not model: {len(skipped)} of {len(all_runs)}")
    for why, ids in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ids):>3}  {why}")
        print(f"       {', '.join(ids)}")
    if only_aic:
        print(f"\nruns AIConfigurator modelled but this project skipped: {len(only_aic)}")
        for run_id in only_aic:
            print(f"  {run_id}: {own_skip.get(run_id, 'no comparable metric')[:110]}")
    hybrid = sorted(r for r, a in aic.items() if a.get("database_mode") != "SILICON")
    if hybrid:
        print(
            f"\nAIConfigurator answers from HYBRID (silicon tables incomplete): {len(hybrid)} runs"
        )
    kv = sorted(r for r, a in aic.items() if "KV capacity" in (a.get("note") or ""))
    print(f"runs whose batch AIConfigurator lowered to its KV capacity: {len(kv)}")
    print(f"(AIConfigurator time this call: {time.time() - t0:.0f} s; cache {CACHE.name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
