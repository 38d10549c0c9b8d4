"""What a configuration reads from the Hugging Face hub, staged into a local mirror for clusters
whose compute nodes are offline (``python -m pipeline stage``), and read back from it
(``hub_mirror:``)."""
