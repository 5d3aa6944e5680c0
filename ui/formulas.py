"""Formula panels (``st.latex``) with the seed references behind them."""

from __future__ import annotations

import streamlit as st


def roofline_formulas(compute_dtype: str, weights_dtype: str) -> None:
    with st.expander("Formulas and sources"):
        st.markdown("**Bytes and FLOPs of one decode step** (SPEC 4.1)")
        st.latex(
            r"W = \text{params}\times\text{bytes/param}\quad(\text{fp32 }4,\ \text{bf16 }2,"
            r"\ \text{fp8/int8 }1,\ \text{int4 }0.5)"
        )
        st.latex(
            r"\text{bytes}_{step} = W_{read}(B) + B\cdot\text{ctx}\cdot 2\,L\,n_{kv}\,d_h\,b_{kv}"
        )
        st.latex(r"\text{FLOPs}_{step} = 2\,N_{active}\,B + 4\,L\,n_h\,d_h\,\text{ctx}\,B")
        st.markdown(
            "Mixture of experts: a batch of B touches about "
            "E·(1 − (1 − k/E)^B) distinct experts, so the weights read grow from the active "
            "parameters at batch 1 toward all of them."
        )
        st.markdown("**Roofline** (Williams, Waterman, Patterson 2009; seed *The roofline flips*)")
        st.latex(
            r"\text{AI} = \frac{\text{FLOPs}}{\text{bytes}},\qquad "
            r"\text{Perf} = \min(\text{peak},\ \text{BW}\times\text{AI}),\qquad "
            r"\text{AI}_{ridge} = \frac{\text{peak}}{\text{BW}}"
        )
        st.markdown(
            f"The seeds write AI ≈ 2B: that holds for 1-byte weights. Here the weights are "
            f"**{weights_dtype}** and AI is computed exactly (BF16 decode: AI ≈ B). The compute "
            f"roof used is **{compute_dtype}** (INT4 weights are multiplied in 16-bit)."
        )
        st.markdown("**Step time** (seed *The roofline flips*; CUDA graphs Q&A)")
        st.latex(
            r"T_{mem} = \frac{\text{bytes/GPU}}{\text{BW}\cdot\eta_{bw}},\quad "
            r"T_{cmp} = \frac{\text{FLOPs/GPU}}{\text{peak}\cdot\eta_{flops}},\quad "
            r"T_{gpu} = \max(T_{mem}, T_{cmp}) + T_{allreduce}"
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
            "Sources: seed *The roofline flips* ('The bare mechanism', 'The maths that matter: "
            "a 3B on a 4090', consequence (d)); seed *CUDA graphs & kernel fusion* Q&A "
            "(T_eager ≈ T_compute + Nτ, T_graph ≈ T_compute + τ); hardware and model figures "
            "cite their datasheets and configs in `presets/`."
        )
