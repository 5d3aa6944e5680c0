"""The Plan page in a real browser (issue 43): the plan fills from the worker pool, a row's link
opens that configuration on Serving with the same replicas, the Serving page's commands carry
the scenario's values, and a rate that cannot be planned is refused with the page working."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import urlsplit

from .conftest import (
    REPO_ROOT,
    WAIT_MS,
    assert_no_exception,
    open_page,
    require_chromium,
    wait_idle,
    wait_metrics,
)

require_chromium()

QUERY = "scenario=llama-8b-1xh100&request_rate=4&num_requests=300"


def test_a_plans_link_opens_the_configuration_on_serving(page, app_url):
    open_page(page, f"{app_url}/Plan?{QUERY}")
    shown = wait_metrics(page, lambda m: "Cheapest GPU" in m)
    gpus = int(shown["GPUs"])
    assert float(shown["USD per hour"]) > 0
    main = page.locator('[data-testid="stMain"]')
    main.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=WAIT_MS)
    wait_idle(page)
    assert "Still running" not in main.inner_text()
    # the cheapest row's link: the table is a canvas, so the link is the CLI's plan of the
    # same scenario (the same rows), which must agree with the page's headline
    cmd = [sys.executable, "-m", "whatif", "plan", "--json", "--jobs", "1", "--base", app_url]
    for pair in QUERY.split("&"):
        cmd += ["--set", pair]
    done = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    best = json.loads(done.stdout)["plans"][0]
    assert best["gpus_total"] == gpus
    link = urlsplit(best["link"])
    open_page(page, f"{app_url}{link.path}?{link.query}")
    serving = wait_metrics(page, lambda m: "GPUs needed" in m and m["GPUs needed"] != "–")
    assert int(serving["GPUs needed"].replace(",", "")) == best["gpus_total"]
    assert_no_exception(page)
    # the commands of that configuration, in "Run this on your cluster"
    page.get_by_text("Run this on your cluster", exact=True).first.click()
    code = main.locator('[data-testid="stCode"]').filter(has_text="vllm serve").first
    code.wait_for(timeout=WAIT_MS)
    text = code.inner_text()
    assert f"--tensor-parallel-size {best['tensor_parallel']}" in text
    assert "meta-llama/Llama-3.1-8B" in text


def test_an_infinite_rate_is_refused_and_the_page_works(page, app_url):
    page.goto(f"{app_url}/Plan?scenario=llama-8b-1xh100&request_rate=inf")
    alert = page.locator('[data-testid="stAlertContainer"], [data-testid="stAlert"]')
    alert.filter(has_text="finite rate").first.wait_for(timeout=WAIT_MS)
    wait_idle(page)
    assert_no_exception(page)
    assert "Traceback" not in page.content()
