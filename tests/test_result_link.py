"""A benchmark result comes back (issue 43, section 3): the ``vllm bench serve`` result that
``whatif commands`` writes carries the scenario's link in its metadata; the importer keeps it,
the Measurements page says when it is this scenario's and opens the one it names otherwise. A
link in a file is user data: too long, empty or naming a refused scenario is said by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model import codecs, commands
from model.overrides import resolve
from model.readers import importers
from model.readers.setup import linked_scenario
from tests.test_measurements_page import fresh, paste, run
from ui.lenses import PAGE_OF

ROOT = Path(__file__).resolve().parent.parent
SERVE = json.loads((ROOT / "tests" / "data" / "bench" / "serve_new.json").read_text())
OTHER = [("scenario", "llama-8b-1xh100"), ("request_rate", "4"), ("num_requests", "300")]


def _result(link: str) -> bytes:
    return json.dumps({**SERVE, "whatif_link": link}).encode()


def _link(pairs) -> str:
    s = resolve(pairs, strict=True)[0]
    cmd, _ = commands.vllm_bench_serve(
        s, codecs.to_url(s, PAGE_OF["serving"].url(codecs.DEFAULT_BASE_URL))
    )
    a = cmd.argv
    return a[a.index("--metadata") + 1].partition("=")[2]  # what the benchmark stores


def test_the_importer_keeps_the_link_the_bench_command_stores():
    link = _link(OTHER)
    ds = importers.import_file("result.json", _result(link))
    assert ds.conditions["whatif_link"] == link
    linked, why = linked_scenario(ds.conditions)
    assert why is None and linked.model.id == "llama-3.1-8b" and linked.request_rate == 4


@pytest.mark.parametrize(
    ("link", "needle"),
    [
        ("http://x/Serving", "no scenario"),
        ("http://x/Serving?gpus=0", "refuses"),
        ("http://x/Serving?" + "a=b&" * 1500, "longer than"),
    ],
)
def test_a_bad_link_is_named_not_followed(link, needle):
    ds = importers.import_file("result.json", _result(link))
    linked, why = linked_scenario(ds.conditions)
    assert linked is None and needle in why


def test_a_link_past_the_importers_limit_is_a_problem_of_the_file():
    ds = importers.import_file("result.json", _result("http://x/?" + "a" * 9000))
    assert "whatif_link" not in ds.conditions
    assert any("whatif_link" in str(p) for p in ds.problems)


def test_the_page_opens_the_scenario_a_result_names():
    at = paste(fresh(), _result(_link(OTHER)).decode())
    assert any("was run for another scenario" in i.value for i in at.info), [
        i.value for i in at.info
    ]
    [b for b in at.button if b.label.startswith("Open the scenario")][0].click()
    run(at)
    assert at.query_params.get("scenario") in ("llama-8b-1xh100", ["llama-8b-1xh100"])
    assert any("is the benchmark of this scenario" in x.value for x in at.success)
