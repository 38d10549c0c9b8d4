"""What the workflow asks of the package, when Snakemake plans: the config resolved and planned
(:mod:`.configure`), which jobs exist and where they write (:mod:`.targets`), each rule's params
and code hash (:mod:`.rule_params`, :mod:`.job_code`), what a GPU job requests and costs
(:mod:`.job_resources`, :mod:`.cost`, :mod:`.measured_mfu`), the commands that answer
questions about a plan (``check-config``, ``cost``, ``progress``), and ``stage``, which fills a hub mirror
with what a plan reads. Nothing here trains or scores."""
