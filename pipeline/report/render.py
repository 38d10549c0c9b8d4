"""``python -m pipeline report``: the aggregated tables into one HTML page and its PDF.

One Jinja2 template (``templates/replication.html.j2``) lays out the sections; each result
table's displays (:mod:`.displays`, named by :mod:`pipeline.analysis.table_schema`) fill their
section, and the objective zoo (:mod:`.objective_sections`), the appendix inputs
(:mod:`.appendix_tables`) and the figures (:mod:`.figures`) the rest. Figures are written as PNG
files into ``--figures-dir`` and also embedded as base64 data URIs, so the HTML stands
alone; WeasyPrint prints the same HTML to PDF. Every output is written atomically.

Besides the tables directory this stage reads the other small files the report
shows: pretraining ``log.csv`` files, corpus statistics, source manifests and
Snakemake benchmark TSVs. Each is validated; a bad one is a one-line error.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from pipeline import strict
from pipeline.analysis.contract import CLAIM_COLUMNS, STUDY_PAIRED_COLUMNS, STUDY_SCORE_COLUMNS, STUDY_VERSUS_COLUMNS, size_parameters
from pipeline.analysis.records import NUMBER, validated
from pipeline.analysis.runs import MASKING, TWO_STAGE
from pipeline.analysis.table_schema import SCHEMAS
from pipeline.config import ReportSpec
from pipeline.errors import PipelineError
from pipeline.files import atomic_path, previous_outputs_kept, read_json
from pipeline.report import appendix_tables, evidence_tables, figures
from pipeline.report.displays import DISPLAYS
from pipeline.report.objective_sections import ObjectiveSection, objective_sections
from pipeline.report.outside_tables import study_claims_table, study_paired_table, study_score_tables, study_versus_table
from pipeline.report.study_curve import study_curve_figure
from pipeline.report.tables import Table
from pipeline.worker_usage import USAGE_PREFIX

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE = "replication.html.j2"

LOG_COLUMNS = ["step", "loss", "heldout_loss"]
BENCHMARK_COLUMNS = ["s", "max_rss", "cpu_time"]
MANIFEST_FIELDS: dict[str, Any] = {"name": str, "requirement": str, "filename": str, "sha256": str, "license": str, "origin": str}
CORPUS_FIELDS: dict[str, Any] = {"sources": dict, "contaminated_by_task": dict, "decontamination_ngram": int, "totals": dict}
CORPUS_SOURCE_FIELDS: dict[str, Any] = {
    key: int for key in ("documents_read", "too_short", "duplicates", "contaminated", "contaminated_lines", "train", "heldout", "words")
}
CORPUS_TOTAL_FIELDS: dict[str, Any] = {"train_documents": int, "heldout_documents": int, "words": NUMBER}


# ------------------------------------------------------------------ reading inputs


def read_csv(path: Path, columns: list[str], **options: Any) -> pd.DataFrame:
    """A CSV/TSV with the given columns; anything else is a one-line error saying what to do."""
    if not path.is_file():
        raise PipelineError(f"{path}: file not found; rerun the job that writes it")
    try:
        frame = pd.read_csv(path, **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise PipelineError(f"{path}: unreadable ({str(error).splitlines()[0]}); rerun the job that wrote it") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise PipelineError(f"{path}: missing column {missing[0]!r}; rerun the job that wrote it")
    return frame


def read_tables(directory: Path) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """The aggregated CSVs (by stem), each with every column of the results contract, and
    the directory's provenance."""
    # Only empty cells are missing values: a label or task named "NA" stays text.
    frames = {
        name: read_csv(directory / f"{name}.csv", list(table.columns), keep_default_na=False, na_values=[""])
        for name, table in sorted(SCHEMAS.items())  # a missing one named alphabetically first
    }
    return frames, read_json(directory / "provenance.json")


def read_logs(paths: list[Path], pretraining: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Pretraining logs by run, the run being the log's directory name."""
    logs = {}
    for path in paths:
        run = path.parent.name
        if run not in set(pretraining["run"]):
            raise PipelineError(f"{path}: run {run!r} (the directory name) is not in pretraining.csv")
        logs[run] = read_csv(path, LOG_COLUMNS)
    return logs


def read_corpus_stats(path: Path) -> dict[str, Any]:
    stats = validated(read_json(path), CORPUS_FIELDS, path)
    for name, counts in stats["sources"].items():
        validated(counts, CORPUS_SOURCE_FIELDS, path, f"sources.{name}.")
    validated(stats["totals"], CORPUS_TOTAL_FIELDS, path, "totals.")
    return stats


def read_study(directory: Path) -> dict[str, pd.DataFrame]:
    """scores.csv, paired.csv, versus.csv and claims.csv of ``study-results``; a dataset without a named training set reads as ""."""
    names = {"scores": STUDY_SCORE_COLUMNS, "paired": STUDY_PAIRED_COLUMNS, "versus": STUDY_VERSUS_COLUMNS, "claims": CLAIM_COLUMNS}
    return {
        name: read_csv(directory / f"{name}.csv", columns, dtype={"training_set": str}).fillna({"training_set": ""})
        for name, columns in names.items()
    }


def benchmarks_index(path: Path) -> int | None:
    """Where ``benchmarks`` is among the parts of ``benchmarks/<rule>/...tsv`` (the last one), if it is."""
    parts = path.parts
    if "benchmarks" not in parts[:-1]:
        return None
    index = len(parts) - 1 - parts[::-1].index("benchmarks")
    return index if index + 1 < len(parts) - 1 else None


def benchmark_rule(path: Path) -> str:
    """``benchmarks/<rule>/...tsv`` -> ``<rule>``; the parent directory otherwise."""
    index = benchmarks_index(path)
    return path.parent.name if index is None else path.parts[index + 1]


def worker_usage(path: Path) -> dict[str, float] | None:
    """A warm-started job's CPU seconds and peak RSS (pipeline/warm_worker.py), which its
    benchmark cannot see (it measured the client): the last usage line of the job's log,
    ``logs/<path>.log`` beside ``benchmarks/<path>.tsv``."""
    index = benchmarks_index(path)
    log = Path(*path.parts[:index], "logs", *path.parts[index + 1 :]).with_suffix(".log") if index is not None else None
    if log is None or not log.is_file():
        return None
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.startswith(USAGE_PREFIX)]
    return json.loads(lines[-1].removeprefix(USAGE_PREFIX)) if lines else None


def read_benchmarks(paths: list[Path]) -> pd.DataFrame:
    """Snakemake benchmark rows, one per job, labelled with their rule; a warm-started job's CPU
    time and peak memory are its worker's, from its log."""
    frames = []
    for path in paths:
        frame = read_csv(path, BENCHMARK_COLUMNS, sep="\t", na_values=["-"])
        if frame.empty:
            raise PipelineError(f"{path}: no benchmark row")
        usage = worker_usage(path)
        if usage is not None:
            frame = frame.assign(cpu_time=usage["cpu_seconds"], max_rss=usage["max_rss_mb"])
        frames.append(frame[BENCHMARK_COLUMNS].assign(rule=benchmark_rule(path)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*BENCHMARK_COLUMNS, "rule"])


# ------------------------------------------------------------------ rendering


def data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def headline_grid(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The seed means at each learning rate of the headline MLM and CLM runs and random init (their
    first pretraining replicate): one line per run of the whole zoo, or per replicate, would make
    the learning-rate panels unreadable."""
    grid, comparison = frames["lr_means"], frames["comparison"]
    shown = set(comparison["mlm_run"]) | set(comparison["clm_run"]) | set(comparison["random_run"].dropna())
    return grid[grid["run"].isin(shown)]


def draw_figures(
    frames: Mapping[str, pd.DataFrame], logs: Mapping[str, pd.DataFrame], confidence: float, directory: Path
) -> dict[str, str]:
    """Every figure as a PNG in ``directory``; returns their data URIs by name."""
    sizes = list(size_parameters(frames["pretraining"]))
    objectives, lr_grid = frames["objectives"], headline_grid(frames)
    details = frames["metric_details"]
    needle_cells = details["key"].str.startswith(appendix_tables.NEEDLE_CELL_PREFIX)
    sections = set(objectives["section"])
    paths = {
        "differences": figures.difference_forest(frames["comparison"], directory / "differences.png")
        if len(frames["comparison"])
        else None,
        "learning_curves": figures.learning_curves(frames["learning_curves"], sizes, directory / "learning_curves.png")
        if len(frames["learning_curves"])
        else None,
        "overview": figures.objective_overview(objectives, directory / "overview.png") if len(objectives) else None,
        "two_stage": figures.two_stage_scores(objectives, sizes, directory / "two_stage.png") if TWO_STAGE in sections else None,
        "masking": figures.masking_scores(objectives, sizes, directory / "masking.png") if MASKING in sections else None,
        "loss_curves": figures.loss_curves(logs, frames["pretraining"], sizes, directory / "loss_curves.png") if logs else None,
        "needle": figures.needle_heatmaps(details, appendix_tables.NEEDLE_CELL_PREFIX, directory / "needle.png")
        if needle_cells.any()
        else None,
        "budget_trend": figures.budget_trend(frames["budget_trend"], frames["budget_fit"], directory / "budget_trend.png")
        if len(frames["budget_trend"])
        else None,
        "study_curve": study_curve_figure(frames["budget_trend"], frames["study_curve"], directory / "study_curve.png"),
        "learning_rates": figures.score_vs_learning_rate(lr_grid, frames["run_scores"], sizes, directory / "learning_rates.png")
        if len(lr_grid)
        else None,
    }
    return {name: data_uri(path) for name, path in paths.items() if path is not None}


def report_sections(
    zoo_sections: list[ObjectiveSection], has_objectives: bool, has_outside: bool = False, has_study: bool = False
) -> list[tuple[str, str]]:
    """(anchor, title) of every numbered section, in order: the table of contents and
    every heading's number come from this one list."""
    return [
        ("scale", "Scale of this run"),
        ("evidence", "Evidence at this scale"),
        ("published", "Against the study's published numbers"),
        ("headline", "Headline: MLM vs CLM"),
        ("zero-shot", "Zero-shot: minimal pairs"),
        ("learning-curves", "Learning curves: CLM vs MLM during pretraining"),
        *([("overview", "Every objective at a glance")] if has_objectives else []),
        *((section.anchor, section.title) for section in zoo_sections),
        ("downstream", "Downstream suite: every number of every metric"),
        ("baselines", "Baselines"),
        *([("outside", "Outside models")] if has_outside else []),
        *([("study", "The study's released results, recomputed")] if has_study else []),
        ("pretraining", "Pretraining"),
        ("finetuning", "Fine-tuning"),
        ("claims", "Claims checked"),
        ("provenance", "Data provenance"),
        ("cost", "Cost"),
        ("reproducibility", "Reproducibility"),
    ]


@dataclass(frozen=True)
class Block:
    """One registered display in its place: its tables, or what to say when it has none."""

    tables: list[Table]
    empty: str
    css: str


def section_blocks(frames: Mapping[str, pd.DataFrame], confidence: float) -> dict[str, list[Block]]:
    """Every display the result tables name (:mod:`pipeline.analysis.table_schema`), as
    :mod:`.displays` places and renders it, by section, in order; the template shows a
    section's blocks where the section has its tables."""
    shown = sorted(
        ((DISPLAYS[name].section, DISPLAYS[name].order, name) for table in SCHEMAS.values() for name in table.displays),
    )
    blocks: dict[str, list[Block]] = {}
    for section, _, name in shown:
        display = DISPLAYS[name]
        blocks.setdefault(section, []).append(Block(display.render(frames, confidence), display.empty, display.css))
    return blocks


def render_html(context: Mapping[str, Any]) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return environment.get_template(TEMPLATE).render(**context)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="ReportSpec as JSON (title, confidence)")
    parser.add_argument("--scale", required=True, help="one paragraph on the scale of this run (the config's `scale`)")
    parser.add_argument("--tables", type=Path, required=True, help="the directory written by `aggregate`")
    parser.add_argument("--logs", nargs="*", type=Path, default=[], help="results/pretrain/{run}/log.csv files")
    parser.add_argument("--corpus-stats", type=Path, required=True, help="results/data/corpus/stats.json")
    parser.add_argument("--manifests", nargs="*", type=Path, default=[], help="results/sources/{name}/manifest.json files")
    parser.add_argument("--benchmarks", nargs="*", type=Path, default=[], help="benchmarks/<rule>/<name>.tsv files")
    parser.add_argument("--study", type=Path, help="results/study, written by `study-results` (the study's released results)")
    parser.add_argument("--html", type=Path, required=True, help="output HTML, e.g. reports/replication.html")
    parser.add_argument("--pdf", type=Path, required=True, help="output PDF, e.g. reports/replication.pdf")
    parser.add_argument("--figures-dir", type=Path, required=True, help="output directory for the PNG figures")


def run(args: argparse.Namespace) -> None:
    with previous_outputs_kept(args.html, args.pdf, args.figures_dir):
        render(args)


def render(args: argparse.Namespace) -> None:
    spec: ReportSpec = strict.parse_json(ReportSpec, args.spec, "report")
    frames, provenance = read_tables(args.tables)
    logs = read_logs(args.logs, frames["pretraining"])
    corpus = read_corpus_stats(args.corpus_stats)
    manifests = [validated(read_json(path), MANIFEST_FIELDS, path) for path in args.manifests]
    benchmarks = read_benchmarks(args.benchmarks)
    with atomic_path(args.figures_dir) as directory:
        directory.mkdir()
        images = draw_figures(frames, logs, spec.confidence, directory)
    zoo_sections = objective_sections(frames["objectives"], frames["pretraining"], spec.confidence)
    study = read_study(args.study) if args.study is not None else None
    sections = report_sections(zoo_sections, len(frames["objectives"]) > 0, len(frames["outside_scores"]) > 0, study is not None)
    html = render_html(
        {
            "title": spec.title,
            "confidence": f"{100 * spec.confidence:g}%",
            "sections": sections,
            "numbers": {anchor: index for index, (anchor, _) in enumerate(sections, start=1)},
            "titles": dict(sections),
            "scale_text": args.scale,
            # the claims table sets the released results' verdicts beside this run's where they were given
            "blocks": section_blocks({**frames, "study_claims": study["claims"]} if study else frames, spec.confidence),
            "evidence_summary": evidence_tables.evidence_summary(
                frames["comparison"], frames["minimal_pairs_comparison"], frames["claims"]
            ),
            "tasks_left_out": {entry.task: entry.why for entry in spec.tasks_left_out},
            "has_minimal_pairs": len(frames["minimal_pairs"]) > 0,
            "has_curves": len(frames["learning_curves"]) > 0,
            "objective_sections": zoo_sections,
            "study_tables": study_score_tables(study["scores"]) if study else [],
            "study_paired_table": study_paired_table(study["paired"], spec.confidence) if study else None,
            "study_versus_table": study_versus_table(study["versus"], spec.confidence) if study else None,
            "study_claims_table": study_claims_table(study["claims"], frames["claims"]) if study else None,
            "verdict_counts": Counter(frames["claims"]["verdict"]),
            "sources_table": appendix_tables.sources_table(manifests),
            "corpus_table": appendix_tables.corpus_table(corpus),
            "cost_table": appendix_tables.cost_table(benchmarks) if len(benchmarks) else None,
            "reproducibility_table": appendix_tables.reproducibility_table(provenance),
            "images": images,
        }
    )
    with atomic_path(args.html) as temporary:
        temporary.write_text(html, encoding="utf-8")
    import weasyprint  # late: slow to import, and only this step needs it

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # one INFO line per glyph table otherwise

    with atomic_path(args.pdf) as temporary:
        weasyprint.HTML(string=html, base_url=str(args.html.parent.resolve())).write_pdf(temporary)
