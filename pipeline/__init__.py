"""Replication harness for language-model pretraining objectives.

Each stage of the Snakemake DAG is a module run as ``python -m pipeline <stage>``;
see ``pipeline/__main__.py`` for the list.
"""

from pipeline import cpu_paths

# Before any stage imports torch: the CPU kernels' code paths (pipeline/cpu_paths.py).
cpu_paths.apply()
