"""The commands that run a scenario on a cluster (issue 43, section 2): the ``vllm serve`` line,
SGLang's ``python -m sglang.launch_server`` equivalent, the ``vllm bench serve`` run that
reproduces the Serving lens's run (its result carries the scenario's link), and a minimal
Kubernetes Deployment.

Every flag is written for the engine release the scenario's engine profile stands for
(``presets/engine_flags.yaml``: the release each profile band is written for, and the first
release, or the last, that accepts each flag, with its source). A flag the scenario needs that
the release does not accept is still written, and named in :attr:`Commands.missing` with the
release that has it, so the user sees it before the server refuses it.

Pure: strings in, strings out; no Streamlit, no subprocess. The Kubernetes manifest is built as
a mapping and written with ``yaml.safe_dump``.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from model import speculative
from model.datafiles import PRESETS_DIR, load_file
from model.engines import parse_sizes
from model.scenario import Scenario, draft_spec, model_catalogue

Release = Annotated[str, Field(pattern=r"^\d{1,3}\.\d{1,3}(\.\d{1,3})?(\.post\d{1,3})?$")]


class FlagSpan(BaseModel):
    """The releases of one engine that accept one flag (or one value of it)."""

    model_config = ConfigDict(extra="forbid")
    since: Release
    until: Release | None = Field(None, description="first release that no longer accepts it")
    source: str = Field(min_length=8, max_length=1000)


class Target(BaseModel):
    """The concrete release a profile (or one band of it) is written for."""

    model_config = ConfigDict(extra="forbid")
    engine: str = Field(pattern=r"^(vllm|sglang)$")
    release: Release
    image: str = Field(min_length=3, max_length=200)
    image_rocm: str | None = Field(None, min_length=3, max_length=200)
    #: the CUDA-graph mode the release runs without being told (vLLM V1), None for V0
    graph_mode: str | None = Field(None, pattern=r"^(piecewise|full_and_piecewise)$")
    source: str = Field(min_length=8, max_length=1000)


class FlagTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    targets: dict[str, Target]
    vllm: dict[str, FlagSpan]
    sglang: dict[str, FlagSpan]

    @field_validator("targets")
    @classmethod
    def _every_profile(cls, value: dict[str, Target]) -> dict[str, Target]:
        from model.engines import engine_profiles

        missing = [p for p in engine_profiles() if p not in value]
        if missing:
            raise ValueError(f"no target release for the engine profiles {missing}")
        return value


@lru_cache(maxsize=1)
def flag_table() -> FlagTable:
    """``presets/engine_flags.yaml``, validated."""
    return FlagTable.model_validate(load_file(PRESETS_DIR / "engine_flags.yaml"))


def _version(text: str) -> tuple[int, ...]:
    """``0.4.1.post7`` → (0, 4, 1, 7); ``0.9`` → (0, 9, 0, 0): releases compare as tuples."""
    main, _, post = text.partition(".post")
    parts = [int(x) for x in main.split(".")] + [0] * (3 - len(main.split(".")))
    return (*parts, int(post or 0))


def at_least(release: str, version: str) -> bool:
    return _version(release) >= _version(version)


def target(s: Scenario) -> Target:
    """The release ``s``'s engine (``id@band``) is written for: the band's own target where
    the table names one (``vllm@0.9``), else the profile's."""
    ident, _, band = s.engine.partition("@")
    table = flag_table().targets
    return table.get(f"{ident}@{band}") or table[ident]


_HF = re.compile(r"https://huggingface\.co/([A-Za-z0-9][\w.-]*/[\w.-]+?)(?:/|\s|$)")


def hf_repo(s: Scenario) -> str | None:
    """The Hugging Face repository of the model preset (from its config's source), or None
    for a model the scenario defines or edits itself (``model.layers=…``: another model)."""
    preset = model_catalogue().get(s.model.id)
    if preset is None or preset.model_dump(exclude={"sources"}) != s.model.model_dump(
        exclude={"sources"}
    ):
        return None
    m = _HF.match((preset.sources or {}).get("config", ""))
    return m.group(1) if m else None


def _repo(s: Scenario) -> str:
    """The model's repository for a command, or the placeholder the notes explain."""
    return hf_repo(s) or "<your-model-repository>"


def _draft_repo(s: Scenario) -> str:
    """The draft model's repository (``speculative=draft``), or a placeholder."""
    m = _HF.match((draft_spec(s).sources or {}).get("config", ""))
    return m.group(1) if m else "<draft-model-repository>"


@dataclass
class Command:
    """One command line: its words, and the flags it uses (for the release check)."""

    argv: list[str]
    flags: list[str] = field(default_factory=list)
    comment: str = ""

    def add(self, flag: str, value: object | None = None, *, check: str | None = None) -> None:
        self.argv.append(flag)
        if value is not None:
            self.argv.append(str(value))
        self.flags.append(check or flag)

    def text(self) -> str:
        """The command as a shell line, one flag per continued line."""
        words = [shlex.quote(w) for w in self.argv]
        lines: list[str] = []
        for w in words:
            if w.startswith("--") or not lines:
                lines.append(w)
            else:
                lines[-1] += " " + w
        body = " \\\n  ".join(lines)
        return f"# {self.comment}\n{body}" if self.comment else body


@dataclass
class Commands:
    """What ``whatif commands`` prints."""

    engine_release: str
    vllm_serve: str
    sglang_serve: str
    vllm_bench_serve: str
    kubernetes: str
    notes: list[str]
    missing: list[str]

    def to_json(self) -> dict:
        return asdict(self)


# ---- vLLM ----------------------------------------------------------------------------------

_VLLM_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
_GRAPH_MODE = {
    "piecewise": "PIECEWISE",
    "full_decode_only": "FULL_DECODE_ONLY",
    "full_and_piecewise": "FULL_AND_PIECEWISE",
}
_VLLM_LOAD = {
    "safetensors": "safetensors",
    "runai_streamer": "runai_streamer",
    "tensorizer": "tensorizer",
    "pickle": "pt",
}
_VLLM_SPEC = {"ngram": "ngram", "eagle": "eagle", "eagle3": "eagle3", "mtp": "deepseek_mtp"}
_SGLANG_SPEC = {"eagle": "EAGLE", "eagle3": "EAGLE3", "mtp": "NEXTN", "ngram": "NGRAM"}


def max_model_len(s: Scenario) -> int | None:
    """The longest request the run sends [tokens]: prompt + output at the top of the range
    for ``fixed``/``random`` lengths, capped at the model's context; None for a shipped
    distribution (the model's own maximum then applies)."""
    if s.lengths not in ("fixed", "random"):
        return None
    r = s.range_ratio if s.lengths == "random" else 0.0
    need = math.ceil(s.prompt_tokens * (1 + r)) + math.ceil(s.output_tokens * (1 + r))
    limit = s.model.max_context_tokens
    return min(need, limit) if limit else need


def _quantisation(s: Scenario, notes: list[str]) -> tuple[str | None, str | None]:
    """(``--dtype`` value, ``--quantization`` value) for the weights dtype."""
    checkpoint = s.model.checkpoint_dtype or "bf16"
    want = s.weights_dtype
    if want in _VLLM_DTYPE:
        return _VLLM_DTYPE[want], None
    if want == checkpoint:
        return None, None  # the checkpoint's own quantisation: vLLM reads it from its config
    if want == "fp8":
        return None, "fp8"  # dynamic FP8 from a 16-bit checkpoint
    kind = {"int8": "an INT8 (W8A8)", "int4": "an AWQ or GPTQ INT4", "fp4": "an NVFP4"}[want]
    notes.append(
        f"weights_dtype {want}: serve {kind} checkpoint of the model (vLLM reads its "
        "quantisation from the checkpoint's config); the command names the BF16 repository"
    )
    return None, None


#: the flag each engine names the same knob with, and its FP8 KV-cache value
_KNOB_FLAGS = {
    "vllm": {
        "kv_fp8": "fp8",
        "max_len": "--max-model-len",
        "max_num_seqs": "--max-num-seqs",
        "max_num_batched_tokens": "--max-num-batched-tokens",
        "gpu_memory_utilization": "--gpu-memory-utilization",
    },
    "sglang": {
        "kv_fp8": "fp8_e4m3",
        "max_len": "--context-length",
        "max_num_seqs": "--max-running-requests",
        "max_num_batched_tokens": "--chunked-prefill-size",
        "gpu_memory_utilization": "--mem-fraction-static",
    },
}


def _engine_knobs(cmd: Command, s: Scenario, notes: list[str], engine: str) -> None:
    """The knobs both engines take, each under ``engine``'s own flag: the weights and KV
    dtypes, the longest request, the sequences and tokens per step, the memory share."""
    names = _KNOB_FLAGS[engine]
    dtype, quant = _quantisation(s, notes)
    if dtype:
        cmd.add("--dtype", dtype)
    if quant:
        cmd.add("--quantization", quant, check=f"--quantization={quant}")
    if s.kv_dtype == "fp8":
        kv = names["kv_fp8"]
        cmd.add("--kv-cache-dtype", kv, check=f"--kv-cache-dtype={kv}")
    longest = max_model_len(s)
    if longest:
        cmd.add(names["max_len"], longest)
    cmd.add(names["max_num_seqs"], s.max_num_seqs)
    cmd.add(names["max_num_batched_tokens"], s.max_num_batched_tokens)
    cmd.add(names["gpu_memory_utilization"], f"{s.gpu_memory_utilization:g}")


def vllm_serve(
    s: Scenario, role: str | None = None, release: str | None = None
) -> tuple[Command, list[str]]:
    """The ``vllm serve`` command of ``s`` for the vLLM ``release`` (default: the one the
    scenario's engine profile is written for, :func:`target`); ``role`` ``prefill``/``decode``:
    ``s`` is that pool's scenario (:func:`model.disagg.pool`) and the command adds the KV
    connector. Returns the command and its notes."""
    notes: list[str] = []
    tgt = target(s)
    release = release or (tgt.release if tgt.engine == "vllm" else _vllm_target().release)
    graph_default = tgt.graph_mode if tgt.engine == "vllm" else _vllm_target().graph_mode
    repo = _repo(s)
    if at_least(release, "0.5.2"):
        cmd = Command(["vllm", "serve", repo], ["vllm serve"])
    else:  # before the vllm command: the API server module, the model as a flag
        cmd = Command(["python", "-m", "vllm.entrypoints.openai.api_server"])
        cmd.add("--model", repo)
    cmd.add("--tensor-parallel-size", s.gpus)
    if s.data_parallel > 1:
        cmd.add("--data-parallel-size", s.data_parallel)
    if s.expert_parallel:
        cmd.add("--enable-expert-parallel")
    _engine_knobs(cmd, s, notes, "vllm")
    if s.cuda_graphs == "none":
        cmd.add("--enforce-eager")
    elif graph_default is not None:  # V1: the mode (where the release has it) and the sizes
        config: dict[str, object] = {}
        checks = []
        if at_least(release, "0.10.1") or s.cuda_graphs != graph_default:
            config["cudagraph_mode"] = _GRAPH_MODE[s.cuda_graphs]
            checks.append("--compilation-config.cudagraph_mode")
        sizes = list(parse_sizes(s.capture_sizes)) if s.capture_sizes else []
        if sizes:
            config["cudagraph_capture_sizes"] = sizes
            checks.append("--compilation-config.cudagraph_capture_sizes")
        if config:
            cmd.add("--compilation-config", json.dumps(config, separators=(",", ":")))
            cmd.flags[-1:] = checks
    else:
        notes.append(
            "vLLM V0 captures its own decode graph sizes (up to --max-num-seqs); "
            "cuda_graphs and capture_sizes have no flag there"
        )
    cmd.add("--load-format", _VLLM_LOAD[s.loader], check=f"--load-format={_VLLM_LOAD[s.loader]}")
    if s.loader == "runai_streamer":
        extra = json.dumps({"concurrency": s.concurrency}, separators=(",", ":"))
        cmd.add("--model-loader-extra-config", extra)
    elif s.loader == "tensorizer":
        extra = json.dumps({"tensorizer_uri": "<s3://bucket/model.tensors>"}, separators=(",", ":"))
        cmd.add("--model-loader-extra-config", extra)
        notes.append("loader tensorizer: serialise the model once and put its URI in the config")
    if s.prefix_caching_on:
        cmd.add("--enable-prefix-caching")
    elif at_least(release, "0.6.5"):
        cmd.add("--no-enable-prefix-caching")
    # before 0.6.5 prefix caching is off unless asked for: nothing to write
    # asynchronous scheduling: opt-in before 0.14, on by default from it (presets/engines.yaml)
    async_default = at_least(release, "0.14.0")
    if s.async_scheduling_on and not async_default:
        cmd.add("--async-scheduling")
    elif not s.async_scheduling_on and async_default:
        cmd.add("--no-async-scheduling")
    if s.speculative != "none":
        _vllm_speculative(s, cmd, notes, release)
    if role:
        cmd.add(
            "--kv-transfer-config",
            json.dumps(
                {"kv_connector": "NixlConnector", "kv_role": "kv_both"}, separators=(",", ":")
            ),
            check="--kv-transfer-config.NixlConnector",
        )
    if s.api_server_count > 1:
        cmd.add("--api-server-count", s.api_server_count)
    if s.sleep_level > 0:
        cmd.add("--enable-sleep-mode")
    return cmd, notes


def _vllm_target() -> Target:
    return flag_table().targets["vllm"]


def _vllm_speculative(s: Scenario, cmd: Command, notes: list[str], release: str) -> None:
    """``--speculative-config`` (0.8.2 on), or the older ``--speculative-model`` and
    ``--num-speculative-tokens`` before it."""
    k = speculative.k_of(s)
    draft = _draft_repo(s) if s.speculative == "draft" else None
    head = f"<{s.speculative.upper()} head trained for this model>"
    if s.speculative in ("eagle", "eagle3"):
        notes.append(
            f"speculative {s.speculative}: name a published {s.speculative.upper()} head "
            "for this model (a Hugging Face repository) where the command says so"
        )
    if not at_least(release, "0.8.2"):
        model = {"draft": draft, "ngram": "[ngram]"}.get(s.speculative, head)
        cmd.add("--speculative-model", model)
        cmd.add("--num-speculative-tokens", k)
        if s.speculative == "ngram":
            cmd.add("--ngram-prompt-lookup-max", 4)
        if s.speculative in ("eagle3", "mtp"):  # no such method before the config
            cmd.flags.append(f"--speculative-config.{_vllm_method(s, release)}")
        return
    if s.speculative == "draft":
        config: dict[str, object] = {"model": draft}
        check = "--speculative-config.draft"
    else:
        method = _vllm_method(s, release)
        config = {"method": method}
        check = f"--speculative-config.{method}"
        if s.speculative in ("eagle", "eagle3"):
            config["model"] = head
        if s.speculative == "ngram":
            config["prompt_lookup_max"] = 4
    config["num_speculative_tokens"] = k
    cmd.add("--speculative-config", json.dumps(config, separators=(",", ":")), check=check)


def _vllm_method(s: Scenario, release: str) -> str:
    """vLLM's method name: MTP is ``deepseek_mtp`` before 0.11.0 and ``mtp`` from it."""
    if s.speculative == "mtp":
        return "mtp" if at_least(release, "0.11.0") else "deepseek_mtp"
    return s.speculative


def vllm_bench_serve(s: Scenario, link: str, name: str = "whatif") -> tuple[Command, list[str]]:
    """The ``vllm bench serve`` run that reproduces the Serving lens's run of ``s``: the same
    lengths, rate, burstiness, concurrency limit, number of requests and seed; the result JSON
    carries ``link`` in its metadata (``whatif_link``). The client is the vllm profile's
    release whatever the server (it talks to any OpenAI-compatible server)."""
    notes: list[str] = []
    repo = _repo(s)
    cmd = Command(["vllm", "bench", "serve"], ["vllm bench serve"])
    backend = "sglang" if target(s).engine == "sglang" else "vllm"
    cmd.add("--backend", backend)
    cmd.add("--model", repo)
    cmd.add("--endpoint", "/v1/completions")
    prefix = min(s.shared_prefix_tokens, s.prompt_tokens - 1) if s.shared_prefix_tokens else 0
    if s.lengths in ("fixed", "random"):
        cmd.add("--dataset-name", "random", check="--dataset-name=random")
        cmd.add("--random-input-len", s.prompt_tokens - prefix)
        cmd.add("--random-output-len", s.output_tokens)
        ratio = s.range_ratio if s.lengths == "random" else 0.0
        cmd.add("--random-range-ratio", f"{ratio:g}")
        if prefix:
            cmd.add("--random-prefix-len", prefix)
            if s.prefix_groups > 1:
                notes.append(
                    f"prefix_groups {s.prefix_groups}: the random dataset shares one prefix; "
                    "vLLM's prefix_repetition dataset draws from several"
                )
    elif s.lengths == "sharegpt":
        cmd.add("--dataset-name", "sharegpt", check="--dataset-name=sharegpt")
        cmd.add("--dataset-path", "ShareGPT_V3_unfiltered_cleaned_split.json")
        notes.append(
            "lengths sharegpt: download ShareGPT_V3_unfiltered_cleaned_split.json "
            "(huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered) first"
        )
    else:
        cmd.add("--dataset-name", "random", check="--dataset-name=random")
        cmd.add("--random-input-len", s.prompt_tokens)
        cmd.add("--random-output-len", s.output_tokens)
        notes.append(
            f"lengths {s.lengths}: vLLM has no such dataset; the command sends the "
            "distribution's means (prompt_tokens, output_tokens) instead"
        )
    cmd.add("--ignore-eos")
    cmd.add("--num-prompts", s.num_requests)
    rate = "inf" if s.request_rate == "inf" else f"{float(s.request_rate):g}"
    cmd.add("--request-rate", rate)
    if s.burstiness != 1:
        cmd.add("--burstiness", f"{s.burstiness:g}")
    if s.max_concurrency:
        cmd.add("--max-concurrency", s.max_concurrency)
    cmd.add("--seed", s.seed)
    cmd.add("--percentile-metrics", "ttft,tpot,itl,e2el")
    cmd.add("--metric-percentiles", "50,90,99")
    cmd.add("--save-result")
    cmd.add("--result-filename", f"{name}-bench.json")
    cmd.add("--metadata", f"whatif_link={link}")
    return cmd, notes


# ---- SGLang --------------------------------------------------------------------------------


def sglang_serve(s: Scenario, role: str | None = None) -> tuple[Command, list[str]]:
    """SGLang's ``python -m sglang.launch_server`` for ``s`` (``role`` as
    :func:`vllm_serve`'s). SGLang's knobs differ from vLLM's where said in the notes."""
    notes: list[str] = []
    repo = _repo(s)
    cmd = Command(["python", "-m", "sglang.launch_server"])
    cmd.add("--model-path", repo)
    cmd.add("--tp-size", s.gpus)
    if s.data_parallel > 1:
        cmd.add("--dp-size", s.data_parallel)
        cmd.add("--enable-dp-attention")
    if s.expert_parallel:
        cmd.add("--ep-size", s.gpus * s.data_parallel)
    _engine_knobs(cmd, s, notes, "sglang")
    notes.append(
        "SGLang's --mem-fraction-static is the share of GPU memory for weights and KV cache "
        "(activations outside it), so it runs a little below vLLM's --gpu-memory-utilization"
    )
    if s.cuda_graphs == "none":
        cmd.add("--disable-cuda-graph")
    else:
        sizes = list(parse_sizes(s.capture_sizes)) if s.capture_sizes else []
        if sizes:
            cmd.add("--cuda-graph-max-bs", max(sizes))
        if s.cuda_graphs != "full_decode_only":
            notes.append(
                f"cuda_graphs {s.cuda_graphs}: SGLang captures full decode graphs; its "
                "prefill runs without graphs"
            )
    if s.loader == "tensorizer":
        notes.append("loader tensorizer: SGLang has no Tensorizer loader; it reads safetensors")
    elif s.loader != "safetensors":
        fmt = _VLLM_LOAD[s.loader]
        cmd.add("--load-format", fmt, check=f"--load-format={fmt}")
    if not s.prefix_caching_on:
        cmd.add("--disable-radix-cache")
    if not s.async_scheduling_on:  # the overlap scheduler is on by default
        cmd.add("--disable-overlap-schedule")
    if s.speculative != "none":
        k = speculative.k_of(s)
        if s.speculative == "draft":
            cmd.add("--speculative-algorithm", "STANDALONE", check="--speculative-algorithm=draft")
            cmd.add("--speculative-draft-model-path", _draft_repo(s))
        else:
            algo = _SGLANG_SPEC[s.speculative]
            cmd.add("--speculative-algorithm", algo, check=f"--speculative-algorithm={algo}")
            if s.speculative in ("eagle", "eagle3"):
                cmd.add(
                    "--speculative-draft-model-path",
                    f"<{s.speculative.upper()} head trained for this model>",
                )
        if s.speculative != "ngram":
            cmd.add("--speculative-num-steps", k)
            cmd.add("--speculative-eagle-topk", 1)
        cmd.add("--speculative-num-draft-tokens", k + 1)
    if role:
        cmd.add("--disaggregation-mode", role)
        cmd.add("--disaggregation-transfer-backend", "nixl")
    cmd.add("--host", "0.0.0.0")
    cmd.add("--port", 8000)
    return cmd, notes


# ---- the release check ---------------------------------------------------------------------


def missing_flags(engine: str, used: list[str], release: str) -> list[str]:
    """The flags in ``used`` that ``engine``'s ``release`` does not accept, each with the
    releases that do; a flag the table does not list is not checked (said once)."""
    table = getattr(flag_table(), engine)
    have = _version(release)
    out: list[str] = []
    for flag in dict.fromkeys(used):
        span = table.get(flag)
        if span is None:
            continue
        if have < _version(span.since):
            out.append(f"{engine} {release} has no {flag} (from {span.since} on; {span.source})")
        elif span.until and have >= _version(span.until):
            out.append(
                f"{engine} {release} no longer has {flag} (removed in {span.until}; {span.source})"
            )
    return out


def unchecked_flags(engine: str, used: list[str]) -> list[str]:
    """The flags in ``used`` the table has no releases for."""
    table = getattr(flag_table(), engine)
    return [f for f in dict.fromkeys(used) if f not in table]


# ---- Kubernetes ----------------------------------------------------------------------------


class _NoAliases(yaml.SafeDumper):
    """``yaml.SafeDumper`` that writes a repeated mapping out again instead of an anchor."""

    def ignore_aliases(self, data) -> bool:
        return True


def _dns_label(text: str) -> str:
    """A Kubernetes object name (RFC 1123 label): lower case, digits and '-', ≤ 63."""
    out = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-")
    return out or "whatif"


def deployment(
    s: Scenario, cmd: Command, name: str, image: str, replicas: int = 1
) -> dict[str, object]:
    """A Deployment of ``replicas`` pods, each running ``cmd`` on the GPUs of one instance."""
    gpus = s.gpus * s.data_parallel
    resource = "amd.com/gpu" if s.hardware.id.startswith("mi") else "nvidia.com/gpu"
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "whatif"}
    env = [
        {
            "name": "HF_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token", "optional": True}},
        }
    ]
    mounts = [{"name": "dshm", "mountPath": "/dev/shm"}]
    volumes: list[dict[str, object]] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    if s.compile_cache:
        env.append({"name": "VLLM_CACHE_ROOT", "value": "/cache/vllm"})
        mounts.append({"name": "compile-cache", "mountPath": "/cache"})
        volumes.append(
            {"name": "compile-cache", "persistentVolumeClaim": {"claimName": "whatif-cache"}}
        )
    container = {
        "name": "server",
        "image": image,
        "command": cmd.argv[:1] if cmd.argv[0] == "vllm" else cmd.argv[:3],
        "args": cmd.argv[1:] if cmd.argv[0] == "vllm" else cmd.argv[3:],
        "ports": [{"containerPort": 8000, "name": "http"}],
        "env": env,
        "resources": {"limits": {resource: gpus}, "requests": {resource: gpus}},
        "volumeMounts": mounts,
        "readinessProbe": {
            "httpGet": {"path": "/health", "port": 8000},
            "periodSeconds": 10,
            "failureThreshold": 60,
        },
    }
    if cmd.argv[0] == "vllm" and "--host" not in cmd.argv:
        container["args"] = [*container["args"], "--host", "0.0.0.0", "--port", "8000"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [container], "volumes": volumes},
            },
        },
    }


# ---- all of them ---------------------------------------------------------------------------


def _name(s: Scenario) -> str:
    return _dns_label(f"{s.model.id if s.model.id != 'custom' else 'model'}-{s.hardware.id}")


def commands(s: Scenario, link: str, replicas: int = 1) -> Commands:
    """Every command of ``s``: ``link`` is the scenario's Serving link (the bench result
    carries it), ``replicas`` the Deployment's (the capacity the Serving lens gives)."""
    tgt = target(s)
    notes: list[str] = []
    missing: list[str] = []
    ident = s.engine.partition("@")[0]
    if ident == "ideal":
        notes.append("engine ideal is the source posts' physics, not a server: vLLM's commands")
    if hf_repo(s) is None:
        notes.append(
            f"{s.model.name} is not a preset with a Hugging Face repository: put its "
            "repository where the commands say <your-model-repository>"
        )
    if s.disaggregated:
        from model import disagg

        roles = [("prefill", s.prefill_instances), ("decode", s.decode_instances)]
        pools = [(role, n, disagg.pool(s, role)) for role, n in roles]
    else:
        pools = [(None, replicas, s)]
    table = flag_table().targets
    vllm_tgt = tgt if tgt.engine == "vllm" else table["vllm"]
    sglang_tgt = tgt if tgt.engine == "sglang" else table["sglang"]
    vllm_cmds, sglang_cmds, docs = [], [], []
    base = _name(s)
    for role, n, ps in pools:
        v, vn = vllm_serve(ps, role)
        g, gn = sglang_serve(ps, role)
        if role:
            v.comment = g.comment = f"{role} instance ({n} of them, {ps.gpus} GPUs each)"
        vllm_cmds.append(v)
        sglang_cmds.append(g)
        notes += [x for x in vn + gn if x not in notes]
        name = _dns_label(f"{base}-{role}" if role else base)
        chosen = sglang_tgt if tgt.engine == "sglang" else vllm_tgt
        image = chosen.image
        if ps.hardware.id.startswith("mi"):
            if chosen.image_rocm:
                image = chosen.image_rocm
            elif "ROCm" not in " ".join(notes):
                notes.append(
                    f"{ps.hardware.name}: run the ROCm build of {chosen.image.split(':')[0]} "
                    f"({chosen.engine} {chosen.release}) instead of the image the manifest names"
                )
        docs.append(deployment(ps, g if tgt.engine == "sglang" else v, name, image, n))
    if s.disaggregated:
        notes.append(
            "disaggregated: a proxy sends each request to a prefill instance, then to a decode "
            "instance (vLLM's examples/online_serving/disaggregated_serving, SGLang's "
            "sglang_router --pd-disaggregation); the instances' KV moves over NIXL"
        )
    for c in vllm_cmds:
        missing += missing_flags("vllm", c.flags, vllm_tgt.release)
    for c in sglang_cmds:
        missing += missing_flags("sglang", c.flags, sglang_tgt.release)
    bench, bn = vllm_bench_serve(s, link, base)
    missing += missing_flags("vllm", bench.flags, vllm_tgt.release)
    notes += bn
    manifest = yaml.dump_all(docs, Dumper=_NoAliases, sort_keys=False, width=1000)
    return Commands(
        engine_release=f"{tgt.engine} {tgt.release}",
        vllm_serve="\n\n".join(c.text() for c in vllm_cmds),
        sglang_serve="\n\n".join(c.text() for c in sglang_cmds),
        vllm_bench_serve=bench.text(),
        kubernetes=manifest,
        notes=notes,
        missing=list(dict.fromkeys(missing)),
    )


_TITLES = {
    "vllm_serve": "vLLM server",
    "sglang_serve": "SGLang server (the equivalent)",
    "vllm_bench_serve": "the benchmark that reproduces the Serving run",
    "kubernetes": "Kubernetes (kubectl apply -f)",
}


def as_text(out: dict) -> str:
    """``whatif commands`` without ``--json``: each command under a comment line."""
    parts = [f"# written for {out['engine_release']}"]
    for key, title in _TITLES.items():
        parts.append(f"# --- {title}\n{out[key].rstrip()}")
    if out["missing"]:
        parts.append(
            "# --- not accepted by that release\n" + "\n".join(f"# {m}" for m in out["missing"])
        )
    if out["notes"]:
        parts.append("# --- notes\n" + "\n".join(f"# {n}" for n in out["notes"]))
    return "\n\n".join(parts)
