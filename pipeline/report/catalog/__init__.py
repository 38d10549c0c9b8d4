"""The result tables, registered by name (:mod:`pipeline.registry`): importing this package
registers every module in it, so a new table (its columns, its build, its place in the report)
is one new file."""

from pipeline.registry import load_members
from pipeline.report.catalog.base import TABLES, Display, ResultTable, Sources, build_order, register

load_members(__name__, __path__)

__all__ = ["TABLES", "Display", "ResultTable", "Sources", "build_order", "register"]
