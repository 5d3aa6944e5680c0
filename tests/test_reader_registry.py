"""The reader registry (issue 41, item 4): every measurement format declared once, in its own
module, and everything that names the accepted formats derived from the declarations."""

from __future__ import annotations

import pytest

from model.errors import ScenarioError
from model.readers import bench_import, importers, registry
from model.readers.measurements import STAGES, Reader


@pytest.fixture
def fresh_registry(monkeypatch):
    """A registry that collects the readers again (after a test adds a module)."""
    monkeypatch.setattr(registry, "_READERS", {})
    monkeypatch.setattr(registry, "_LOADED", False)
    yield registry
    # the monkeypatch restores the collected registry


def test_every_reader_module_declares_its_readers():
    modules = registry.reader_modules()
    names = [m.__name__ for m in modules]
    # every module of the formats package is found by listing it, without a list to edit
    for expected in (
        "model.readers.formats.serve_json",
        "model.readers.formats.serve_table",
        "model.readers.formats.json_list",
        "model.readers.formats.sweep",
        "model.readers.formats.latency_throughput",
        "model.readers.formats.startup",
        "model.readers.formats.genai_perf",
        "model.readers.csv_import",
        "model.readers.vllm_log",
    ):
        assert expected in names
    for module in modules:
        if module.__name__.endswith(".common"):
            assert not getattr(module, "READERS", ())  # shared helpers, no format of its own
            continue
        declared = module.READERS
        assert declared and all(isinstance(r, Reader) for r in declared), module.__name__


def test_readers_are_well_formed_and_ordered():
    readers = registry.readers()
    assert len({r.name for r in readers}) == len(readers)
    for r in readers:
        assert r.stage in STAGES and r.formats and callable(r.recognise) and callable(r.read)
    # within a stage, the order is the declared one; stages in STAGES order
    keys = [(STAGES.index(r.stage), r.order) for r in readers]
    assert keys == sorted(keys)
    # every stage has a reader; the log reader is the last resort
    assert {r.stage for r in readers} == set(STAGES)
    assert [r.name for r in registry.readers("log")] == ["vllm_log"]


def test_the_accepted_sentences_are_made_from_the_declarations():
    sentence = registry.accepted()
    for r in registry.readers():
        if r.accepted:
            assert r.accepted in sentence, r.name
    json_sentence = registry.accepted_json()
    for r in registry.readers("json"):
        assert r.accepted_json and r.accepted_json in json_sentence, r.name
    # the formats the benchmark readers return are the facade's FORMATS
    bench = {
        f
        for r in registry.readers()
        if r.read.__module__.startswith("model.readers.formats.")
        for f in r.formats
    }
    assert bench == set(bench_import.FORMATS)


def test_refusals_quote_the_derived_sentences():
    with pytest.raises(ScenarioError) as err:
        importers.import_text("nothing any reader knows\n", "x.txt")
    assert registry.accepted() in err.value.message and err.value.key == "x.txt"
    with pytest.raises(ScenarioError) as err:
        importers.import_text('{"a": 1}', "x.json")
    assert registry.accepted_json() in err.value.message


def test_a_new_module_in_the_formats_package_is_a_new_format(tmp_path, fresh_registry):
    """The recipe of docs/extending.md: one module that ends with its READERS, and nothing
    else edited: the importer tries it and the refusals name it."""
    from model.readers import formats

    (tmp_path / "zz_trial_format.py").write_text(
        "from model.readers.measurements import Dataset, Reader\n"
        "\n"
        "def _read(name, text):\n"
        "    ds = Dataset(name, 'trial_text', 'serving')\n"
        "    ds.figures['completed'] = text.count('TRIAL')\n"
        "    return ds\n"
        "\n"
        "READERS = (\n"
        "    Reader(\n"
        "        name='trial_text', stage='text', order=5, formats=('trial_text',),\n"
        "        recognise=lambda text: text.startswith('TRIAL'), read=_read,\n"
        "        accepted='the trial format', shown=99,\n"
        "    ),\n"
        ")\n"
    )
    path = [*formats.__path__, str(tmp_path)]
    try:
        formats.__path__[:] = path
        ds = importers.import_text("TRIAL TRIAL\n", "t.txt")
        assert ds.format == "trial_text" and ds.figures["completed"] == 2
        assert registry.accepted().endswith("the trial format")
    finally:
        formats.__path__[:] = path[:-1]
        import sys

        sys.modules.pop("model.readers.formats.zz_trial_format", None)


def test_a_reader_declared_twice_is_refused(fresh_registry):
    one = registry.readers("log")[0]
    twin = Reader(**{**one.__dict__, "read": lambda name, text: None})
    with pytest.raises(ValueError, match="declared twice"):
        registry._add(twin)
    with pytest.raises(ValueError, match="stage"):
        registry._add(Reader(**{**one.__dict__, "name": "odd", "stage": "binary"}))
