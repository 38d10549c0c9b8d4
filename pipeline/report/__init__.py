"""The replication report's rendering: the CSVs the aggregate stage wrote
(:mod:`pipeline.analysis`) in, one HTML page and its PDF out.

``report`` (:mod:`.render`) reads every registered table back (checking its columns), renders
each display a table names (:mod:`.displays`: its section, its place, its tables), the
objective-zoo sections (:mod:`.objective_sections`), the appendix (:mod:`.appendix_tables`) and
one function per figure (:mod:`.figures`), every number written by
:mod:`pipeline.analysis.text`. Nothing here computes a statistic or a verdict: an edit here
reruns the report and not the aggregate. The report reads only JSON/CSV/TSV result files,
never checkpoints.
"""
