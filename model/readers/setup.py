"""What set-up a measurement file says it ran on (model, GPU, GPU count), matched to the
presets, and where that differs from the scenario (issue 40, new-user item 1: a Llama-3.2-3B
benchmark on an L40S fitted against the default 70B on H100s without a word).

A file states its set-up in its own words: ``vllm bench serve`` JSON its ``model_id``
(``Qwen/Qwen3-8B``) and, in some versions, a ``gpu`` label (``8xNVIDIA_H200``); GenAI-Perf and
AIPerf their ``model``; a vLLM start-up log the model it loaded, its tensor-parallel size and
the GPU it found. The matching is by name tokens: an organisation prefix and suffixes such as
``-Instruct`` or a quantisation tag do not decide, the family, version and size do.
"""

from __future__ import annotations

import re

from model.presets import hardware_presets, model_presets

#: a GPU's marketing name → the hardware preset, the first pattern that matches wins
_GPU_PATTERNS = (
    (r"gb200", "gb200"),
    (r"b200", "b200"),
    (r"h200", "h200"),
    (r"h100.*nvl|nvl.*h100", "h100-nvl"),
    (r"h100.*pcie|pcie.*h100", "h100-pcie"),
    (r"h100", "h100-sxm"),
    (r"a100.*40\s*g", "a100-40gb"),
    (r"a100", "a100-80gb"),
    (r"l40s", "l40s"),
    (r"(?<![a-z0-9])l4(?![0-9a-z])", "l4"),
    (r"a10g", "a10g"),
    (r"5090", "rtx-5090"),
    (r"4090", "rtx-4090"),
    (r"3090", "rtx-3090"),
    (r"pro\s*6000", "rtx-pro-6000"),
    (r"mi300x", "mi300x"),
)
_NOT_THE_MODEL = {"instruct", "chat", "hf", "it", "base", "fp8", "awq", "gptq", "int4", "int8",
                  "bf16", "fp16", "w4a16", "w8a8", "dynamic", "nvfp4", "mxfp4", "meta"}  # fmt: skip


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[\s/_\-:]+", text.lower()) if t]


def match_model(name: str) -> str | None:
    """The model preset ``name`` (a repository id or a model's name) names, or None: the
    preset whose every id token is among the name's, the most tokens winning."""
    words = set(_tokens(name)) - _NOT_THE_MODEL
    best, best_n = None, 0
    for pid in model_presets():
        need = _tokens(pid)
        if need and all(t in words for t in need) and len(need) > best_n:
            best, best_n = pid, len(need)
    return best


def match_gpu(label: str) -> tuple[str | None, int | None]:
    """(hardware preset, GPU count) a GPU label names (``8xNVIDIA_H200`` → h200, 8)."""
    text = label.lower().replace("_", " ")
    count = re.match(r"\s*(\d{1,3})\s*[x×]", text)
    for pattern, pid in _GPU_PATTERNS:
        if re.search(pattern, text) and pid in hardware_presets():
            return pid, int(count.group(1)) if count else None
    return None, int(count.group(1)) if count else None


def stated_setup(conditions: dict) -> dict:
    """What a data set's ``conditions`` state: ``model`` and ``hardware`` (preset ids, or the
    file's own words under ``model_stated`` / ``gpu_stated`` when no preset matches) and
    ``gpus``."""
    out: dict = {}
    model = conditions.get("model") or conditions.get("tokenizer")
    if isinstance(model, str) and model.strip():
        pid = match_model(model)
        out["model_stated"] = model
        if pid:
            out["model"] = pid
    for key in ("gpu", "gpu_name", "hardware", "device_name"):
        label = conditions.get(key)
        if isinstance(label, str) and label.strip():
            pid, count = match_gpu(label)
            out["gpu_stated"] = label
            if pid:
                out["hardware"] = pid
            if count:
                out["gpus"] = count
            break
    gpus = conditions.get("gpus") or conditions.get("tensor_parallel_size")
    if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0:
        out.setdefault("gpus", gpus)
    return out


def setup_mismatch(s, conditions: dict) -> tuple[list[str], list[tuple[str, str]]]:
    """Where the set-up a data set states differs from the scenario ``s``: the reasons, one
    per key, and the ``(key, value)`` changes that set the scenario to what was measured
    (only the keys a preset matched)."""
    got = stated_setup(conditions)
    why, keys = [], []
    if "model" in got and got["model"] != s.model.id:
        why.append(f"it ran {got['model_stated']}, the scenario models {s.model.name}")
        keys.append(("model", got["model"]))
    elif "model_stated" in got and "model" not in got:
        why.append(
            f"it ran {got['model_stated']}, which matches no model preset (the scenario models "
            f"{s.model.name}): compare with care"
        )
    if "hardware" in got and got["hardware"] != s.hardware.id:
        why.append(f"it ran on {got['gpu_stated']}, the scenario has {s.hardware.name}")
        keys.append(("hardware", got["hardware"]))
    if "gpus" in got and got["gpus"] != s.gpus:
        why.append(f"it ran on {got['gpus']} GPU(s), the scenario has {s.gpus}")
        keys.append(("gpus", str(got["gpus"])))
    return why, keys


def linked_scenario(conditions: dict):
    """The scenario a benchmark result names in its ``whatif_link`` metadata (written by
    ``whatif commands``), as (scenario, None); (None, why) when the link is there but names no
    scenario this app accepts; (None, None) without a link. The link is user data: it is read
    as a link query and validated as any link is."""
    from urllib.parse import parse_qsl, urlsplit

    from model import codecs
    from model.errors import ScenarioError
    from model.overrides import resolve

    link = conditions.get("whatif_link")
    if not isinstance(link, str) or not link.strip():
        return None, None
    query = urlsplit(link.strip()).query
    if not query:
        return None, "its whatif_link has no scenario in it (no query after the address)"
    if len(query) > codecs.MAX_QUERY_CHARS:
        return (
            None,
            f"its whatif_link is longer than the {codecs.MAX_QUERY_CHARS:,} characters a link may have",
        )
    own = codecs.split_link(parse_qsl(query, keep_blank_values=True))[0]
    try:
        return resolve(own, strict=True)[0], None
    except ScenarioError as exc:
        return None, f"its whatif_link names a scenario this app refuses ({exc.key}: {exc.message})"
