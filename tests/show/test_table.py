"""labkit.show.table: one table object, shown as HTML and text, recorded and re-shown."""

import json

import pytest

from labkit.measure.timing import Comparison, Timing, VariantResult
from labkit.show import table


def timing(label: str, median: float, iqr: float = 0.0, gbps: float | None = None) -> Timing:
    return Timing(label=label, device="cpu", mode="cold", times_s=(median,), median_s=median,
                  iqr_s=iqr, min_s=median, count=5, gbps=gbps)


def test_values_are_formatted_by_their_unit():
    assert table.format_value(0.00123, "s") == "1.23 ms"
    assert table.format_value(1.234, "x") == "1.23x"
    assert table.format_value(122171.4, "x") == "122,171x"
    assert table.format_value(4 << 20, "B") == "4 MiB"
    assert table.format_value(12, "B") == "12 B"
    assert table.format_value(None, "s") == "-"
    assert table.format_value(1234.4, "GB/s") == "1,234"
    assert table.format_value(123.44, "GB/s") == "123.4"
    assert table.format_value(16385.0) == "16,385"
    assert table.format_value(True) == "True"


def test_a_table_renders_as_text_and_html_with_units_in_headers():
    t = table.Table("copies", ["operation", "copied", "rate"], units={"copied": "B", "rate": "GB/s"})
    t.add("x.t()", 0, 12.345).add("x.t().contiguous()", 48, 3.0)
    text = str(t)
    assert text.splitlines()[0] == "copies"
    assert "rate (GB/s)" in text and "copied (B)" not in text  # bytes carry their own unit
    assert "48 B" in text and "12.3" in text
    page = t._repr_html_()
    assert "<table" in page and "x.t().contiguous()" in page and "rate (GB/s)" in page


def test_folded_evidence_is_closed_in_html_and_only_named_in_text():
    t = table.Table("", ["a"], [[1]]).fold("evidence", "a long story " * 20)
    assert "<details><summary>evidence</summary>" in t._repr_html_()
    assert "a long story" not in str(t) and "1 folded: evidence" in str(t)


def test_bad_rows_and_units_get_a_clear_error():
    with pytest.raises(table.TableError, match="2 values for 3 columns"):
        table.Table("t", ["a", "b", "c"]).add(1, 2)
    with pytest.raises(table.TableError, match="units given for columns"):
        table.Table("t", ["a"], units={"b": "s"})
    with pytest.raises(table.TableError, match="list of column names"):
        table.Table("t", "abc")
    with pytest.raises(table.TableError, match="nothing was measured"):
        table.rows([], title="empty")
    with pytest.raises(table.TableError, match="other lengths"):
        table.sweep("n", [1, 2], {"rate": [1.0]})


def test_a_recorded_table_comes_back_labelled_as_recorded():
    t = table.Table("ceilings", ["what", "rate"], [["copy", 1.5]], units={"rate": "GB/s"})
    data = json.loads(json.dumps(t.to_dict()))
    assert table.is_table(data) and not table.is_table({"rows": []})
    back = table.Table.from_dict(data, recorded="recorded on nvidia-h200, 2026-11-30")
    assert back.rows == t.rows and back.units == t.units
    assert "recorded on nvidia-h200, 2026-11-30" in str(back).splitlines()[0]
    assert "recorded on nvidia-h200" in back._repr_html_()
    assert "recorded" not in str(t)  # measured here says nothing of the kind
    with pytest.raises(table.TableError, match="not a recorded table"):
        table.Table.from_dict({"title": "x"})


def test_a_comparison_renders_through_the_table_with_its_flags_folded():
    base, slow = timing("a", 1e-3, gbps=10.0), timing("b", 2e-3, iqr=6e-4, gbps=5.0)
    cmp = Comparison("a", 3, {"a": VariantResult(base, 1.0, 1.0, 1.0, (1.0,)),
                              "b": VariantResult(slow, 2.0, 1.9, 2.1, (2.0,))}, ("a", "b"))
    t = table.comparison(cmp)
    assert t.columns == ["variant", "median", "ratio", "ratio spread", "GB/s"]
    assert t.column("ratio") == [1.0, 2.0]
    assert "2.00x" in str(t) and "1.90-2.10" in str(t)
    assert [s for s, _ in t.folded] == ["the harness's notes (1 flagged, 0 warnings)"]
    assert "flagged: b: noisy" in t.folded[0][1]  # IQR 30% of its median


def test_a_sweep_is_one_row_per_point():
    t = table.sweep("n", [1024, 2048], {"TFLOP/s": [1.5, 2.5]}, title="matmul")
    assert t.rows == [[1024, 1.5], [2048, 2.5]] and t.header("TFLOP/s") == "TFLOP/s"
    assert table.rows([{"a": 1, "b": 2}]).columns == ["a", "b"]


def test_a_cell_splits_words_only_where_it_holds_a_token_too_long_to_keep_whole():
    """Review 2026-12-05q browser 05-07 item 4: 'overflow-wrap:anywhere' on every cell let a
    narrow column split 'correct' and 'C15a'; now only a cell with a token over LONG_TOKEN
    characters (a kernel's name) may break inside it, and the others wrap at spaces."""
    table_module = table
    kernel = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"
    shown = table.Table("t", ["claim", "kernel"])
    shown.add("C15a correct", kernel)
    page = shown._repr_html_()
    assert "C15a correct</td>" in page and kernel in page
    short = table_module.wrap_style("C15a correct")
    assert short == ";overflow-wrap:break-word" and f"{short}'>C15a correct</td>" in page
    assert f";overflow-wrap:anywhere'>{kernel}</td>" in page
    assert table_module.wrap_style("x" * table_module.LONG_TOKEN) == ";overflow-wrap:break-word"
    assert table_module.wrap_style("x" * (table_module.LONG_TOKEN + 1)) == ";overflow-wrap:anywhere"
