"""Formula panels (``st.latex``) with the seed references behind them, each source named as
:data:`ui.text.SOURCE_NAMES` names it."""

from __future__ import annotations

import streamlit as st

from ui.text import SOURCE_NAMES, SOURCE_TITLES


def roofline_formulas(compute_dtype: str, weights_dtype: str) -> None:
    box = st.expander("Formulas and sources", key="x_formulas_roofline", on_change="rerun")
    if not box.open:  # built only when opened: the LaTeX costs every run
        return
    with box:
        st.markdown("**Bytes and FLOPs of one decode step**")
        st.latex(
            r"W = \text{params}\times\text{bytes/param}\quad(\text{fp32 }4,\ \text{bf16 }2,"
            r"\ \text{fp8/int8 }1,\ \text{int4 }0.5)"
            r"\;+\;N_{bf16}\times(2 - \text{bytes/param})"
        )
        st.markdown(
            "N_bf16 is what a quantised checkpoint keeps in BF16 (the model's `quantised`): the "
            "embedding table and the output head (AWQ, GPTQ, FP8, NVFP4), and gpt-oss's "
            "attention and router too (only its experts are MXFP4); 0 for a 16-bit checkpoint "
            "and for the worked examples' 3B and 70B, which count every parameter at the dtype."
        )
        st.latex(
            r"\text{bytes}_{step} = W_{read}(B) + B\cdot\text{ctx}\cdot 2\,L\,n_{kv}\,d_h\,b_{kv}"
        )
        st.latex(r"\text{FLOPs}_{step} = 2\,N_{matmul}\,B + 4\,L\,n_h\,d_h\,\text{ctx}\,B")
        st.markdown(
            "N_matmul is the active parameters without an untied input-embedding table (a "
            "lookup, not a matrix multiply): only the layers and the output head do FLOPs. "
            "ctx is the context a layer attends to, averaged over the layers: a model with "
            "sliding-window layers (gpt-oss: 128 tokens on half its layers; Gemma 3: 1024 on "
            "five of six) reads (1 − f)·ctx + f·min(ctx, window) with f the window layers' share "
            "(and keeps at most window − 1 + a prefill chunk of a window layer's KV: vLLM "
            "frees the rest, so more sequences fit). "
            "Mixture of experts: a batch of B touches about "
            "E·(1 − (1 − k/E)^B) distinct experts, so the weights read grow from the active "
            "parameters at batch 1 toward all of them."
        )
        st.markdown(
            "T_host holds the engine's host work per step and the fixed GPU work a layer pays "
            "whatever its bytes: a mixture-of-experts layer's routing (about 20-40 µs, plus "
            "0.24-0.36 µs per distinct expert touched) and a latent-attention (MLA) layer's dozen "
            "small kernels (DeepSeek-V3/R1: about 97 µs per layer in vLLM, 38 µs in SGLang), "
            "from kernel timings measured in CUDA graphs (engine profile, `presets/engines.yaml`)."
        )
        st.markdown(
            f"**Roofline** (Williams, Waterman, Patterson 2009; {SOURCE_NAMES['roofline']})"
        )
        st.latex(
            r"\text{AI} = \frac{\text{FLOPs}}{\text{bytes}},\qquad "
            r"\text{Perf} = \min(\text{peak},\ \text{BW}\times\text{AI}),\qquad "
            r"\text{AI}_{ridge} = \frac{\text{peak}}{\text{BW}}"
        )
        st.markdown(
            f"The roofline post writes AI ≈ 2B (B the batch): that holds for 1-byte weights. "
            f"Here the weights are **{weights_dtype}** and AI is computed exactly (BF16 decode: "
            f"AI ≈ B). The compute roof used is **{compute_dtype}** (INT4 weights are multiplied in 16-bit)."
        )
        st.markdown(f"**Step time** ({SOURCE_NAMES['roofline']}; {SOURCE_NAMES['qa']})")
        st.latex(
            r"T_{mem} = \frac{\text{bytes/GPU}}{\text{BW}\cdot\eta_{bw}},\quad "
            r"T_{cmp} = \frac{\text{FLOPs/GPU}}{\text{peak}\cdot\eta_{flops}},\quad "
            r"T_{gpu} = \max(T_{mem}, T_{cmp}) + T_{allreduce}"
        )
        st.markdown(
            "That is the source posts' roofline: the whole step at one roof. The vLLM and "
            "SGLang profiles (from revision 2026.12.8) time a step's GEMMs and its attention as "
            "the separate kernels they are, each at its own roof, so a large batch whose GEMMs "
            "are compute-bound still pays its KV read:"
        )
        st.latex(
            r"T_{gpu} = \max(T^{gemm}_{mem}, T^{gemm}_{cmp}) + "
            r"\max(T^{attn}_{mem}, T^{attn}_{cmp}) + T_{allreduce}"
        )
        st.latex(
            r"T_{step} = T_{gpu} + N_{launch}\,\tau + T_{host}\ \ (\text{additive}),\qquad "
            r"T_{step} = \max(T_{gpu}, N_{launch}\tau) + T_{host}\ \ (\text{pipelined})"
        )
        st.latex(
            r"T_{allreduce} = 2L\left(\frac{2(p-1)}{p}\cdot\frac{B\cdot h\cdot 2}{BW_{link}}"
            r" + t_{lat}\right)"
        )
        st.markdown(
            "Launches per step: N = layers × kernels per layer (eager); one replay (≈ τ) with "
            "a full graph; 2·layers + 1 with piecewise graphs (attention stays eager). A batch "
            "is padded up to the next captured size; above the largest it runs eager."
        )
        st.latex(
            r"\text{tok/s} = \frac{B}{T_{step}},\qquad "
            r"\text{Amdahl: } S = \frac{1}{(1-f) + f/s}"
        )
        st.markdown(
            f"Sources: {SOURCE_TITLES['roofline']}: 'The bare mechanism', 'The maths that "
            f"matter: a 3B on a 4090', consequence (d); {SOURCE_TITLES['qa']}: T_eager ≈ "
            "T_compute + Nτ, T_graph ≈ T_compute + τ. Every hardware and model figure cites its "
            "datasheet or model config in the app's preset files."
        )


def launch_formulas() -> None:
    box = st.expander("Formulas and sources", key="x_formulas_launch", on_change="rerun")
    if not box.open:  # built only when opened: the LaTeX costs every run
        return
    with box:
        st.markdown(f"**Launches and the launch tax** ({SOURCE_NAMES['launch']})")
        st.latex(
            r"N = L \times k_{layer}\ (\text{or the kernels override}),\qquad "
            r"T_{launch} = N\,\tau,\qquad \text{ceiling} = \frac{1}{N\,\tau}\ \text{steps/s}"
        )
        st.markdown("80 layers × 10 kernels = 800 launches × 5 µs = 4.0 ms; ceiling 250 tok/s.")
        st.markdown(f"**Eager against graph** ({SOURCE_NAMES['qa']})")
        st.latex(
            r"T_{eager} = T_{gpu} + N\tau + T_{host},\qquad "
            r"T_{graph} = T_{gpu}(B_{pad}) + n_{replay}\,\tau + T_{host}"
        )
        st.latex(
            r"n_{replay} = 1\ (\text{full}),\quad 2L + 1\ (\text{piecewise: attention eager}),"
            r"\quad N\ (\text{none, or } B > \max\text{bucket})"
        )
        st.latex(
            r"\text{speed-up} = \frac{T_{eager}}{T_{graph}},\qquad "
            r"\text{launch tax} = \frac{N\tau}{T_{gpu}},\qquad "
            r"\text{Amdahl: } f = \frac{(N - n_{replay})\tau}{T_{eager}},\ "
            r"S = \frac{1}{1 - f}"
        )
        st.markdown(
            "Pipelined launches (CPU overlaps the GPU): T = max(T_gpu, n·τ) + T_host. "
            "The CUDA graphs Q&A post's N = 430, τ = 5 µs at 1 TB/s: 5.5 GiB → 5.9 / 8.1 / 5.9 ms, 1.36×, tax "
            "36 %; 14.2 GiB → 15.2 / 17.4 / 15.3 ms, 1.14×, tax 14 %."
        )
        st.markdown(
            f"**Buckets, capture and memory** ({SOURCE_NAMES['launch']}; vLLM's start-up logs)"
        )
        st.latex(
            r"B_{pad} = \min\{c \in \text{capture sizes} : c \ge B\},\qquad "
            r"\text{waste} = \frac{B_{pad} - B}{B_{pad}} \in [0, 1)"
        )
        st.latex(
            r"G = |\text{sizes}| \times (2\ \text{full\_and\_piecewise},\ 1\ \text{otherwise}),"
            r"\quad T_{capture} = G \cdot s_{graph},\quad M_{graphs} = G \cdot m_{graph}"
        )
        st.markdown(
            "Padding costs compute (the padded batch is multiplied) but not KV reads (the "
            "phantom sequences have no cache). So when a step is compute-bound and few launches "
            "are saved, a graph step can be slower than eager: the kernel-launch post's 'it grows "
            "if the "
            "buckets are badly chosen'. Graph memory comes out of the KV cache, so the maximum "
            "batch drops."
        )
        st.markdown(
            f"Sources: {SOURCE_TITLES['launch']}: 'The maths that matters', 'vLLM's CUDA "
            "graphs, specifically', 'The 10 knobs worth touching'; "
            f"{SOURCE_TITLES['qa']}: its step-time model and 'Quantized models benefit more'; "
            "published vLLM start-up logs (capture seconds and GiB); vLLM's CUDA graphs "
            "design notes (https://docs.vllm.ai/en/stable/design/cuda_graphs/)."
        )


def cold_start_formulas() -> None:
    box = st.expander("Formulas and sources", key="x_formulas_cold", on_change="rerun")
    if not box.open:  # built only when opened: the LaTeX costs every run
        return
    with box:
        st.markdown(
            f"**The five items** ({SOURCE_NAMES['cold_start']}, 'The five line items of cold "
            "start')"
        )
        st.latex(
            r"T_{ready} = \underbrace{T_{init} + T_{ctx} + T_{alloc}}_{\text{floor}}"
            r" + T_{weights} + T_{graphs+JIT}"
        )
        st.markdown("**Item 4: the weights** ('The maths of the weights: t = W/B')")
        st.latex(
            r"BW_{read} = \min(BW_{tier},\ BW_{stream}\times\text{concurrency}),\quad "
            r"t_{read} = \frac{W}{BW_{read}},\quad t_{H2D} = \frac{W / \text{gpus}}{BW_{PCIe}}"
        )
        st.latex(
            r"t_{series} = t_{read} + t_{H2D}\ (\text{safetensors}),\qquad "
            r"t_{overlapped} = \max(t_{read}, t_{H2D})\ (\text{streamer, Tensorizer})"
        )
        st.markdown(
            "The storage is read once and shared; each GPU copies its own shard in parallel. "
            "pickle adds one pass of the whole checkpoint through host memory. 70 GB from NVMe "
            "at 14 GB/s and PCIe at 50 GB/s: read 5.0 s, H2D 1.4 s, series 6.4 s, overlapped "
            "5.0 s; from 5 GB/s storage 15.4 s against 14 s."
        )
        st.markdown("**Item 5: torch.compile and CUDA graph capture**")
        st.latex(
            r"T_{graphs+JIT} = T_{compile}\ (\text{cold, or cached}) + G \cdot s_{graph},\quad "
            r"G = |\text{sizes}|\times(2\text{ full\_and\_piecewise, else }1)"
        )
        st.markdown(
            "Eager (CUDA graphs: none): no compile and no capture, item 5 = 0. Cold compile "
            "~24 s against ~5 s from the cache; ~0.3 s per graph, so vLLM's 51 sizes × 2 ≈ 31 s "
            "and the bounded 1, 2, 4, 8, 16, 24, 32, 64 × 2 ≈ 5 s (this app's reading of "
            f"{SOURCE_TITLES['cold_start']}; published vLLM logs: torch.compile 19–20 s cold, 1.5–7.5 s "
            "cached)."
        )
        st.markdown("**Sleep mode and the optimised counterpart**")
        st.latex(
            r"T_{wake,1} = t_{H2D}\ (\text{from host RAM}),\qquad "
            r"T_{wake,2} = T_{weights}\ (\text{from storage}),\qquad T_{warm} = 0"
        )
        st.markdown(
            "Optimised = an overlapping loader at its default streams (Run:ai streamer, 16), a "
            "warm compile cache, the bounded capture sizes (plus the bucket of the scenario's "
            "batch), and process init at most ~3 s (lean environment). The post's 70B FP8 example: "
            "~93 s → ~28 s; only item 4 ~73 s; only item 5 ~49 s."
        )
        st.markdown(
            f"Sources: {SOURCE_TITLES['cold_start']}: 'The five line items', 'The maths of "
            "the weights', 'The storage tier', 'Bounding the CUDA graph capture', 'Sleep "
            "mode', 'An example cold start, item by item'; NVIDIA, Reducing Cold Start "
            "Latency (Run:ai Model Streamer); vLLM docs for the loaders; vLLM blog, Sleep "
            "Mode; published vLLM start-up logs. Every loader and storage value cites its "
            "source (Capture sizes tab)."
        )


def economics_formulas() -> None:
    box = st.expander("Formulas and sources", key="x_formulas_economics", on_change="rerun")
    if not box.open:
        return
    with box:
        st.markdown(
            "**Poisson arrivals per hour of day** (traffic profiles; rate λ, idle timeout T, "
            "cold start C), per unit of time:"
        )
        st.latex(
            r"\text{starts} = \lambda e^{-\lambda T},\quad "
            r"\text{up} = \min\!\big(1,\ (1-e^{-\lambda T}) + \lambda e^{-\lambda T} C\big),\quad "
            r"\text{delayed} \approx \lambda e^{-\lambda T}(1+\lambda C)"
        )
        st.markdown(
            "At an hour boundary the replica is down with probability e^(−λ_prev·T) rather than "
            "e^(−λT); the first request of a busier hour pays the difference as extra starts "
            "(the start after a quiet night). The model ignores service time and queueing for "
            "capacity: it is exact when λ × (service time) ≪ 1. Replicas beyond the first are "
            "what each hour needs above one replica's capacity, paid alike by every strategy."
        )
        st.markdown(
            "**Trace replay**: every request in order. A request keeps its replica busy for "
            "TTFT + output tokens × TPOT; the idle timer starts when the last request in flight "
            "finishes; a gap over T stops the replica; the next request waits C, as does every "
            "request arriving while it starts."
        )
        st.latex(
            r"\text{cost/day} = \text{GPU-hours}\times\text{price} + "
            r"\text{SLA misses}\times\text{penalty}"
        )
        st.caption(
            f"Sources: {SOURCE_TITLES['cold_start']}: 'The economics of scale-to-zero'; Kleinrock, "
            "Queueing Systems vol. 1 (1975), §2.4 for the Poisson gap probability. The cold "
            "start, wake time and the replica's capacity come from the Cold start and Roofline "
            "lenses for the same scenario."
        )


def serving_formulas() -> None:
    box = st.expander(
        "Formulas, sources and what the model leaves out",
        key="x_formulas_serving",
        on_change="rerun",
    )
    if not box.open:
        return
    with box:
        st.markdown(
            "**The server** runs as vLLM V1 schedules it, one engine step at a time: one decode "
            "token for every running sequence, then prefill chunks (running ones first, then "
            "waiting ones, first come first served) up to `max_num_batched_tokens` tokens and "
            "`max_num_seqs` sequences. The KV cache (the Roofline lens's capacity) is paged in "
            "16-token blocks; a waiting request is admitted only when its chunk's blocks are "
            "free, and when a running sequence needs a block that is not free the newest one is "
            "preempted and later recomputed (Kwon et al., SOSP 2023; vLLM's scheduler); with "
            "prefix caching on, its whole blocks stay cached until evicted, so the recompute "
            "skips what is still there, and a step that preempted admits no waiting request."
        )
        st.markdown("**A step's time** for d decodes with contexts c_i and prefill chunks p_j:")
        st.latex(
            r"t_\text{step} = \max\!\Big(\tfrac{W(d+\sum p_j)/\text{TP} + "
            r"(\sum c_i + \sum (s_j + p_j))\,\text{kv}/\text{shards}}{\text{BW}\,\eta_\text{bw}},\;"
            r"\tfrac{F_\text{dec}}{P\,\eta_\text{dec}} + \tfrac{F_\text{pre}}{P\,\eta_\text{pre}}"
            r"\Big) + t_\text{all-reduce} + t_\text{launch} + t_\text{host}"
        )
        st.markdown(
            "the same terms as the Roofline lens's decode step and prefill (weights read once "
            "per step, every sequence's KV read (sliding-window layers read at most their "
            "window), 2 × active params (less an untied input table) FLOPs per token plus "
            "attention); a decode-only step is exactly the Roofline lens's step at that batch "
            "and mean context; with the vLLM and SGLang profiles the GEMMs' roof and the "
            "attention kernel's (every KV read against the attention FLOPs) add, as on the "
            "Roofline lens. Between events (an arrival the scheduler could admit, a sequence "
            "finishing, the cache filling) a batch's steps differ only by one token of context "
            "each, so they are added up in closed form. Each request also pays the engine's "
            "front-end time (HTTP, chat template, tokenisation) before it is scheduled."
        )
        st.markdown(
            "**The clients** are `vllm bench serve`'s: gamma inter-arrival times of shape "
            "`burstiness` and mean 1/rate, at most `max_concurrency` in flight. **The figures** "
            "are vLLM's: TTFT from the moment the client sends; TPOT = (e2el − TTFT)/(output − "
            "1) per request; ITL every gap between two tokens; goodput the requests per second "
            "meeting both objectives."
        )
        st.latex(
            r"\text{max rate} = \max\{\lambda : \Pr[\text{TTFT}\le\text{SLO}_\text{TTFT} \wedge "
            r"\text{TPOT}\le\text{SLO}_\text{TPOT}] \ge a\},\qquad "
            r"\text{replicas} = \lceil \lambda_\text{scenario} / \text{max rate}\rceil"
        )
        st.markdown(
            "Checked against queueing theory: with `max_num_seqs=1` and fixed lengths the mean "
            "wait is M/D/1's ρS/(2(1−ρ)); below saturation the served rate is the offered rate; "
            "at light load a request sees the Request row of the Roofline lens. Against "
            "published serving runs, see the README's fidelity table."
        )
        st.markdown(
            "**Speculative decoding** (docs/speculative.md): a decode verifies k + 1 tokens per "
            "step after k drafter steps and emits (1 − α^(k+1)) / (1 − α) on average, drawn per "
            "sequence and step. **Left out:** disaggregated prefill, expert parallelism, "
            "priorities other than first come first served, the sampler's and detokeniser's "
            "time per token beyond the engine's host work, network time between client and "
            "server, and the jitter of real clients (identical requests started together stay "
            "in step here, so a closed loop of fixed lengths prefills in waves). Lengths drawn "
            "from a distribution draw prompt and output independently."
        )
