"""Task readers that derive proxies of the study's tasks from BBC News articles.

Each stands in for a dataset of the study that no pinned artifact provides (QQP/MNLI,
CoNLL-2003, SQuAD v2/ReCoRD, MS MARCO, needle in a haystack); the task files in
``config/tasks/`` describe what each does, and this code does exactly that. Shared rules:

* every row's ``group`` is its article's (``business/001``), so prepare_task's group split
  keeps an article's rows in one split, the same split in every BBC task;
* one article per group (:func:`bbc.unique_articles`), in sorted order, and random
  choices seeded per article (``Random("<reader>:<article id>")``): the same rows on
  every run and machine;
* rows that combine two articles (a negative sentence pair, an unanswerable question)
  draw the second article from the same topic and the same split (``split_of``), so no
  evaluation text reaches training and decontamination removes what the topic task does;
* sizes are kept small (a few thousand rows) so that fine-tuning stays cheap on a CPU.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.data.sources.bbc import Article, unique_articles
from pipeline.data.sources.names import NameFinder, iob2_tags, tokenize
from pipeline.data.splits import SplitOf

PAIRS_PER_ARTICLE = 3  # same_article: labels alternate within each split, so half are "same"
PAIR_SENTENCE_WORDS = (5, 40)  # two sentences must fit max_length 96 together
TAGGED_SENTENCES_PER_ARTICLE = 3  # proper_nouns: about 6,200 sentences from the 2,060 article groups
TAGGED_SENTENCE_TOKENS = (5, 40)  # fits max_length 64 after sub-word splitting
PASSAGE_WORDS = 60  # news_cloze: the opening sentences that fit in this many words
QUESTION_WORDS = (6, 30)  # question and passage must fit max_length 128 together
QUESTIONS_PER_ARTICLE = 2
UNANSWERABLE_EVERY = 3  # every third question of a split gets another article's passage
PLACEHOLDER = "@placeholder"


def read_sentence_pairs(root: Path, split_of: SplitOf) -> Iterator[dict[str, Any]]:
    """same_article: sentence pairs labelled "same" (two non-adjacent sentences of one
    article) or "different" (one of them with a sentence of another article of the
    same topic and split); labels alternate within each split, the order within a pair is
    random."""
    articles = unique_articles(root)
    eligible = {a.id: [i for i, s in enumerate(a.sentences) if _within(len(s.split()), PAIR_SENTENCE_WORDS)] for a in articles}
    pools = _pools([a for a in articles if _non_adjacent_pairs(eligible[a.id])], split_of)
    emitted: Counter[str] = Counter()
    for article in articles:
        positives = _non_adjacent_pairs(eligible[article.id])
        if not positives:
            continue
        split = split_of(article.group)
        rng = random.Random(f"bbc_sentence_pairs:{article.id}")
        positives = rng.sample(positives, min(len(positives), PAIRS_PER_ARTICLE))
        partners = [p for p in pools[article.topic, split] if p.id != article.id]
        for number in range(PAIRS_PER_ARTICLE):
            if emitted[split] % 2 == 0:
                if not positives:
                    break
                i, j = positives.pop()
                first, second, label = article.sentences[i], article.sentences[j], "same"
            else:
                if not partners:
                    break
                partner = rng.choice(partners)
                first = article.sentences[rng.choice(eligible[article.id])]
                second, label = partner.sentences[rng.choice(eligible[partner.id])], "different"
            if rng.random() < 0.5:
                first, second = second, first
            emitted[split] += 1
            yield {"id": f"{article.id}/pair{number}", "group": article.group, "text": first, "text_pair": second, "label": label}


def read_proper_noun_tags(root: Path) -> Iterator[dict[str, Any]]:
    """proper_nouns: sentences as lower-cased tokens with IOB2 NAME tags from the original
    capitalisation (:mod:`names`; case counts over every article's sentences), up to
    three random sentences per article."""
    articles = unique_articles(root)
    finder = NameFinder(s for a in articles for s in a.sentences)
    for article in articles:
        rng = random.Random(f"bbc_proper_noun_tags:{article.id}")
        tokenized = [(i, sentence, tokenize(sentence)) for i, sentence in enumerate(article.sentences)]
        eligible = [item for item in tokenized if _within(len(item[2]), TAGGED_SENTENCE_TOKENS)]
        for i, sentence, tokens in sorted(rng.sample(eligible, min(len(eligible), TAGGED_SENTENCES_PER_ARTICLE))):
            yield {
                "id": f"{article.id}/s{i:03d}",
                "group": article.group,
                "tokens": [t.group().lower() for t in tokens],
                "tags": iob2_tags(len(tokens), finder.spans(sentence, tokens)),
            }


def read_answerable_cloze(root: Path, split_of: SplitOf) -> Iterator[dict[str, Any]]:
    """news_qa: news_cloze's questions with every one answerable (SQuAD v1's shape): the
    questions news_cloze pairs with another article's passage keep their own."""
    return read_cloze(root, split_of, answerable_only=True)


def read_cloze(root: Path, split_of: SplitOf, answerable_only: bool = False) -> Iterator[dict[str, Any]]:
    """news_cloze: the passage is an article's opening sentences (up to PASSAGE_WORDS
    words); a question is a later sentence with one name (:mod:`names`) that also occurs
    in the passage replaced by @placeholder, and its answer that name's first occurrence
    in the passage; up to QUESTIONS_PER_ARTICLE questions from different sentences and
    names. Unless ``answerable_only``, every UNANSWERABLE_EVERY-th question of a split is
    paired instead with the passage of another article of the same topic and split that
    lacks the name: no answer."""
    articles = unique_articles(root)
    finder = NameFinder(s for a in articles for s in a.sentences)
    lengths = {a.id: _passage_length(a) for a in articles}
    passages = {a.id: " ".join(a.sentences[: lengths[a.id]]) for a in articles}
    pools = _pools([a for a in articles if lengths[a.id]], split_of)
    asked: Counter[str] = Counter()
    for article in articles:
        if not lengths[article.id]:
            continue
        split = split_of(article.group)
        rng = random.Random(f"bbc_cloze:{article.id}")
        chosen = _choose_questions(article, _cloze_candidates(article, lengths[article.id], finder), rng)
        for number, (index, start, end) in enumerate(chosen):
            sentence = article.sentences[index]
            name = sentence[start:end]
            context = passages[article.id]
            answers = {"text": [name], "answer_start": [_whole_words(name).search(context).start()]}  # type: ignore[union-attr]
            if not answerable_only and asked[split] % UNANSWERABLE_EVERY == UNANSWERABLE_EVERY - 1:
                others = [p for p in pools[article.topic, split] if p.id != article.id]
                lacking = (p for p in rng.sample(others, len(others)) if not _whole_words(name, re.IGNORECASE).search(passages[p.id]))
                other = next(lacking, None)
                if other is None:
                    continue
                context, answers = passages[other.id], {"text": [], "answer_start": []}
            asked[split] += 1
            question = sentence[:start] + PLACEHOLDER + sentence[end:]
            yield {"id": f"{article.id}/q{number}", "group": article.group, "question": question, "context": context, "answers": answers}


def read_titles(root: Path) -> Iterator[dict[str, Any]]:
    """title_search: one row per article, its title the query and its body the document."""
    for article in unique_articles(root):
        yield {"id": article.id, "group": article.group, "query": article.title, "document": article.body}


def read_sentences(root: Path) -> Iterator[dict[str, Any]]:
    """needle: every sentence of every article body, in order, as distractor text."""
    for article in unique_articles(root):
        for i, sentence in enumerate(article.sentences):
            yield {"id": f"{article.id}/{i:03d}", "group": article.group, "text": sentence}


# ------------------------------------------------------------------ helpers


def _within(value: int, bounds: tuple[int, int]) -> bool:
    return bounds[0] <= value <= bounds[1]


def _non_adjacent_pairs(indices: list[int]) -> list[tuple[int, int]]:
    return [(i, j) for i in indices for j in indices if j - i >= 2]


def _pools(articles: list[Article], split_of: SplitOf) -> dict[tuple[str, str], list[Article]]:
    """Articles by (topic, split): where a row's second article is drawn from."""
    pools: dict[tuple[str, str], list[Article]] = defaultdict(list)
    for article in articles:
        pools[article.topic, split_of(article.group)].append(article)
    return pools


def _passage_length(article: Article) -> int:
    """How many opening sentences fit in PASSAGE_WORDS words (0 when the first does not)."""
    count = words = 0
    for sentence in article.sentences:
        words += len(sentence.split())
        if words > PASSAGE_WORDS:
            break
        count += 1
    return count


def _cloze_candidates(article: Article, length: int, finder: NameFinder) -> list[tuple[int, int, int]]:
    """(sentence index, start, end) of each name in a sentence after the passage (its
    first ``length`` sentences) that occurs once in that sentence and somewhere in the passage."""
    passage = " ".join(article.sentences[:length])
    candidates = []
    for index in range(length, len(article.sentences)):
        sentence = article.sentences[index]
        if not _within(len(sentence.split()), QUESTION_WORDS):
            continue
        tokens = tokenize(sentence)
        for start, end in finder.spans(sentence, tokens):
            begin, finish = tokens[start].start(), tokens[end - 1].end()
            name = sentence[begin:finish]
            if len(_whole_words(name).findall(sentence)) == 1 and _whole_words(name).search(passage):
                candidates.append((index, begin, finish))
    return candidates


def _choose_questions(article: Article, candidates: list[tuple[int, int, int]], rng: random.Random) -> list[tuple[int, int, int]]:
    """Up to QUESTIONS_PER_ARTICLE random candidates, no two from one sentence or of one name, in sentence order."""
    chosen: list[tuple[int, int, int]] = []
    for index, start, end in rng.sample(candidates, len(candidates)):
        name = article.sentences[index][start:end]
        if len(chosen) < QUESTIONS_PER_ARTICLE and all(index != i and name != article.sentences[i][s:e] for i, s, e in chosen):
            chosen.append((index, start, end))
    return sorted(chosen)


def _whole_words(name: str, flags: int = 0) -> re.Pattern[str]:
    """``name`` where it is not part of a longer word."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", flags)
