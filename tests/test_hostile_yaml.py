"""Hostile YAML (scenario files, uploads, the CLI): every door judges before it expands and
refuses with one line, in bounded work and memory: alias bombs (sequence and mapping, under
``hardware:``), recursive anchors, deep nesting, non-text keys, huge integers and non-plain
values."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import pytest
import yaml

from model import codecs, safeyaml
from model.errors import ScenarioError
from model.overrides import resolve
from tests.helpers import hang_guard


def laughs(levels: int = 9, width: int = 9) -> str:
    """The classic "billion laughs": each level repeats the previous one ``width`` times."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    lines.append(f"batch: *l{levels - 1}")
    return "\n".join(lines) + "\n"


def mapping_bomb(levels: int = 6, width: int = 8) -> str:
    """Aliased mappings under ``hardware:`` (flattened into dotted keys if expanded)."""
    keys = [f"k{j}" for j in range(width)]
    lines = ["m0: &m0 {" + ", ".join(f"{k}: 1" for k in keys) + "}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{" + ", ".join(f"{k}: *m{i - 1}" for k in keys) + "}")
    lines.append(f"hardware: *m{levels - 1}")
    return "\n".join(lines) + "\n"


HOSTILE = {
    "laughs": (laughs(), "expands to more than"),
    "mapping bomb under hardware": (mapping_bomb(), "expands to more than"),
    "merge-key bomb": (
        "a: &a {x: 1, y: 2}\n"
        + "".join(
            f"b{i}: &b{i} {{<<: [{', '.join([f'*b{i - 1}' if i else '*a'] * 8)}]}}\n"
            for i in range(8)
        ),
        "more than",
    ),
    "recursive sequence": ("a: &a [1, *a]\n", "refers to itself"),
    "recursive mapping": ("hardware: &h {name: x, more: *h}\n", "refers to itself"),
    "deep flow nesting": ("batch: " + "[" * 400 + "]" * 400 + "\n", "levels deep"),
    "deep block nesting": (
        "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "1\n",
        "levels deep",
    ),
    "integer key": ("1: 2\n", "keys must be text"),
    "null key": ("~: 2\n", "keys must be text"),
    "list key": ("? [a, b]\n: 1\n", "keys must be text"),
    "nested integer key": ("hardware:\n  peak_tflops: {8: 1}\n", "keys must be text"),
    "integer of thousands of digits": ("batch: " + "9" * 4299 + "\n", "characters"),
    "integer past Python's digit limit": ("batch: " + "7" * 9000 + "\n", "characters"),
    "integer of 30 digits": ("batch: " + "9" * 30 + "\n", "integer of about"),
    "date": ("batch: 2024-01-01\n", "a date"),
    "binary": ("batch: !!binary aGVsbG8=\n", "binary"),
    "set": ("batch: !!set {a, b}\n", "a set"),
    "python tag": ("batch: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
    "undefined alias": ("batch: *nowhere\n", "has no anchor"),
    "too many aliases": (
        "a: &a 1\nb: [" + ", ".join(["*a"] * 150) + "]\n",
        "aliases",
    ),
    "a value too long": ("model: {name: " + "x" * 5000 + "}\n", "characters"),
    "too many keys": (
        "hardware:\n  sources:\n" + "".join(f"    k{i}: v\n" for i in range(3000)),
        "more than",
    ),
}


@pytest.fixture
def yaml_work(monkeypatch):
    """What reading YAML costs, counted rather than timed: the parser events the judge walks
    (``yaml.parse``) and the values the loader builds (``construct_object`` calls)."""
    work = {"events": 0, "built": 0}
    parse, construct = yaml.parse, safeyaml._LOADER.construct_object

    def counted_parse(*args, **kwargs):
        for event in parse(*args, **kwargs):
            work["events"] += 1
            yield event

    def counted_construct(self, node, deep=False):
        work["built"] += 1
        return construct(self, node, deep)

    monkeypatch.setattr(yaml, "parse", counted_parse)
    monkeypatch.setattr(safeyaml._LOADER, "construct_object", counted_construct)
    return work


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_yaml_is_refused_in_bounded_work_and_memory(name, yaml_work):
    text, words = HOSTILE[name]
    tracemalloc.start()
    with hang_guard(10, name), pytest.raises(ScenarioError) as info:
        codecs.yaml_items(text, "YAML file")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert words in str(info.value), str(info.value)
    assert str(info.value).startswith("YAML file: ")
    assert "\n" not in str(info.value) and len(str(info.value)) < 400
    # the work is bounded by the bounds, never by what the text would expand to
    assert yaml_work["events"] <= safeyaml.MAX_EVENTS + 2, f"{name}: {yaml_work}"
    assert yaml_work["built"] <= safeyaml.MAX_NODES, f"{name}: {yaml_work}"
    assert peak < 20e6, f"{name}: {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_upload_returns_one_error_and_no_scenario(name):
    text, words = HOSTILE[name]
    scenario, errors = codecs.from_yaml_upload(text.encode())
    assert scenario is None and len(errors) == 1 and words in str(errors[0])


def under_the_node_bound() -> str:
    # 3**6 = 729 leaves repeated through six anchors: about 2,200 values, under the bound
    return laughs(levels=6, width=3).replace("batch: *l5", "description: *l4")


def test_a_bomb_just_under_the_node_bound_is_still_cheap(yaml_work):
    with hang_guard(10):
        data = codecs.yaml_items(under_the_node_bound())
    assert len(data["description"]) == 3
    # each anchor is walked and built once (a few dozen), never once per expanded value
    assert yaml_work["events"] < 100 and yaml_work["built"] < 100, yaml_work
    assert data["description"][0] is data["description"][1]  # an alias shares, not copies


def test_aliases_that_stay_small_are_fine():
    data = codecs.yaml_items("a: &x 8\nbatch: *x\nhardware: &h {id: h100-sxm}\n")
    assert data["batch"] == 8 and data["hardware"] == {"id": "h100-sxm"}


@pytest.mark.parametrize("name", ["laughs", "mapping bomb under hardware", "integer key"])
def test_cli_refuses_hostile_files_with_one_line_and_status_2(tmp_path, name):
    text, words = HOSTILE[name]
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard only; the time it takes is in benchmarks/suite_timings.py
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr and words in lines[0]


def test_cli_refuses_a_directory_and_a_huge_file(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "not a regular file" in proc.stderr
    big = tmp_path / "big.yaml"
    big.write_text("#" * (codecs.MAX_YAML_BYTES + 10))
    proc = subprocess.run(
        [sys.executable, "-m", "whatif", "eval", str(big)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "larger than" in proc.stderr


def test_error_messages_never_expand_a_value():
    # a large (but allowed) nested value in a bad place: the message quotes a few items only
    value = [[list(range(50))] * 50] * 2
    _, errors = resolve([("batch", value)], strict=False)
    assert len(errors) == 1 and len(str(errors[0])) < 400


# ----------------------------------------------------------------------------- bounds


# ----------------------------------------------------------------------------- the wheel
