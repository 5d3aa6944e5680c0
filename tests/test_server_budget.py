"""A link cannot take the shared server's time or memory (issue 40, R1/R2): the Serving lens's
work is predicted from the scenario's size before it runs, and a run past the budget is refused
with the command that runs it elsewhere; the CLI runs what it is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from model import serving
from model.overrides import resolve
from tests.pages import open_page

ROOT = Path(__file__).resolve().parent.parent


def scen(*pairs):
    return resolve([(k, str(v)) for k, v in pairs], strict=True)[0]


def test_the_prediction_grows_with_what_makes_a_run_long():
    base = serving.predicted_steps(scen())
    assert serving.predicted_steps(scen(("max_num_batched_tokens", 1))) > 100 * base
    assert serving.predicted_steps(scen(("output_tokens", 65537))) > 100 * base
    assert serving.predicted_steps(scen(("num_requests", 5000))) > base


@pytest.mark.parametrize(
    ("pairs", "says"),
    [
        ((("max_num_batched_tokens", 1),), "max_num_batched_tokens=1"),
        ((("max_num_batched_tokens", 1), ("seed", 2)), "engine steps"),
        ((("num_requests", 1_000_000),), "1,000,000 requests"),
        ((("output_tokens", 65537),), "engine steps"),
    ],
)
def test_the_reported_links_are_refused_with_the_cli_command(pairs, says):
    why = serving.server_refusal(scen(*pairs))
    assert why and says in why
    assert "whatif eval --set" in why and why.endswith("--json")


def test_the_defaults_and_the_named_scenarios_fit_the_budget():
    from model.presets import scenario_names

    assert serving.server_refusal(scen()) is None
    for name in scenario_names():
        assert serving.server_refusal(scen(("scenario", name))) is None, name


def test_the_serving_page_refuses_at_once_and_keeps_working():
    at = open_page("pages/2_Serving.py", pairs=[("max_num_batched_tokens", "1"), ("seed", "1")])
    text = " ".join(e.value for e in at.error)
    assert "Not run here" in text and "whatif eval" in text
    assert at.sidebar  # the rest of the page is there


def test_scale_to_zero_sizes_by_one_request_when_the_search_is_past_the_budget():
    at = open_page("pages/5_Scale_to_zero.py", pairs=[("output_tokens", "65537")])
    page = " ".join(str(getattr(e, "value", "")) for e in at.main)
    assert "shared server" in page


def test_the_cli_is_not_budgeted():
    """The CLI process never sets the budget: a user's own machine runs what it is asked."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import model.serving as s, whatif.cli; print(s.SERVER_BUDGET)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.stdout.strip() == "False"


def test_many_requests_do_not_stop_the_search_that_other_pages_need():
    """The search runs at most 1,000 requests: a link with a million still sizes a replica on
    Scale to zero, while the Serving page refuses the million-request run itself."""
    s = scen(("num_requests", 1_000_000))
    assert serving.server_refusal(s)
    assert not serving.search_over_budget(s)
    assert serving.search_over_budget(scen(("output_tokens", 65537)))
