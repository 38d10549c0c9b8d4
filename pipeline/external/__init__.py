"""Artifacts made outside this harness that it reads: the study's released results."""
