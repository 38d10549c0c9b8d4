"""The result tables, registered by name (:mod:`pipeline.registry`): importing this package
registers every module in it, so a new table (its columns, its build, its place in the report)
is one new file."""

from pipeline.analysis.catalog.base import TABLES, ResultTable, Sources, build_order, register
from pipeline.registry import load_members

load_members(__name__, __path__)

__all__ = ["TABLES", "ResultTable", "Sources", "build_order", "register"]
