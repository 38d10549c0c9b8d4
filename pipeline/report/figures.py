"""The report's figures: one function per figure, small tables in, a PNG file out, drawn with
:mod:`.panels`' style and machinery.

Figures that compare objective kinds use the same colour per kind (or, for the objective zoo,
per report section), and every figure the same line style per model size, so a reader learns
the legend once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from pipeline.analysis.runs import MASKING, SECTIONS, TWO_STAGE
from pipeline.analysis.text import count_text, replacement_text
from pipeline.report.panels import (
    STYLE,
    below_axes_legend,
    centred,
    half_widths,
    legend_under_panels,
    log_axis_at,
    panel_figure,
    ring,
    save,
)

# Colour-blind-safe (ColorBrewer Dark2); objective kinds outside these three take
# the remaining colours in a stable order.
KIND_COLOURS = {"clm": "#d95f02", "mlm": "#1b9e77", "random": "#7570b3"}
OTHER_COLOURS = ("#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")
SECTION_COLOURS = dict(zip(SECTIONS, ("#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#666666")))
# Lines that differ by something other than kind (runs in one panel, task families).
SERIES_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666", "#1f78b4", "#b15928", "#6a3d9a")
SIZE_STYLES = ("-", "--", ":", "-.")
# A line of seed means with their interval bars, among many in one panel: small marks, so the bars stay readable.
SEED_MEANS = {"marker": "o", "markersize": 3, "capsize": 2, "linewidth": 1.2}


def kind_colour(kind: str) -> str:
    if kind in KIND_COLOURS:
        return KIND_COLOURS[kind]
    return OTHER_COLOURS[sum(map(ord, kind)) % len(OTHER_COLOURS)]


def size_style(size: str, sizes: Sequence[str]) -> str:
    return SIZE_STYLES[list(sizes).index(size) % len(SIZE_STYLES)] if size in sizes else SIZE_STYLES[-1]


def loss_curves(logs: Mapping[str, pd.DataFrame], pretraining: pd.DataFrame, sizes: Sequence[str], path: Path) -> Path:
    """Training loss against pretraining step, one panel per objective kind, one colour
    per run in a panel; every run in ``logs`` must have a row in ``pretraining``.

    Kinds get separate panels because their losses are over different targets (MLM:
    masked positions only), so curves of different kinds must not be compared by
    height. The x axis is the step, not tokens: every objective reads the same corpus
    blocks per step, and a two-stage run's second stage starts at its split step.
    Continued-pretraining runs are left out, as their steps restart on a finished
    model. The raw per-step loss is drawn faintly, a running mean (2% of the steps) on
    top; held-out losses are the dots.
    """
    runs = pretraining.set_index("run")
    shown = {run: log for run, log in logs.items() if runs.loc[run, "study"] != "continued"}
    kinds = list(dict.fromkeys(runs.loc[list(shown), "objective_kind"]))

    def draw(ax: plt.Axes, kind: str) -> None:
        in_panel = [run for run in shown if runs.loc[run, "objective_kind"] == kind]
        for index, run in enumerate(in_panel):
            log = shown[run]
            colour, style = SERIES_COLOURS[index % len(SERIES_COLOURS)], size_style(runs.loc[run, "size"], sizes)
            window = max(1, len(log) // 50)
            ax.plot(log["step"], log["loss"], color=colour, alpha=0.2, linewidth=0.6, linestyle=style)
            smooth = log["loss"].rolling(window, min_periods=1).mean()
            ax.plot(log["step"], smooth, color=colour, linewidth=1.5, linestyle=style, label=run)
            heldout = log.dropna(subset=["heldout_loss"])
            ax.plot(heldout["step"], heldout["heldout_loss"], "o", color=colour, markeredgecolor="black", markersize=4)
        ax.set_title(f"{kind.upper()} pretraining loss")
        ax.set_xlabel("pretraining step")
        ax.set_ylabel("loss (nats per target token)")
        ax.legend(frameon=False, fontsize=7)

    return panel_figure(kinds, draw, path)


def learning_curves(curves: pd.DataFrame, sizes: Sequence[str], path: Path) -> Path:
    """Family-average test score (CI error bars) against the pretraining step: one panel
    per task family, one line per run with curve scores (colour: CLM and MLM as in every
    figure, other runs by name; line style: size); the ringed last point of a line is
    its final model. Points are nudged sideways per run so that bars at one step do not
    hide each other."""
    rows = curves[curves["level"] == "family"]
    families = list(dict.fromkeys(rows["family"]))

    def draw(ax: plt.Axes, family: str) -> None:
        in_panel = rows[rows["family"] == family]
        runs = list(dict.fromkeys(in_panel["run"]))
        for index, run in enumerate(runs):
            points = in_panel[in_panel["run"] == run].sort_values("step")
            first, colour = points.iloc[0], kind_colour(points.iloc[0]["run_name"])
            steps = points["step"].to_numpy() + 0.006 * in_panel["step"].max() * centred(index, len(runs))
            ax.errorbar(
                steps,
                points["test_mean"],
                yerr=half_widths(points),
                color=colour,
                linestyle=size_style(first["size"], sizes),
                label=run,
                **SEED_MEANS,
            )
            final = points["final"].to_numpy(dtype=bool)
            ring(ax, steps[final], points["test_mean"].to_numpy()[final], colour)
        ax.set_xlim(left=0)
        ax.set_title(f"{family} average")
        ax.set_xlabel("pretraining step (ringed: the final model)")
        ax.set_ylabel("test score (points)")
        ax.legend(frameon=False, fontsize=7)

    return panel_figure(families, draw, path)


def score_vs_learning_rate(means: pd.DataFrame, scores: pd.DataFrame, sizes: Sequence[str], path: Path) -> Path:
    """Test score against fine-tuning LR: one panel per task, one line per run.

    Points are seed means with t-interval error bars (lr_means.csv), nudged sideways per run so
    that bars do not hide each other; the ringed point is the LR chosen on validation.
    """
    tasks = list(dict.fromkeys(means["task"]))

    def draw(ax: plt.Axes, task: str) -> None:
        at_task = means[means["task"] == task]
        runs = list(dict.fromkeys(at_task["run"]))
        for index, run in enumerate(runs):
            points = at_task[at_task["run"] == run].sort_values("learning_rate")
            first, colour = points.iloc[0], kind_colour(points.iloc[0]["objective_kind"])
            nudge = 10 ** (0.03 * centred(index, len(runs)))
            ax.errorbar(
                points["learning_rate"] * nudge,
                points["test_mean"],
                yerr=half_widths(points),
                color=colour,
                linestyle=size_style(first["size"], sizes),
                label=run,
                **SEED_MEANS,
            )
            best = scores[(scores["task"] == task) & (scores["run"] == run)].iloc[0]
            ring(ax, best["best_learning_rate"] * nudge, best["test_mean"], colour)
        grid_rates = sorted(set(at_task["learning_rate"]))
        log_axis_at(ax, grid_rates, [f"{r:.0e}" for r in grid_rates])
        ax.set_title(task)
        ax.set_xlabel("fine-tuning learning rate")
        ax.set_ylabel(f"test {first['metric']} (points)")

    return panel_figure(tasks, draw, path, finish=legend_under_panels)


def difference_forest(comparison: pd.DataFrame, path: Path) -> Path:
    """MLM − CLM with its Welch CI for every task and family average, per size.

    A bar that does not cross the zero line is a winner; its colour is the winner's.
    """
    rows = comparison.iloc[::-1].reset_index(drop=True)
    with plt.rc_context(STYLE):
        figure, ax = plt.subplots(figsize=(7.2, 0.8 + 0.28 * len(rows)))
        for y, item in rows.iterrows():
            colour = {"MLM": KIND_COLOURS["mlm"], "CLM": KIND_COLOURS["clm"]}.get(item["winner"], "#888888")
            low, high = item["difference_low"], item["difference_high"]
            if not math.isnan(low):
                ax.plot([low, high], [y, y], color=colour, linewidth=2)
            ax.plot(item["difference_mean"], y, "D" if item["level"] == "family" else "o", color=colour, markersize=5)
        labels = [
            f"{r['name']} average, {r['size']}" if r["level"] == "family" else f"{r['name']}, {r['size']}" for _, r in rows.iterrows()
        ]
        ax.set_yticks(range(len(rows)), labels)
        for tick, (_, item) in zip(ax.get_yticklabels(), rows.iterrows()):
            tick.set_fontweight("bold" if item["level"] == "family" else "normal")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlabel("MLM − CLM test score (points); right of 0: MLM better")
        ax.grid(axis="y", alpha=0)
        figure.tight_layout()
        return save(figure, path)


def two_stage_scores(objectives: pd.DataFrame, sizes: Sequence[str], path: Path) -> Path:
    """Family average (CI error bars) against the share of the step budget trained with
    CLM before switching to MLM: 0% is the MLM run, 100% the CLM run (of that budget);
    one line per (family, size, budget), the budget named where there are several."""
    rows = objectives[(objectives["section"] == TWO_STAGE) & (objectives["level"] == "family")].dropna(subset=["clm_share"])
    several_budgets = rows["trained_steps"].nunique() > 1
    with plt.rc_context(STYLE):
        figure, ax = plt.subplots(figsize=(5.6, 3.3))
        for index, ((family, size, budget), group) in enumerate(rows.groupby(["family", "size", "trained_steps"], sort=False)):
            group = group.sort_values("clm_share")
            label = f"{family} average, {size}" + (f", {budget:,} steps" if several_budgets else "")
            ax.errorbar(
                100 * group["clm_share"],
                group["test_mean"],
                yerr=half_widths(group),
                color=SERIES_COLOURS[index % len(SERIES_COLOURS)],
                linestyle=size_style(size, sizes),
                marker="o",
                capsize=3,
                label=label,
            )
        shares = sorted(set(100 * rows["clm_share"]))
        ax.set_xticks(shares, [f"{share:g}%" + {0: "\n(MLM only)", 100: "\n(CLM only)"}.get(share, "") for share in shares])
        ax.set_xlabel("share of the step budget trained with CLM before switching to MLM")
        ax.set_ylabel("test score (points)")
        below_axes_legend(ax)
        figure.tight_layout()
        return save(figure, path)


def masking_scores(objectives: pd.DataFrame, sizes: Sequence[str], path: Path) -> Path:
    """Family average (CI error bars) against the MLM masking ratio, one line per
    (family, size, replacement rule); a rule with a single run (100% [MASK]) is a
    hollow square, nudged right of its ratio and labelled."""
    rows = objectives[(objectives["section"] == MASKING) & (objectives["level"] == "family") & (objectives["objective_kind"] == "mlm")]
    with plt.rc_context(STYLE):
        figure, ax = plt.subplots(figsize=(5.6, 3.3))
        for index, ((family, size), cell) in enumerate(rows.groupby(["family", "size"], sort=False)):
            colour = SERIES_COLOURS[index % len(SERIES_COLOURS)]
            for _, points in cell.groupby(["mask_token_fraction", "random_token_fraction"], sort=False):
                points = points.sort_values("mask_ratio")
                rule = replacement_text(points.iloc[0])
                if len(points) > 1:
                    ax.errorbar(
                        100 * points["mask_ratio"],
                        points["test_mean"],
                        yerr=half_widths(points),
                        color=colour,
                        linestyle=size_style(size, sizes),
                        marker="o",
                        capsize=3,
                        label=f"{family} average, {size}, {rule}",
                    )
                    continue
                x, y = 100 * points["mask_ratio"].iloc[0] + 0.8, points["test_mean"].iloc[0]
                ax.errorbar(
                    [x],
                    [y],
                    yerr=half_widths(points),
                    color=colour,
                    marker="s",
                    markerfacecolor="white",
                    linestyle="none",
                    capsize=3,
                    label=f"{family} average, {size}, {rule}",
                )
                ax.annotate(
                    f"{rule} ({points['run_name'].iloc[0]})", (x, y), xytext=(6, -3), textcoords="offset points", fontsize=7, color=colour
                )
        ax.set_xlabel("masking ratio (% of positions selected); rule: [MASK] / random / kept %")
        ax.set_ylabel("test score (points)")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}%"))
        below_axes_legend(ax)
        figure.tight_layout()
        return save(figure, path)


def objective_overview(objectives: pd.DataFrame, path: Path) -> Path:
    """Every pretrained run's family average with its CI, one panel per (family, size),
    coloured by report section, with the CLM and MLM reference scores as lines: those of the step
    budget most of the panel's runs trained (the zoo's, not the longer headline runs'), named in
    the panel's title where its runs trained several budgets.

    Dots and intervals rather than bars: bars must start at zero, where differences of
    a point between objectives scoring ~75 would not show; bars cut off above zero
    would misstate the ratios their lengths suggest.
    """
    rows = objectives[(objectives["level"] == "family") & ~objectives["repeated"]]
    cells = list(rows.groupby(["family", "size"], sort=False))
    heights = [0.9 + 0.22 * len(group) for _, group in cells]
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(len(cells), 1, figsize=(7.2, sum(heights)), height_ratios=heights, squeeze=False)
        for ax, ((family, size), group) in zip(axes.flat, cells):
            group = group.iloc[::-1].reset_index(drop=True)  # the first section on top
            ax.errorbar(group["test_mean"], group.index, xerr=half_widths(group), fmt="none", ecolor="#444444", capsize=2, linewidth=1)
            ax.scatter(group["test_mean"], group.index, c=[SECTION_COLOURS[s] for s in group["section"]], s=22, zorder=3)
            budget = group["trained_steps"].mode().max()  # the most common budget (the longer one on a tie)
            for kind, style in (("clm", ":"), ("mlm", "--")):
                reference = group[(group["run"] == group[f"{kind}_run"]) & (group["trained_steps"] == budget)]
                if len(reference):
                    ax.axvline(reference["test_mean"].iloc[0], color=KIND_COLOURS[kind], linestyle=style, linewidth=1)
            ax.set_yticks(group.index, group["run_name"])
            lines = f" (lines: CLM and MLM at {budget:,} steps)" if group["trained_steps"].nunique() > 1 else ""
            ax.set_title(f"{family} average, {size}{lines}")
            ax.set_xlabel("test score (points)")
            ax.grid(axis="y", alpha=0)
        handles = [
            Line2D([], [], marker="o", linestyle="none", color=SECTION_COLOURS[s], label=s) for s in SECTIONS if s in set(rows["section"])
        ]
        handles += [
            Line2D([], [], color=KIND_COLOURS[k], linestyle=style, label=f"{k.upper()} run") for k, style in (("clm", ":"), ("mlm", "--"))
        ]
        figure.legend(handles=handles, loc="lower center", ncol=3, frameon=False, bbox_to_anchor=(0.5, -0.01))
        figure.tight_layout(rect=(0, 0.9 / sum(heights), 1, 1))
        return save(figure, path)


def needle_heatmaps(details: pd.DataFrame, cell_prefix: str, path: Path) -> Path:
    """Needle-in-a-haystack exact match per (context length, needle depth), one panel per
    run: where in a context a model loses the fact, beside how long the context is."""
    cells = details[details["key"].str.startswith(cell_prefix)].copy()
    parsed = cells["key"].str.extract(r"length=(?P<length>[0-9]+),depth=(?P<depth>[0-9.]+)")
    cells["length"], cells["depth"] = parsed["length"].astype(int), parsed["depth"].astype(float)
    runs = list(dict.fromkeys(cells["run"]))

    def draw(ax: plt.Axes, run: str) -> None:
        table = cells[cells["run"] == run].pivot_table(index="length", columns="depth", values="test_mean")
        ax.imshow(table.to_numpy(), vmin=0, vmax=100, cmap="viridis", aspect="auto", origin="lower")
        ax.set_xticks(range(len(table.columns)), [f"{d:g}" for d in table.columns])
        ax.set_yticks(range(len(table.index)), [str(n) for n in table.index])
        for (i, j), value in pd.DataFrame(table.to_numpy()).stack().items():
            ax.text(j, i, f"{value:.0f}", ha="center", va="center", color="white" if value < 60 else "black", fontsize=7)
        ax.set(title=run, xlabel="needle depth (0 = start)", ylabel="context (words)")
        ax.grid(False)

    def finish(figure: plt.Figure, axes: list[plt.Axes]) -> None:
        figure.colorbar(axes[-1].images[0], ax=axes, shrink=0.8, label="exact match (%)")

    return panel_figure(runs, draw, path, columns=3, finish=finish)


def budget_trend(trend: pd.DataFrame, fit: pd.DataFrame, path: Path) -> Path:
    """One panel per family average (and the minimal pairs): every contrast against
    pretraining tokens, measured points with their intervals and the fitted trend line."""
    shown = trend[trend["level"] != "task"]
    panels = list(shown.groupby(["level", "name", "size"], sort=False))
    colours = {"MLM − CLM": "#666666", "MLM − random init": KIND_COLOURS["mlm"], "CLM − random init": KIND_COLOURS["clm"]}
    lines = fit.set_index(["level", "name", "size", "contrast"])

    def draw(ax: plt.Axes, panel: tuple[tuple[str, str, str], pd.DataFrame]) -> None:
        (level, name, size), points = panel
        contrasts = list(dict.fromkeys(points["contrast"]))
        furthest = points["tokens"].max()  # the furthest trend line's end
        for index, (contrast, series) in enumerate(points.groupby("contrast", sort=False)):
            series = series.sort_values("tokens")
            colour = colours.get(contrast, "#1f78b4")
            nudge = 10 ** (0.015 * centred(index, len(contrasts)))  # side by side, so bars do not hide each other
            points_style = {"fmt": "o", "color": colour, "capsize": 2, "markersize": 4, "label": contrast}
            ax.errorbar(series["tokens"] * nudge, series["effect_mean"], yerr=half_widths(series, "effect_"), **points_style)
            line = lines.loc[(level, name, size, contrast)]
            if not math.isnan(line["slope_per_decade"]):
                # Drawn out to the budget it says would decide, where it says one.
                right = (
                    series["tokens"].max()
                    if math.isnan(line["tokens_to_decide"])
                    else max(series["tokens"].max(), line["tokens_to_decide"])
                )
                ends = [series["tokens"].min(), right]
                furthest = max(furthest, right)
                ax.plot(ends, [line["intercept"] + line["slope_per_decade"] * math.log10(x) for x in ends], "--", color=colour, linewidth=1)
        ax.axhline(0, color="black", linewidth=0.8)
        budgets = sorted(set(points["tokens"]))
        log_axis_at(ax, budgets, [count_text(tokens) for tokens in budgets], right=furthest)
        ax.set_title(f"{name} average, {size}" if level == "family" else f"{name}, {size}")
        ax.set_xlabel("pretraining tokens")
        ax.set_ylabel("difference (points)")

    return panel_figure(panels, draw, path, finish=legend_under_panels)  # one legend for the figure, not under its first panel
