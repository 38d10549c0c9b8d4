"""Downstream metrics, registered once with their headline score and direction
(:mod:`pipeline.registry`): importing this package registers every module in it. Each metric
lives in its own module, which documents its exact definition and registers it."""

from pipeline.metrics.base import METRICS, Metric, get_metric, register
from pipeline.registry import load_members

load_members(__name__, __path__)

__all__ = ["METRICS", "Metric", "get_metric", "register"]
