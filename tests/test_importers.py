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
