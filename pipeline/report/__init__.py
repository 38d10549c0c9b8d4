"""The replication report: small result files in, tables, figures and verdicts out.

Two stages, so that the numbers exist as plain CSV before anything is drawn:

- ``aggregate`` (:mod:`.aggregate`) reads and validates every per-run JSON file
  (:mod:`.inputs`, :mod:`.records`), derives the tables (:mod:`.scoring`,
  :mod:`.comparisons`, :mod:`.curves`) and judges every claim of the claims file
  (:mod:`.claims`), then writes them as CSV;
- ``report`` (:mod:`.render`) reads those CSVs back and turns them into one HTML page
  and its PDF, with one function per displayed table (:mod:`.tables`,
  :mod:`.objective_sections`, :mod:`.appendix_tables`) and per figure (:mod:`.figures`),
  every number written by :mod:`.text`.

The two meet in the result-table registry (:mod:`.catalog`: one module per table, naming
its columns, its build and where the report shows it) and the results contract
(:mod:`.contract`: shared columns and :class:`.contract.Results`). Statistics
(t-intervals, Welch differences) live in :mod:`.stats`; which run is the reference MLM or CLM run, and which section of the
report shows each run of the objective zoo, in :mod:`.runs`. The report reads only
JSON/CSV/TSV result files, never checkpoints.
"""
