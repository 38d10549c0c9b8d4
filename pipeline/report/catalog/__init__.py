"""The result tables, registered by name: importing this package registers every module in
it, so a new table (its columns, its build, its place in the report) is one new file."""

import importlib
import pkgutil

from pipeline.report.catalog.base import TABLES, Display, ResultTable, Sources, build_order, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["TABLES", "Display", "ResultTable", "Sources", "build_order", "register"]
