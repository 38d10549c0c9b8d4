"""vaderSentiment's sdist: Rotten Tomatoes sentences with human sentiment ratings (sentiment task)."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

from pipeline.data.sources.locate import Row, archive_errors, find_one, nonempty
from pipeline.data.text import decode
from pipeline.errors import PipelineError


def read_movie_snippets(root: Path) -> Iterator[Row]:
    """Rotten Tomatoes sentences with their mean human sentiment rating (Hutto & Gilbert, 2014).

    The label is the sign of the mean score, as SST-2 binarises; neutral (0) sentences
    are dropped. The file writes a double quote as two single quotes.
    """
    archive = find_one(root, "*/additional_resources/hutto_ICWSM_2014.tar.gz")
    member_name = "movieReviewSnippets_GroundTruth.txt"
    with archive_errors(archive, root), tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and Path(m.name).name == member_name]
        if not members:
            raise PipelineError(f"{archive}: no {member_name} inside")
        where = f"{archive}:{members[0].name}"
        data = tar.extractfile(members[0]).read()  # type: ignore[union-attr]
    return nonempty(_vader_rows(decode(data, where), where), where)


def _vader_rows(text: str, where: str) -> Iterator[Row]:
    for number, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 is text
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        try:
            snippet_id, score_text, sentence = fields
            score = float(score_text)
        except ValueError:
            raise PipelineError(f"{where}:{number}: expected 'id<TAB>score<TAB>sentence', got {line[:60]!r}") from None
        if score != 0:
            label = "positive" if score > 0 else "negative"
            yield {"id": snippet_id, "text": sentence.replace("''", '"'), "label": label}
