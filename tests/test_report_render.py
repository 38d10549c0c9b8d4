"""The report stage: fake tables in, a standalone HTML page and a PDF out."""

from __future__ import annotations

import base64
import json
import math
import re
import shutil
import struct
import zlib
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import FakeTree, write_fake_results

from pipeline import warm_worker
from pipeline.__main__ import main
from pipeline.report.appendix_tables import tasks_table
from pipeline.report.browser_check import check_report
from pipeline.report.render import benchmark_rule, read_benchmarks
from pipeline.report.tables import row


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[FakeTree, Path]:
    root = tmp_path_factory.mktemp("report")
    tree = write_fake_results(root, zoo_sizes=("tiny",), curve_sizes=("tiny",))
    assert main(tree.aggregate_argv(root / "results/tables")) == 0
    assert main(tree.report_argv(root / "results/tables", root / "reports")) == 0
    return tree, root / "reports"


# The sections after the objective zoo's, in order.
APPENDIX_HEADINGS = (
    "Downstream suite: every number of every metric",
    "Baselines",
    "Pretraining",
    "Fine-tuning",
    "Claims checked",
    "Data provenance",
    "Cost",
    "Reproducibility",
)


def test_html_has_the_headline_table_and_every_section(rendered: tuple[FakeTree, Path]) -> None:
    html = (rendered[1] / "replication.html").read_text()
    assert ">Task</th>" in html and ">MLM</th>" in html and ">CLM</th>" in html and ">Winner</th>" in html
    assert '<tr class="family">' in html and "SC average (2 tasks)" in html
    assert '<td class="winner-MLM">MLM</td>' in html
    assert "<strong>needle</strong>: at zero for every model here." in html  # report.tasks_left_out, beside the headline
    # A family row shows its random-init average too (comparison.csv's random_*), not a dash.
    family_row = re.search(r'<tr class="family">(.*?)</tr>', section(html, "headline"), re.S).group(1)
    assert re.findall(r"<td[^>]*>(.*?)</td>", family_row)[3] != "—"
    # every row's own MLM − CLM with its interval (the column once printed "None", its value overwritten)
    gaps = []
    for table in re.findall(r"<table.*?</table>", section(html, "headline"), re.S):
        header = re.findall(r"<th[^>]*>(.*?)</th>", table)
        rows = [re.findall(r"<td[^>]*>(.*?)</td>", found) for found in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]
        gaps += [cells[header.index("MLM − CLM [95% CI, Welch]")] for cells in rows if cells]
    assert len(gaps) >= 4 and all(re.fullmatch(r"[+−]\d+\.\d \[[+−]\d+\.\d,\s[+−]\d+\.\d\]", gap) for gap in gaps), gaps
    assert "73.0\u00a0±\u00a01.2" in html  # sentiment, mlm-tiny: 73 ± 4.303 * 0.5 / sqrt(3)
    for heading in ("Scale of this run", *APPENDIX_HEADINGS[1:]):
        assert heading in html
    assert "do not transfer" in html and "Fake scale: two tiny sizes." in html
    assert "PROXY for SST-2" in html and "verdict-supported" in html
    # Baselines: the bag of words of sentiment (67 ± t(2) * 1 / sqrt(3)), "—" for topic, which has none.
    assert ">Bag of words</th>" in html and "67.0\u00a0±\u00a02.5" in html
    # 19 pretrained runs (CLM, MLM at two sizes, the tiny zoo); the fake scores put two zoo runs' intervals across it.
    assert "Against the bag of words (sentiment): 17 of 19 pretrained runs above it and 0 below it" in html
    # Zero-shot: mlm-tiny wins 36 of 40 pairs; its gap over random init is paired by pair
    # the headline shows each task's references beside MLM and CLM, and the power of each comparison
    assert all(
        f">{column}</th>" in html for column in ("Random init", "Bag of words", "Floor", "Detectable at 80% power (seeds to decide a tie)")
    )
    assert "Zero-shot: minimal pairs" in html and "90.0\u00a0±\u00a0" in html and "PLL (within-word l2r)" in html
    assert "Minimal pairs (all kinds), MLM vs CLM: MLM at small, MLM at tiny." in html  # the evidence summary names the sizes


def test_html_has_a_numbered_section_per_objective_family(rendered: tuple[FakeTree, Path]) -> None:
    html = (rendered[1] / "replication.html").read_text()
    headings = re.findall(r"<h2>(\d+)\. (.*?)</h2>", html)
    assert [int(number) for number, _ in headings] == list(range(1, len(headings) + 1))
    assert [title for _, title in headings[:13]] == [
        "Scale of this run",
        "Evidence at this scale",
        "Against the study&#39;s published numbers",
        "Headline: MLM vs CLM",
        "Zero-shot: minimal pairs",
        "Learning curves: CLM vs MLM during pretraining",
        "Every objective at a glance",
        "Causal LM",
        "Masked LM",
        "Prefix LM and span denoisers",
        "Masking ratio and 80/10/10",
        "Two-stage CLM→MLM",
        "Continued pretraining",
    ]
    assert [title for _, title in headings[13:]] == list(APPENDIX_HEADINGS)
    assert html.count('<li><a href="#') == len(headings)
    for caption in (
        "Two-stage CLM→MLM: family average test score",
        "against the MLM masking ratio",
        "for every pretrained run, coloured by section",
    ):
        assert caption in html
    assert "replaced token detection gain 4.0" in html  # electra-tiny's own yardstick: its LM head never trains
    assert '<td class="num versus versus-better">+1.5\u00a0[+0.8,\u00a0+2.2]\nbetter</td>' in html  # clm50_mlm-tiny vs MLM
    assert "no difference resolved" in html and '<tr class="reference">' in html and "40%; 100/0/0" in html


def test_figures_are_files_and_embedded(rendered: tuple[FakeTree, Path]) -> None:
    html = (rendered[1] / "replication.html").read_text()
    names = sorted(p.name for p in (rendered[1] / "figures").iterdir())
    assert names == [
        "budget_trend.png",
        "differences.png",
        "learning_curves.png",
        "learning_rates.png",
        "loss_curves.png",
        "masking.png",
        "overview.png",
        "study_curve.png",
        "two_stage.png",
    ]
    assert html.count('src="data:image/png;base64,') == 9
    assert 'src="figures/' not in html
    for name in names:  # each file a PNG with an image in it, embedded byte for byte
        data = (rendered[1] / "figures" / name).read_bytes()
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and width > 100 and height > 100, name
        assert f'src="data:image/png;base64,{base64.b64encode(data).decode()}"' in html, name


def test_the_evidence_section_sets_this_run_on_the_study_s_published_curve(rendered: tuple[FakeTree, Path]) -> None:
    evidence = section((rendered[1] / "replication.html").read_text(), "evidence")
    assert "610M models at 1k to 40k steps (grey: its published Tables 6-9" in evidence and 'alt="MLM − CLM by family' in evidence
    assert "Different models, scales and data on one axis" in evidence


def section(html: str, anchor: str) -> str:
    return html[html.index(f'<section id="{anchor}">') :].split("</section>", 1)[0]


def test_learning_curve_section_has_the_table_and_figure(rendered: tuple[FakeTree, Path]) -> None:
    curves = section((rendered[1] / "replication.html").read_text(), "learning-curves")
    assert ">Pretraining step (share of the budget)</th>" in curves and '>CLM</th><th class="num">MLM</th>' in curves
    # the fake's curves: MLM − CLM −4.5 at 25% and −2 at 50% of the 600 steps, +3 for the final models
    # (each interval on one line: a no-break space after its comma)
    for step, gap, winner in (
        ("150 (25%)", "−4.5 [−5.2,\u00a0−3.8]", "CLM"),
        ("300 (50%)", "−2.0 [−2.7,\u00a0−1.3]", "CLM"),
        ("600 (final model)", "+3.0 [+2.3,\u00a0+3.7]", "MLM"),
    ):
        assert re.search(
            f'<td class="num">{re.escape(step)}</td>.*<td class="num">{re.escape(gap)}</td><td class="winner-{winner}">', curves
        )
    assert '<img src="data:image/png;base64,' in curves and "ringed: the final model" in curves


def test_learning_curve_section_says_how_to_enable_it_without_curves(tmp_path: Path) -> None:
    tree = write_fake_results(tmp_path, tasks=("sentiment",))
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    assert main(tree.report_argv(tmp_path / "tables", tmp_path / "reports")) == 0
    curves = section((tmp_path / "reports/replication.html").read_text(), "learning-curves")
    assert "Not measured: no learning-curve scores" in curves and "learning_curves: {sizes: [tiny], runs: [clm, mlm]}" in curves
    assert "<img" not in curves and not (tmp_path / "reports/figures/learning_curves.png").exists()


def test_two_stage_section_separates_step_budgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a shorter budget the two-stage table names each row's budget, and the figure
    draws one line per budget, each from its own 0% to its own 100%."""
    from pipeline.report import figures

    tree = write_fake_results(tmp_path, tasks=("sentiment",), sizes=("tiny",), zoo_sizes=("tiny",), budget_sizes=("tiny",))
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    assert main(tree.report_argv(tmp_path / "tables", tmp_path / "reports")) == 0
    two_stage = section((tmp_path / "reports/replication.html").read_text(), "objectives-two-stage-clm-mlm")
    assert ">Budget (steps)</th>" in two_stage and ">clm50_mlm_400steps-tiny</td>" in two_stage
    drawn = []
    monkeypatch.setattr(figures, "save", lambda figure, path: drawn.append(figure) or path)
    figures.two_stage_scores(pd.read_csv(tmp_path / "tables/objectives.csv"), ["tiny"], tmp_path / "two_stage.png")
    lines = {label: bars.lines[0].get_xdata().tolist() for bars, label in zip(*drawn[0].axes[0].get_legend_handles_labels())}
    assert lines == {"SC average, tiny, 400 steps": [0.0, 50.0, 100.0], "SC average, tiny, 600 steps": [0.0, 25.0, 50.0, 75.0, 100.0]}


def test_pdf_is_written(rendered: tuple[FakeTree, Path]) -> None:
    """A PDF of several pages that holds the figures (at least as many images as the HTML)."""
    pdf = (rendered[1] / "replication.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    # WeasyPrint packs its objects into compressed streams: read them inflated (as far as each
    # inflates: the pattern may cut a binary stream that holds "endstream" short).
    objects = pdf + b"".join(
        zlib.decompressobj().decompress(stream)
        for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S)
        if stream[:1] == b"x"
    )
    assert len(re.findall(rb"/Type\s*/Page\b", objects)) >= 2
    assert len(re.findall(rb"/Subtype\s*/Image", objects)) >= 8


def descendants(box):
    """A WeasyPrint box and every box inside it."""
    yield box
    for child in getattr(box, "children", ()):
        yield from descendants(child)


def test_the_pdf_s_table_cells_break_between_words_only_and_keep_each_mean_with_its_half_width(rendered: tuple[FakeTree, Path]) -> None:
    """Laid out as the PDF is (WeasyPrint), every table cell's lines hold its words whole: no header
    printed as "Floo r" or "Winn er", and every "73.0 ± 1.2" on one line."""
    from weasyprint import HTML

    document = HTML(filename=str(rendered[1] / "replication.html")).render()
    cells = 0
    for page in document.pages:
        for cell in (box for box in descendants(page._page_box) if type(box).__name__ == "TableCellBox"):
            lines = [
                "".join(text.text for text in descendants(line) if type(text).__name__ == "TextBox")
                for line in descendants(cell)
                if type(line).__name__ == "LineBox"
            ]
            words = "".join(cell.element.itertext()).split()
            cells += 1
            # a line may end after a hyphen, dash or slash ("Non-" / "embedding"): a break between parts, not inside a word
            parts = re.sub(r"(?<=\S)([-–/]) ", r"\1", " ".join(line.strip() for line in lines)).split()
            assert parts == words, f"a word broken inside a cell: {lines} (the cell reads {words})"
            for line in lines:
                assert not line.strip().startswith("±") and not line.strip().endswith("±"), f"a mean parted from its half-width: {lines}"
    assert cells > 100


def test_bad_corpus_stats_is_a_one_line_error(rendered: tuple[FakeTree, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree, reports = rendered
    stats = json.loads(tree.corpus_stats.read_text())
    del stats["sources"]["wiki"]["contaminated"]
    broken = tmp_path / "stats.json"
    broken.write_text(json.dumps(stats))
    argv = tree.report_argv(reports.parent / "results/tables", tmp_path / "reports")
    argv[argv.index("--corpus-stats") + 1] = str(broken)
    assert main(argv) == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and str(broken) in message and "sources.wiki.contaminated" in message
    assert not (tmp_path / "reports/replication.html").exists()


def test_missing_table_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = write_fake_results(tmp_path)
    (tmp_path / "tables").mkdir()
    assert main(tree.report_argv(tmp_path / "tables", tmp_path / "reports")) == 2
    assert "baselines.csv: file not found" in capsys.readouterr().err  # the first table, alphabetically


@pytest.mark.parametrize(("damage", "what"), [("cut", "unreadable ("), ("header", "missing column 'task'")])
def test_a_corrupt_table_is_a_one_line_error_saying_what_to_do(damage, what, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = write_fake_results(tmp_path)
    assert main(tree.aggregate_argv(tmp_path / "tables")) == 0
    table = tmp_path / "tables" / "run_scores.csv"
    text = table.read_text()
    table.write_text('task,"run\n1,2,3,4\n' if damage == "cut" else "\n".join(["x" + text.splitlines()[0]] + text.splitlines()[1:]))
    capsys.readouterr()
    assert main(tree.report_argv(tmp_path / "tables", tmp_path / "reports")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {table}: {what}") and err.endswith("; rerun the job that wrote it") and "\n" not in err
    assert not (tmp_path / "reports" / "replication.html").exists()


def test_benchmark_rule_is_the_directory_below_benchmarks() -> None:
    assert benchmark_rule(Path("benchmarks/finetune/sentiment/clm-tiny.tsv")) == "finetune"
    assert benchmark_rule(Path("/x/benchmarks/pretrain/clm-tiny.tsv")) == "pretrain"
    assert benchmark_rule(Path("elsewhere/pack/all.tsv")) == "pack"
    assert benchmark_rule(Path("benchmarks/corpus.tsv")) == "benchmarks"


def test_a_warm_started_job_s_cost_is_its_worker_s_from_its_log(tmp_path) -> None:
    """Snakemake's benchmark of a job forked from a warm worker measured the client only."""
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for name, cpu in (("warm", "0.05"), ("cold", "14.0")):
        bench = tmp_path / "benchmarks" / "finetune" / "sentiment" / f"{name}.tsv"
        bench.parent.mkdir(parents=True, exist_ok=True)
        bench.write_text(header + f"17.0\t0:00:17\t21.0\t30\t20\t20\t0\t0\t1\t{cpu}\n")
    log = tmp_path / "logs" / "finetune" / "sentiment" / "warm.log"
    log.parent.mkdir(parents=True)
    usage = {"pid": 9, "wall_seconds": 16.5, "cpu_seconds": 16.8, "max_rss_mb": 554.5}
    log.write_text(f"training...\n{warm_worker.USAGE_PREFIX}{json.dumps(usage)}\n")
    frame = read_benchmarks(sorted((tmp_path / "benchmarks").rglob("*.tsv")))
    assert frame.to_dict("records") == [
        {"s": 17.0, "max_rss": 21.0, "cpu_time": 14.0, "rule": "finetune"},  # cold: no usage line, the benchmark's
        {"s": 17.0, "max_rss": 554.5, "cpu_time": 16.8, "rule": "finetune"},
    ]


def test_downstream_section_tabulates_every_metric_number(rendered: tuple[FakeTree, Path]) -> None:
    downstream = section((rendered[1] / "replication.html").read_text(), "downstream")
    for task in ("sentiment", "topic"):
        assert f"{task} (accuracy): every number of the metric" in downstream
    assert ">half</th>" in downstream and "33.5\u00a0±\u00a00.6" in downstream  # random-small: half of its 67.0 ± 1.2


def test_needle_heatmap_draws_one_panel_per_run(tmp_path: Path) -> None:
    from pipeline.report import figures
    from pipeline.report.appendix_tables import NEEDLE_CELL_PREFIX

    rows = [
        {"run": run, "key": f"length={length},depth={depth}", "test_mean": score, "test_low": score - 5, "test_high": score + 5}
        for run, score in (("clm-tiny", 80.0), ("meap-tiny", 90.0))
        for length in (48, 96)
        for depth in (0.0, 0.5, 1.0)
    ] + [{"run": "clm-tiny", "key": "exact_match", "test_mean": 80.0, "test_low": 75.0, "test_high": 85.0}]
    path = figures.needle_heatmaps(pd.DataFrame(rows), NEEDLE_CELL_PREFIX, tmp_path / "needle.png")
    assert path.read_bytes().startswith(b"\x89PNG")


def test_a_cell_that_missed_its_formatting_is_refused_not_printed() -> None:
    """None or a NaN read back from an empty CSV field would print as "None" or "nan" in a table."""
    for value in (None, float("nan")):
        with pytest.raises(TypeError, match="a report cell must be formatted text, got"):
            row("title_search", value)


def test_a_task_without_a_label_set_says_so_in_the_tasks_table() -> None:
    """Extractive QA and retrieval have no label set: their stats.json's empty list is read back as NaN."""
    item = {
        "task": "news_qa",
        "family": "QA",
        "proxy_for": "SQuAD v1.1",
        "labels": float("nan"),
        "num_train": 10,
        "num_validation": 2,
        "num_test": 3,
        "majority_label": "no answer",
        "majority_test_score": 0.0,
        "description": "A cloze over news.",
        "derived_labels": float("nan"),
    }
    assert tasks_table(pd.DataFrame([item])).rows[0].cells[3].text == "— (no label set)"


def test_the_legend_under_the_panels_names_every_series_of_every_panel() -> None:
    """A series missing from the first panel (a size a task was not fine-tuned at) is still in the legend, once."""
    import matplotlib.pyplot as plt

    from pipeline.report import panels

    figure, axes = plt.subplots(1, 2)
    axes[0].plot([1], [1], label="clm-tiny")
    axes[1].plot([1], [1], label="clm-tiny")
    axes[1].plot([1], [2], label="clm-mini")
    panels.legend_under_panels(figure, list(axes))
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["clm-tiny", "clm-mini"]
    plt.close(figure)


def test_a_token_axis_is_labelled_at_its_budgets_alone_with_room_around_a_single_one() -> None:
    """A single budget is not zoomed into a sliver of a decade with crowded labels; ticks name the budgets."""
    import matplotlib.pyplot as plt

    from pipeline.report import panels

    figure, ax = plt.subplots()
    panels.log_axis_at(ax, [2.95e6], ["2.95M"])
    assert ax.get_xlim() == pytest.approx((2.95e6 / 1.5, 2.95e6 * 1.5))
    figure.canvas.draw()
    assert [label.get_text() for label in ax.get_xticklabels()] == ["2.95M"] and not ax.xaxis.get_minorticklocs().size
    panels.log_axis_at(ax, [983040.0, 2.95e6], ["983k", "2.95M"], right=7.2e6)  # a trend line drawn out to 7.2M
    assert ax.get_xlim() == pytest.approx((983040.0 / 1.5, 7.2e6 * 1.5))
    plt.close(figure)


def test_every_negative_number_in_the_report_has_a_typographic_minus(rendered: tuple[FakeTree, Path]) -> None:
    """One sign for one thing: ``−4.1`` beside ``+10.7``, never ``-4.1`` where a format skipped number_text."""
    html = (rendered[1] / "replication.html").read_text()
    text = re.sub(r"<(style|script)\b.*?</\1>|<[^>]+>", " ", html, flags=re.S)
    hyphen_minus = re.findall(r"(?:^|[\s(\[:;,→])(-\d[\d.,]*)", text)
    assert not hyphen_minus, hyphen_minus
    # a negative number that rounds to zero shows the digit that makes it negative
    assert not re.findall(r"−0\.0(?!\d)", text)


@pytest.mark.parametrize(
    ("value", "signed", "shown"),
    [
        (-0.0258, True, "−0.03"),  # an interval's low bound beside zero: below it, and it says so
        (0.04, False, "0.04"),
        (0.0004, False, "0.0"),  # zero at two more digits too: zero (a spread of equal seeds is 1e-14, not "0.000")
        (-1e-14, True, "+0.0"),
        (0.0, True, "+0.0"),
        (3.9076, True, "+3.9"),
        (-0.05, False, "−0.1"),  # rounds away from zero: no more digits
    ],
)
def test_a_number_that_rounds_to_zero_keeps_its_side_of_zero(value: float, signed: bool, shown: str) -> None:
    from pipeline.analysis.text import number_text

    assert number_text(value, signed=signed) == shown


def test_the_overview_draws_the_references_of_the_budget_its_runs_trained(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A panel of 480-step zoo runs beside the 1,440-step headline runs draws the 480-step CLM and MLM as its
    lines and says so; a panel of one budget keeps its plain title."""
    from pipeline.report import figures

    def run(name: str, section: str, steps: int, score: float, size: str = "tiny") -> dict:
        reference = {"clm": f"clm{'' if steps == 1440 else '_480steps'}-{size}", "mlm": f"mlm{'' if steps == 1440 else '_480steps'}-{size}"}
        return {
            "level": "family", "repeated": False, "family": "SC", "size": size, "run": f"{name}-{size}", "run_name": name,
            "section": section, "trained_steps": steps, "test_mean": score, "test_low": score - 1, "test_high": score + 1,
            "clm_run": reference["clm"], "mlm_run": reference["mlm"],
        }  # fmt: skip

    objectives = pd.DataFrame(
        [
            run("clm", "Causal LM", 1440, 75.0),
            run("mlm", "Masked LM", 1440, 73.0),
            run("ul2", "Prefix LM and span denoisers", 480, 70.0),
            run("mlm_nsp", "Masked LM", 480, 65.0),
            run("clm_480steps", "Two-stage CLM→MLM", 480, 71.0),
            run("mlm_480steps", "Two-stage CLM→MLM", 480, 69.0),
            run("clm", "Causal LM", 1440, 60.0, size="mini"),
            run("mlm", "Masked LM", 1440, 62.0, size="mini"),
        ]
    )
    drawn = []
    monkeypatch.setattr(figures, "save", lambda figure, path: drawn.append(figure) or path)
    figures.objective_overview(objectives, tmp_path / "overview.png")
    tiny, mini = drawn[0].axes
    assert tiny.get_title() == "SC average, tiny (lines: CLM and MLM at 480 steps)" and mini.get_title() == "SC average, mini"
    references = {ax: sorted(line.get_xdata()[0] for line in ax.lines if line.get_linestyle() in (":", "--")) for ax in (tiny, mini)}
    assert references == {tiny: [69.0, 71.0], mini: [60.0, 62.0]}


def test_the_budget_trend_has_one_legend_under_all_its_panels(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every contrast named once, under the figure; not a legend under the first panel that reads as that panel's."""
    from pipeline.report import figures, panels

    points = [
        {"level": level, "name": name, "size": "tiny", "contrast": contrast, "tokens": tokens, "effect_mean": 1.0}
        for level, name, contrasts in (
            ("family", "SC", ("MLM − CLM", "MLM − random init")),
            ("minimal pairs", "minimal pairs", ("CLM − random init",)),
        )
        for contrast in contrasts
        for tokens in (1e6, 2e6)
    ]  # fmt: skip
    trend = pd.DataFrame(points).assign(effect_low=0.0, effect_high=2.0)
    fit = trend.drop_duplicates(["level", "name", "size", "contrast"]).assign(
        slope_per_decade=1.0, intercept=0.0, tokens_to_decide=math.nan
    )
    drawn = []
    monkeypatch.setattr(panels, "save", lambda figure, path: drawn.append(figure) or path)  # panel_figure's
    figures.budget_trend(trend, fit, tmp_path / "trend.png")
    (figure,) = drawn
    assert [ax.get_legend() for ax in figure.axes] == [None] * len(figure.axes)
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["MLM − CLM", "MLM − random init", "CLM − random init"]


def browser_missing() -> str | None:
    """Why the browser check cannot run here, or None (it runs wherever Chromium and selenium are installed)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        return "no Chromium here (apt-get install chromium chromium-driver)"
    return None


@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_the_report_reads_in_a_real_browser_at_a_laptop_s_and_a_phone_s_width(rendered: tuple[FakeTree, Path], tmp_path: Path) -> None:
    checks = check_report(rendered[1] / "replication.html", tmp_path)
    assert [check.width for check in checks] == [1280, 390]
    assert [failure for check in checks for failure in check.failures()] == []
    assert all(check.num_images >= 8 and check.num_tables >= 20 for check in checks)
    assert all((tmp_path / check.screenshot).read_bytes().startswith(b"\x89PNG") for check in checks)


@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_the_browser_check_names_what_a_reader_would_find_broken(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    wide = "".join(f"<td>column{i}-with-a-long-unbreakable-name</td>" for i in range(12))
    page.write_text(
        '<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head><body>'
        '<img src="missing.png" alt="the missing figure"><a href="#nowhere">a link</a>'
        f"<table><caption>A wide table</caption><tr>{wide}</tr></table>"
        '<script>console.error("boom")</script></body></html>'
    )
    laptop, phone = check_report(page, tmp_path / "out")
    assert laptop.broken_images == ["the missing figure"] and laptop.dead_links == ["nowhere"]
    assert any("boom" in message for message in laptop.console_errors)
    assert phone.overflowing_tables == ["A wide table"] and phone.page_scrolls_sideways
