"""The study's published tables as data: all 800 cells load and pass their checks, the family
gaps the paper states come out of them, and each kind of transcription slip is one line naming
the file and the row or model at fault."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pipeline.errors import PipelineError
from pipeline.external.published_tables import PUBLISHED, read_published_tables


def test_every_cell_of_tables_2_to_17_loads():
    tables = read_published_tables()
    assert len(tables) == 800
    assert tables.groupby("experiment").size().to_dict() == {"mlm_vs_clm": 240, "data_efficiency": 192, "two_stage": 240, "cpt": 128}
    assert tables["family"].value_counts().to_dict() == {"SC": 200, "TC": 200, "QA": 200, "IR": 200}


def test_the_family_gaps_the_paper_states_come_out_of_the_tables():
    """MLM-40 minus CLM, family averages at 42k (REFERENCE.md section 8)."""
    tables = read_published_tables()
    averages = tables[(tables["experiment"] == "mlm_vs_clm") & (tables["dataset"] == "Average")]
    mlm = averages[averages["masking"] == 40].set_index(["family", "size"])["mean"]
    clm = averages[averages["objective"] == "CLM"].set_index(["family", "size"])["mean"]
    gaps = (mlm - clm).round(2)
    stated = {"SC": (2.09, 3.42, 5.55), "TC": (-0.05, -0.48, 0.05), "QA": (10.17, 20.68, 25.80), "IR": (2.95, 3.35, 1.27)}
    for family, values in stated.items():
        assert [gaps[(family, size)] for size in ("210M", "610M", "1B")] == pytest.approx(list(values), abs=1e-9)


def rows() -> list[dict[str, str]]:
    with open(PUBLISHED, newline="") as handle:
        return list(csv.DictReader(handle))


def write(path: Path, table: list[dict[str, str]]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows()[0]))
        writer.writeheader()
        writer.writerows(table)
    return path


def edited(line: int, **changes: str) -> list[dict[str, str]]:
    """The published rows with those of file line ``line`` (the header is line 1) changed."""
    table = rows()
    table[line - 2] = {**table[line - 2], **changes}
    return table


@pytest.mark.parametrize(
    ("table", "error"),
    [
        (edited(5, mean="85.20"), "Table 2, 210M MLM-20, 42000 steps: Average 85.20 is not its datasets' mean 85.073"),
        (edited(2, dataset="SST2"), "line 2: dataset 'SST2' is not one of Table 2's (SC)"),
        (edited(2, mean="n/a"), "line 2: column 'mean': 'n/a' is not a number"),
        (edited(2, mean="189.93"), "line 2: column 'mean': '189.93' is not a number from 0 to 100"),
        (edited(2, ci="inf"), "line 2: column 'ci': 'inf' is not a number from 0 to 100"),
        (edited(2, table="2.5"), "line 2: column 'table': '2.5' is not a whole number from 2 to 17"),
        (edited(2, steps="42000.9"), "line 2: column 'steps': '42000.9' is not a whole number from 0 to 1,000,000"),
        (edited(2, steps="1e23"), "line 2: column 'steps': '1e23' is not a whole number from 0 to 1,000,000"),
        (edited(2, steps="-42000"), "line 2: column 'steps': '-42000' is not a whole number from 0 to 1,000,000"),
        (edited(2, masking="-1"), "line 2: column 'masking': '-1' is not a whole number from 1 to 99"),
        (edited(2, masking="200"), "line 2: column 'masking': '200' is not a whole number from 1 to 99"),
        ([], "no rows under its header"),
        (
            edited(2, table="6"),
            "line 2: table 6 of experiment 'mlm_vs_clm' is not one of its tables"
            " (mlm_vs_clm 2-5, data_efficiency 6-9, two_stage 10-13, cpt 14-17)",
        ),
        (
            rows()[1:],
            "Table 2, 210M MLM-20, 42000 steps: datasets ['Average', 'MNLI', 'QQP'], not each of ['Average', 'MNLI', 'QQP', 'SST-2'] once",
        ),
    ],
    ids=[
        "average",
        "dataset",
        "not-a-number",
        "out-of-range",
        "infinite-ci",
        "fractional-table",
        "fractional-steps",
        "huge-steps",
        "negative-steps",
        "negative-masking",
        "masking-over-100",
        "header-only",
        "table-of-another-experiment",
        "a-dataset-missing",
    ],
)
def test_a_slip_in_the_published_tables_is_one_line_naming_it(tmp_path, table, error):
    with pytest.raises(PipelineError) as raised:
        read_published_tables(write(tmp_path / "tables.csv", table))
    assert str(raised.value) == f"{tmp_path / 'tables.csv'}: {error}"


def test_rows_two_tables_share_must_agree(tmp_path):
    """The 610M MLM-40 at 42k is the 0+42k split of Table 10 too: one model, one number."""
    table = rows()
    split = next(i for i, row in enumerate(table) if row["table"] == "10" and row["clm_steps"] == "0" and row["steps"] == "42000")
    table[split] = {**table[split], "ci": "0.63"}
    with pytest.raises(PipelineError) as raised:
        read_published_tables(write(tmp_path / "tables.csv", table))
    assert str(raised.value) == f"{tmp_path / 'tables.csv'}: 610M MLM at 42k: the 42k split (Tables 10, 11, 12, 13) differs from Tables 2-5"


def study_curve(published):
    """study_curve.csv as the aggregate writes it: from the curves of the published tables' results."""
    from pipeline.analysis.published_results import published_results
    from pipeline.analysis.study_cells import curve_gaps

    return curve_gaps(published_results(published, 0.95).tables["curve_comparison"])


def test_the_study_s_data_efficiency_gaps_are_those_its_claims_quote():
    """MLM-40 − CLM by family at each step of Tables 6-9, as claims.yaml's status of c04 quotes
    them (CLM − MLM there): per family at 5k, and over the four families at 1k and 40k."""
    from pipeline.analysis.study_cells import STUDY_TOKENS_PER_STEP

    gaps = study_curve(read_published_tables()).set_index(["family", "step"]).rename(columns={"difference_mean": "gap"})
    assert {family: round(gaps.loc[(family, 5000), "gap"], 2) for family in ("SC", "TC", "QA", "IR")} == {
        "SC": -6.07,
        "TC": -1.81,
        "QA": -6.41,
        "IR": -10.72,
    }
    over_families = gaps["gap"].groupby(level="step").mean().round(2)
    assert (over_families[1000], over_families[40000]) == (-4.12, 5.35)
    assert gaps.loc[("SC", 40000), "tokens"] == 40000 * STUDY_TOKENS_PER_STEP  # 94.4B tokens


def test_the_study_curve_s_interval_is_welch_s_over_its_fine_tuning_seeds():
    """Each side's published 95% half-width is a t-interval over 5 seeds (se = ci / t_4); their
    difference's is Welch's: narrower than the two half-widths combined as sqrt(a² + b²), which the
    figure once drew (t_4 > t at Welch's 4-8 degrees of freedom)."""
    from scipy import stats

    from pipeline.external.published_tables import AVERAGE

    published = read_published_tables()
    row = study_curve(published).set_index(["family", "step"]).loc[("SC", 5000)]
    cells = published[(published["experiment"] == "data_efficiency") & (published["dataset"] == AVERAGE)]
    cells = cells[(cells["family"] == "SC") & (cells["steps"] == 5000)].set_index("objective")["ci"]
    t4 = stats.t.ppf(0.975, 4)
    se = (cells["MLM"] / t4) ** 2 + (cells["CLM"] / t4) ** 2
    df = se**2 / (((cells["MLM"] / t4) ** 4 + (cells["CLM"] / t4) ** 4) / 4)
    half_width = row["difference_high"] - row["difference_mean"]
    assert half_width == pytest.approx(stats.t.ppf(0.975, df) * se**0.5, rel=1e-9)
    assert half_width < (cells["MLM"] ** 2 + cells["CLM"] ** 2) ** 0.5
