import os
import tempfile

import pytest

from model.overrides import resolve

# Uploads the tests make (AppTest sessions and the browser suite's servers, which inherit the
# environment) go to a store of their own, never the user's ~/.local/share/inference-whatif.
os.environ["WHATIF_DATA_DIR"] = tempfile.mkdtemp(prefix="whatif-test-store-")
os.environ.pop("WHATIF_DATABASE_URL", None)  # SQLite unless a test sets up PostgreSQL
# AppTest has no browser to paint the headline first: no pause between it and the rest of the
# page (ui.page.HEADLINE_PAUSE_S; tests/test_app.py checks the pause itself)
os.environ.setdefault("WHATIF_HEADLINE_PAUSE_MS", "0")


@pytest.fixture
def scenario():
    """Build a scenario from key=value overrides, strictly (the CLI's path)."""

    def build(**overrides):
        pairs = [(k.replace("__", "."), v) for k, v in overrides.items()]
        return resolve(pairs, strict=True)[0]

    return build


@pytest.fixture
def app_page():
    """Open a page under AppTest with a link query (:func:`tests.pages.open_page`):
    ``app_page("pages/1_Roofline.py", scenario="seed-3b-4090")`` (the browser suite's
    ``page`` is Playwright's)."""
    from tests.pages import open_page

    return open_page
