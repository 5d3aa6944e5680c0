"""The golden set compares numbers at a stated precision (issue 40): a fit's last digits, which
depend on the CPU's BLAS kernel, do not fail it; a change a user could see does."""

from __future__ import annotations

from tools.golden import ATOL, RTOL, _fingerprint, same


def test_last_digit_noise_in_floats_and_in_printed_numbers_is_tolerated():
    a = {"table": [[0.0810000000000001, 3.14159265358979]], "csv": "x,y\n1,0.30000000000000004\n"}
    b = {"table": [[0.081, 3.14159265358980]], "csv": "x,y\n1,0.3\n"}
    assert same(_fingerprint(a), _fingerprint(b))


def test_a_visible_change_fails():
    base = {"text": "TPOT 12.3 ms at batch 64", "v": 1.0}
    assert not same(_fingerprint(base), _fingerprint({**base, "text": "TPOT 12.4 ms at batch 64"}))
    assert not same(_fingerprint(base), _fingerprint({**base, "text": "TPOT 12.3 ms at batch 65"}))
    assert not same(_fingerprint(base), _fingerprint({**base, "v": 1.0 + 10 * RTOL}))
    assert not same(_fingerprint(base), _fingerprint({**base, "text": "TTFT 12.3 ms at batch 64"}))
    assert not same(_fingerprint({"v": [1.0, 2.0]}), _fingerprint({"v": [2.0, 1.0]}))
    assert not same(_fingerprint({"v": [1.0]}), _fingerprint({"v": [1.0, 1.0]}))


def test_numbers_near_zero_compare_absolutely():
    assert same(_fingerprint({"v": 0.0}), _fingerprint({"v": ATOL / 2}))
    assert not same(_fingerprint({"v": 0.0}), _fingerprint({"v": 1e-6}))


def test_non_finite_values_stay_in_the_text():
    assert same(_fingerprint({"v": float("nan")}), _fingerprint({"v": float("nan")}))
    assert not same(_fingerprint({"v": float("inf")}), _fingerprint({"v": float("nan")}))


def test_a_long_series_keeps_sums_that_catch_one_changed_number():
    from tools.golden import MAX_LISTED

    series = [1000.0 + i * 0.37 for i in range(5000)] + [0.001]
    noisy = [x * (1 + 1e-12 * ((-1) ** i)) for i, x in enumerate(series)]
    a = _fingerprint({"y": series})
    assert "sums" in a and len(series) > MAX_LISTED
    assert same(a, _fingerprint({"y": noisy}))
    for j, changed in ((17, 1000.0 + 17 * 0.37 + 1.0), (5000, 0.002)):
        other = list(series)
        other[j] = changed
        assert not same(a, _fingerprint({"y": other}))
    swapped = list(series)
    swapped[3], swapped[4000] = swapped[4000], swapped[3]
    assert not same(a, _fingerprint({"y": swapped}))


def test_digits_inside_a_word_or_a_hash_are_text():
    a = _fingerprint({"h": "0c6df660e8d2948e930bc69a", "v": "vllm@2026.12.5"})
    assert a["num"] == []
    assert not same(a, _fingerprint({"h": "0c6df660e8d2948e931bc69a", "v": "vllm@2026.12.5"}))
    assert not same(a, _fingerprint({"h": "0c6df660e8d2948e930bc69a", "v": "vllm@2026.12.6"}))


def test_a_chart_s_data_revision_is_not_read_as_a_number():
    # ui.chart_common.SpecFigure sets layout.datarevision to a hex digest of its traces; one
    # such as 5478e17479280536 reads as a float that overflows to inf, and inf - inf is no
    # agreement: the revision stays out of the fingerprint (its traces' numbers are in it)
    from tools import golden

    a = golden._fingerprint({"layout": {"datarevision": "5478e17479280536"}, "y": [1.5]})
    b = golden._fingerprint({"layout": {"datarevision": "0f3a9c2b7d1e4a60"}, "y": [1.5]})
    assert a == b and a["num"] == [1.5]
    html = '<script>{"y": [2.5], "datarevision": "5478e17479280536"}</script>'
    other = '<script>{"y": [2.5], "datarevision": "9e9"}</script>'
    assert golden.same(golden._fingerprint(html), golden._fingerprint(other))
    assert golden._fingerprint("a digest 5478e17479280536 in text")["num"] == []
