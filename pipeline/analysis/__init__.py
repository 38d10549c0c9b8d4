"""The science of the report: every number, interval, verdict and comparison (this run's, the
study's released results' and its published tables'), computed by the aggregate stage into the
CSVs of ``results/tables/``. Nothing here renders; :mod:`pipeline.report` renders what it wrote."""
