"""The dispatcher recognises every format from its content, and nothing from outside makes it
raise anything but a ScenarioError naming the file (SPEC 4.5 and 6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.errors import ScenarioError
from model.readers.importers import import_file
from model.readers.measurements import MAX_BYTES

ROOT = Path(__file__).resolve().parent.parent

DATA = Path(__file__).resolve().parent / "data"
EXPECTED_KIND = {
    "logs": {"startup_log"},
    "bench": {"serving", "latency", "throughput"},
}
#: our CSV fixtures that are meant to be refused
BAD_CSV = {"header_only.csv", "ragged.csv", "units_in_cells.csv", "wrong_columns.csv"}


@pytest.mark.parametrize(
    "path",
    sorted(p for d in ("logs", "bench", "csv") for p in (DATA / d).iterdir() if p.is_file()),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_test_file_is_routed_to_its_reader(path):
    if path.name in BAD_CSV:
        try:
            ds = import_file(path.name, path.read_bytes())
        except ScenarioError as err:
            assert err.key == path.name
            return
        assert ds.problems, "a bad CSV is read with its problems listed"
        return
    ds = import_file(path.name, path.read_bytes())
    want = EXPECTED_KIND.get(path.parent.name)
    if want:
        assert ds.kind in want, ds.format
    else:
        assert ds.format.endswith("_csv")


@pytest.mark.parametrize(
    "data, needle",
    [
        (b"", "empty"),
        (b"   \n\n", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
        (b"\xff\xfe\xfa not utf8", "not UTF-8"),
        (b"[1, 2, 3]", "not a benchmark result"),
        (b"null", "no vLLM start-up timing line"),
        (b"a,b,c\n1,2,3\n", "none of the accepted formats"),
        (b"x" * (MAX_BYTES + 1), "larger than"),
    ],
)
def test_bad_files_name_the_file_and_what_is_accepted(data, needle):
    with pytest.raises(ScenarioError) as err:
        import_file("upload.dat", data)
    assert err.value.key == "upload.dat"
    assert needle in err.value.message


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_give_a_dataset_or_a_named_refusal(data):
    try:
        import_file("fuzz.bin", data)
    except ScenarioError as err:
        assert err.key == "fuzz.bin"


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list('0123456789.,;:-_ \n\t{}[]"abcdeINFOtookseconds#|')),
        max_size=600,
    )
)
def test_random_text_gives_a_dataset_or_a_named_refusal(text):
    try:
        import_file("fuzz.txt", text.encode())
    except ScenarioError as err:
        assert err.key == "fuzz.txt"


LOG = ROOT / "presets" / "examples" / "vllm_0.8.5_warm_cache.log"


@pytest.mark.parametrize("prefix", ["[pod-7f9c] ", "[2025-06-19 23:05:01] ", "[RunAI Streamer] "])
def test_a_log_whose_lines_start_with_a_bracket_is_read_as_a_log(prefix, tmp_path):
    import subprocess
    import sys

    from model.readers.importers import import_text
    from model.readers.vllm_log import parse_log

    plain = LOG.read_text(encoding="utf-8")
    text = "".join(prefix + line for line in plain.splitlines(keepends=True))
    ds = import_text(text, "pod.log")
    assert ds.kind == parse_log(plain, "pod.log").kind
    assert ds.figures == parse_log(plain, "pod.log").figures
    path = tmp_path / "pod.log"
    path.write_text(text, encoding="utf-8")
    for command in ("import", "calibrate"):
        done = subprocess.run(
            [sys.executable, "-m", "whatif", command, str(path), "--json"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "JSON file" not in done.stderr


@pytest.mark.parametrize("text", ["[" * 4_900_000, "[" * 3000 + "]" * 3000, '{"a":' * 5000])
def test_json_nested_past_any_depth_is_a_clear_refusal(text, tmp_path):
    import subprocess
    import sys

    from model.readers.importers import import_file

    with pytest.raises(ScenarioError) as err:
        import_file("deep.json", text.encode())
    assert "nested too deeply" in err.value.message
    path = tmp_path / "deep.json"
    path.write_text(text)
    for cmd in ("import", "calibrate"):
        done = subprocess.run(
            [sys.executable, "-m", "whatif", cmd, str(path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
        assert "nested too deeply" in done.stderr


def test_json_and_jsonl_are_still_read_as_benchmark_results():
    from model.readers.importers import _is_json

    assert _is_json('{"completed": 1}')
    assert _is_json('[\n {"a": 1}\n]')
    assert _is_json('{"a": 1}\n{"a": 2}\n')
    assert not _is_json("[pod-7f9c] INFO 06-19 starting\n")
    assert not _is_json("INFO 06-19 starting\n")
