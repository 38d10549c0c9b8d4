"""Every table of the PDF report fits its page: the rendered layout (WeasyPrint's boxes) is
read back, and no table, nor any of its cells, runs past the page's right margin. The fake
report's headline is drawn at its widest (the study's column beside every row), where a real
run's headline used to be cut, and a table of eleven columns as wide as a real run's widest
(minimal pairs per kind, two-stage rows) stands beside it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import write_fake_results

from pipeline.__main__ import main
from pipeline.report.displays import DISPLAYS, Display
from pipeline.report.tables import Table, headline_tables, key, num, row


def headline_beside_the_study(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    """The headline at its widest: every row with the study's own MLM − CLM beside it (a size the
    study published), the column a paper-scale run adds."""
    comparison = frames["comparison"]
    study = {(item["size"], item["level"], item["name"]): STUDY_GAP for _, item in comparison.iterrows()}
    return headline_tables(comparison, frames["baselines"], confidence, study)


STUDY_GAP = {"difference_mean": -12.34, "difference_low": -15.67, "difference_high": -9.01}
KINDS = ("all", "adjacent swap", "article", "determiner number", "pronoun verb agreement", "negation", "quantifier", "tense")


def many_columns(frames: Mapping[str, pd.DataFrame], confidence: float) -> list[Table]:
    """As wide as the report's widest (the minimal pairs won per kind, a real run's two-stage
    rows): eleven columns of intervals with their verdicts under long headers."""
    cell = num("−9.6 [−25.8, +6.6]\nno difference resolved")
    header = ("Model", "Checkpoint", *(f"{kind} ({n})" for n, kind in enumerate(KINDS, 13)), "Δ vs MLM [95% CI]")
    rows = tuple(row(key(f"clm75_mlm_480steps-{n}"), "final", *[cell] * (len(header) - 2)) for n in range(4))
    return [Table("Eleven columns (added by the test)", header, rows, css="wide-text")]


def boxes_of(box) -> Iterator:
    yield box
    for child in getattr(box, "children", None) or []:
        yield from boxes_of(child)


def overflowing_tables(pdf_html: Path) -> list[str]:
    """(page, caption) of each table or table cell whose right edge passes the page's content box."""
    import weasyprint
    from weasyprint.formatting_structure import boxes

    document = weasyprint.HTML(filename=str(pdf_html)).render()
    over = []
    for number, page in enumerate(document.pages, 1):
        page_box = page._page_box
        right = page_box.position_x + page_box.margin_left + page_box.border_left_width + page_box.padding_left + page_box.width
        for box in boxes_of(page_box):
            past = box.position_x + box.margin_width() - right
            if isinstance(box, (boxes.TableBox, boxes.TableCellBox)) and past > 0.5:
                over.append(f"page {number}: a {type(box).__name__} ends {past:.0f}px past the margin")
    return over


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_every_table_of_the_pdf_fits_its_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DISPLAYS, "headline", Display("headline", 0, headline_beside_the_study, css="headline"))
    monkeypatch.setitem(DISPLAYS, "minimal_pairs", Display("zero-shot", 1, many_columns))
    tree = write_fake_results(tmp_path, zoo_sizes=("tiny",))
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    assert main(tree.report_argv(tmp_path / "tables", tmp_path / "reports")) == 0
    html = tmp_path / "reports" / "replication.html"
    assert "MLM-40 − CLM (Tables 2-5)" in html.read_text() and "Eleven columns (added by the test)" in html.read_text()
    assert overflowing_tables(html) == []
