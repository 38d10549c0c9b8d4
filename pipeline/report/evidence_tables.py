"""The report's evidence section: how many verdicts this scale could decide, what
pretraining bought over random init (fine-tuned families and minimal pairs), and what the
token-budget trend says more tokens would buy."""

from __future__ import annotations

import math

import pandas as pd

from pipeline.analysis.text import count_text, interval_text, number_text, text_or, variance_text
from pipeline.report.tables import Cell, Table, key, num, row

DECIDED = ("MLM", "CLM")


def evidence_summary(comparison: pd.DataFrame, minimal_pairs_comparison: pd.DataFrame, claims: pd.DataFrame) -> str:
    """One paragraph for the report's first screen: what the scale run could decide."""
    rows = comparison[~comparison["at_floor"].astype(bool)]
    decided = int(rows["winner"].isin(DECIDED).sum())
    gains = [comparison[f"{arm}_versus_random"] for arm in ("mlm", "clm") if f"{arm}_versus_random" in comparison]
    cells = pd.concat(gains) if gains else pd.Series(dtype=object)
    better, measured = int((cells == "better").sum()), int(cells.isin(["better", "worse", "no difference resolved"]).sum())
    seeds = comparison["pretraining_seeds"].max() if len(comparison) else 1
    parts = [
        f"MLM vs CLM: {decided} of {len(rows)} task and family rows with evidence decided (interval excludes zero); "
        f"{len(comparison) - len(rows)} rows at their floor for both objectives carry none.",
        f"Pretrained vs random init: {better} of {measured} (row, objective) cells better with the interval above zero.",
    ]
    if len(minimal_pairs_comparison):
        pooled = minimal_pairs_comparison[minimal_pairs_comparison["kind"] == "all"]
        verdicts = [f"{text_or(winner, 'undecided')} at {size}" for size, winner in zip(pooled["size"], pooled["winner"])]
        parts.append(f"Minimal pairs (all kinds), MLM vs CLM: {', '.join(verdicts)}.")
    if len(claims):
        counts = claims["verdict"].value_counts()
        parts.append("Claims: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) + ".")
    parts.append(f"Intervals are {variance_text(seeds)}.")
    return " ".join(parts)


def gain_cells(item: pd.Series, arm: str) -> tuple[Cell, Cell]:
    verdict = item[f"{arm}_versus_random"]
    verdict = text_or(verdict, "—")
    return (
        num(
            interval_text(item[f"{arm}_minus_random_mean"], item[f"{arm}_minus_random_low"], item[f"{arm}_minus_random_high"], signed=True)
        ),
        Cell(verdict, f"versus-{verdict.replace(' ', '-')}"),
    )


def versus_random_table(comparison: pd.DataFrame, minimal_pairs: pd.DataFrame, confidence: float) -> Table:
    """Per (size, task | family): MLM − random init and CLM − random init, fine-tuned; then
    the minimal pairs (all kinds), where each arm is measured against the weights it started from."""
    level = f"{100 * confidence:g}% CI"
    rows = []
    for _, item in comparison.iterrows():
        name = f"{item['name']} average" if item["level"] == "family" else item["name"]
        floor = " (at floor)" if bool(item["at_floor"]) else ""
        rows.append(
            row(
                key(f"{name}{floor}"),
                key(item["size"]),
                *gain_cells(item, "mlm"),
                *gain_cells(item, "clm"),
                css="family" if item["level"] == "family" else "",
            )
        )
    finals = minimal_pairs[minimal_pairs["step"].isna() & (minimal_pairs["kind"] == "all") & minimal_pairs["random_run"].notna()]
    for size, at_size in finals.groupby("size", sort=False):
        cells = []
        for arm in ("mlm", "clm"):
            own = at_size[at_size["run_name"] == arm]
            if own.empty:
                cells += [num("—"), Cell("—")]
                continue
            item = own.iloc[0]
            verdict = item["versus_random"]
            cells += [
                num(interval_text(item["minus_random_mean"], item["minus_random_low"], item["minus_random_high"], signed=True)),
                Cell(verdict, f"versus-{verdict.replace(' ', '-')}"),
            ]
        rows.append(row(key("minimal pairs, zero-shot (all kinds)"), key(size), *cells, css="family"))
    seeds = comparison["pretraining_seeds"].max() if len(comparison) else 1
    return Table(
        f"Pretrained − random init (test points; minimal pairs: pairs won), ± {level}",
        ("Task or family", "Size", "MLM − random", "MLM vs random", "CLM − random", "CLM vs random"),
        tuple(rows),
        note=f"Random init: the same backbone from the initial weights each pretraining run started from, fine-tuned with the "
        f"same protocol (or scored the same way, for minimal pairs). Intervals are {variance_text(seeds)}. A row at its floor "
        "is one where neither objective cleared the trivial baseline.",
    )


def tokens_text(tokens: float) -> str:
    return "—" if math.isnan(tokens) else count_text(tokens)


def budget_fit_table(fit: pd.DataFrame, trend: pd.DataFrame, confidence: float) -> Table:
    """Per (family | minimal pairs, size, contrast): the effect at each budget measured, the
    trend per decade of tokens, and the budget the trend says would decide an undecided one."""
    level = f"{100 * confidence:g}% CI"
    shown = fit[fit["level"] != "task"]
    rows = []
    for _, item in shown.iterrows():
        points = trend[
            (trend["level"] == item["level"])
            & (trend["name"] == item["name"])
            & (trend["size"] == item["size"])
            & (trend["contrast"] == item["contrast"])
        ]
        measured = "; ".join(
            f"{count_text(p['tokens'])}: {interval_text(p['effect_mean'], p['effect_low'], p['effect_high'], signed=True)}"
            for _, p in points.sort_values("tokens").iterrows()
        )
        slope = number_text(item["slope_per_decade"], signed=True)
        name = item["name"] if item["level"] != "family" else f"{item['name']} average"
        rows.append(
            row(
                key(name),
                key(item["size"]),
                key(item["contrast"]),
                Cell(measured),
                num(slope),
                num(tokens_text(item["tokens_to_decide"])),
                Cell(item["trend"]),
            )
        )
    return Table(
        f"Effect against pretraining tokens (points, ± {level}) and the fitted trend",
        (
            "Family",
            "Size",
            "Contrast",
            "Measured at each budget (tokens: effect)",
            "Trend (points per 10× tokens)",
            "Tokens to decide",
            "Status",
        ),
        tuple(rows),
        note="Budgets are the learning-curve checkpoints (taken before the learning-rate decay) and the final model. The trend "
        "is a least-squares line in log10(tokens) through the measured points; tokens to decide is where that line leaves the "
        "interval half-width measured at the largest budget, held fixed: an extrapolation for planning, not a result. "
        "Per-task lines are in budget_fit.csv.",
        css="wide-text",
    )
