"""The line a warm-started job's log ends with: its CPU seconds and peak RSS, which Snakemake's
benchmark cannot see (it measured the client). Written by :mod:`pipeline.warm_worker`, read by
the report's cost table; a module of its own so that the report depends on this line's format
and not on the worker, whose edits then rerun nothing."""

USAGE_PREFIX = "warm worker usage: "
