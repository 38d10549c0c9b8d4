"""What a configuration reads from the Hugging Face hub, staged into a local mirror for clusters
whose compute nodes are offline, and read back from it (``hub_mirror:``): the references, the hub
clients, the mirror's layout and manifest. The ``stage`` command that fills a mirror resolves a
config first, so it sits above, with the other commands that read one (:mod:`pipeline.workflow.stage`)."""
