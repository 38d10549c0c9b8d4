"""study_curve.csv: the study's own MLM-40 − CLM by family along its data-efficiency curve (610M, Tables 6-9)."""

from pipeline.analysis.catalog.base import ResultTable, register
from pipeline.analysis.contract import STUDY_CURVE_COLUMNS
from pipeline.analysis.study_cells import curve_gaps
from pipeline.external.published_tables import read_published_tables

register(
    ResultTable(
        name="study_curve",
        description="per (family, step) of the study's 610M data-efficiency tables: its MLM-40 − CLM and the tokens seen",
        columns=tuple(STUDY_CURVE_COLUMNS),
        needs=(),
        build=lambda sources, built: curve_gaps(read_published_tables()),
    )
)
