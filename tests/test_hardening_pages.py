"""Every page at the corners of the bounds (AppTest): no exception, and no ``inf`` or ``nan``
in any figure a person reads (metrics, their help, tables, alerts). Hardening issue, part 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from .test_hardening import LOW  # the bounds' lower corner, one definition

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["app.py", "pages/1_Roofline.py", "pages/3_Launch_overhead.py", "pages/4_Cold_start.py"]
NOT_A_NUMBER = re.compile(r"(?<![A-Za-z])(inf|nan|Infinity|NaN)(?![A-Za-z])")

CORNERS = {
    "vanishing divisors": {
        k: LOW[k]
        for k in (
            "bw_efficiency",
            "flops_efficiency",
            "launch_us",
            "weights_gb",
            "hardware.hbm_bandwidth_tb_s",
            "hardware.h2d_gb_s",
            "storage_gb_s",
            "stream_gb_s",
            "host_ms",
            "context_tokens",
        )
    },
    "zero overheads": {
        "host_ms": "0",
        "process_init_s": "0",
        "cuda_context_s": "0",
        "allocator_s": "0",
        "compile_s": "0",
        "capture_s_per_graph": "0",
        "graph_mb_per_graph": "0",
        "sleep_level": "1",
    },
    "everything at its top": {
        "batch": "65536",
        "context_tokens": "10000000",
        "kernels": "1000000",
        "launch_us": "1000",
        "host_ms": "1000",
        "model.params_b": "100000",
        "gpus": "64",
        "sleep_level": "2",
    },
}


def _texts(at: AppTest) -> list[str]:
    out = []
    for m in at.metric:
        out += [str(m.label), str(m.value), str(m.proto.help or "")]
    for kind in (at.markdown, at.caption, at.info, at.warning, at.error, at.success):
        out += [str(e.value) for e in kind]
    for frame in at.dataframe:
        out += [str(v) for v in frame.value.astype(str).to_numpy().ravel()]
    return out


@pytest.mark.parametrize("corner", list(CORNERS))
@pytest.mark.parametrize("page", PAGES)
def test_pages_show_no_inf_or_nan_at_the_corners(page, corner):
    at = AppTest.from_file(str(ROOT / page), default_timeout=90)
    for key, value in CORNERS[corner].items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.warning or all("not accepted" not in w.value for w in at.warning)
    bad = [t for t in _texts(at) if NOT_A_NUMBER.search(t)]
    assert not bad, bad[:5]
