"""Units, dtypes and decimal prefixes.

SI decimal throughout, as the seeds count: GB = 1e9 bytes, TB/s = 1e12 B/s, TFLOPS = 1e12
FLOP/s. GiB (2**30) appears only where labelled (the Q&A seed's weight sizes, vLLM's logs).
"""

from typing import Literal

GB = 1e9
TB = 1e12
TERA = 1e12
GIB = 2**30
MS = 1e-3
US = 1e-6

WeightsDtype = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
WEIGHTS_DTYPES: tuple[str, ...] = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")

#: Every dtype a hardware preset may list a dense peak for.
PEAK_DTYPES: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")

#: Bytes per parameter. SPEC 4.1: fp32 4, bf16/fp16 2, fp8/int8 1, int4 0.5.
BYTES_PER_PARAM: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}


def compute_dtype(weights_dtype: str, peak_tflops: dict[str, float]) -> str:
    """The dtype whose tensor-core peak bounds a decode GEMM.

    FP8 and INT8 weights run W8A8 on the matching tensor cores where the part has them;
    INT4 weights (AWQ/GPTQ-style W4A16) are dequantised and multiplied in 16-bit; BF16/FP16/FP32
    run in their own dtype. A part without the dtype falls back to bf16, then fp16, then fp32.

    Parameters
    ----------
    weights_dtype : str
        One of ``fp32 bf16 fp16 fp8 int8 int4``.
    peak_tflops : dict
        The hardware preset's dense peaks per dtype. [TFLOPS]

    References
    ----------
    .. [1] Seed: *The roofline flips*, "The bare mechanism" (BF16 and FP8 ceilings of the H100).
    """
    wanted = {"int4": "bf16"}.get(weights_dtype, weights_dtype)
    for candidate in (wanted, "bf16", "fp16", "fp32"):
        if candidate in peak_tflops:
            return candidate
    # validated presets always carry at least one of the above; keep a deterministic answer
    return next(iter(peak_tflops))


#: the bounds of ``rate_scale``, the one place they are set: the scenario, the Scale to zero
#: widget and the traffic model all read them (a profile's busiest hour of 10 million requests
#: × 10,000 is already far past any replica count the economics page draws)
MIN_RATE_SCALE, MAX_RATE_SCALE = 1e-6, 10_000.0
