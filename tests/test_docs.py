"""What a newcomer reads and starts: the README's tour is one table, the app listens on this
machine only by default, and the landing page and page list are as the registry declares."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_app_listens_on_this_machine_only_by_default():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "localhost"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--server.address 0.0.0.0" in readme


def test_the_readmes_tour_table_is_one_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A short tour", 1)[1].split("\n## ", 1)[0]
    lines = tour.strip().splitlines()
    table = lines[: next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    pages = ["Home", "Roofline", "Launch overhead", "Cold start", "Scale to zero", "Compare"]
    for page in [*pages, "Measurements", "Serving"]:
        assert any(f"**{page}**" in row for row in table), page


def test_the_landing_page_is_listed_as_home():
    import tomllib

    from ui.lenses import PAGES

    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())
    assert config["client"]["showSidebarNavigation"] is False
    assert (PAGES[0].file, PAGES[0].label) == ("app.py", "Home")
    assert sorted(p.file for p in PAGES[1:]) == sorted(
        f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py")
    )


def test_every_page_with_tabs_uses_lazy_tabs_and_the_others_are_listed():
    from ui.lenses import PAGES

    for page in PAGES:
        has_tabs = "page_tabs(" in (ROOT / page.file).read_text()
        assert has_tabs == page.has_tabs, page.file
