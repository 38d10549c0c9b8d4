"""A fake Hugging Face hub holding every repository config/paper.yaml reads, each laid out as
the hub serves it (as far as this project could learn without hub access: EncodEval's loaders,
the repositories' cards and file names): GLUE's per-config Parquet directories, FineWeb-Edu's
`sample/100BT`, the hgissbkh copies' `data/<split>-*.parquet`, OntoNotes' Parquet conversion,
BEIR's gzipped JSON Lines with tab-separated qrels, MLDR's configs by card, and placeholder
model repositories. A few made-up rows each; columns, nesting and features are the real ones.
Staged with ``python -m pipeline stage --from-directory`` (tests/test_paper_staging.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def parquet(path: Path, table: dict, features: dict | None = None) -> str:
    import datasets

    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict(table, features=datasets.Features(features) if features else None).to_parquet(path)
    return str(path)


def jsonl_gz(path: Path, rows: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return str(path)


def tsv(path: Path, rows: list[tuple]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join("\t".join(map(str, row)) + "\n" for row in rows))
    return str(path)


def card(path: Path, configs: dict[str, dict[str, str]]) -> None:
    """A dataset card whose YAML header maps each config to its splits' file patterns."""
    lines = ["---", "configs:"]
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        lines += [f"  - split: {split}\n    path: {pattern}" for split, pattern in splits.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*lines, "---", "# fake"]) + "\n")


NER_TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
N = 24  # rows of a train split


def write_paper_hub(root: Path) -> Path:
    import datasets

    string, sequence = datasets.Value("string"), datasets.Sequence
    data = root / "datasets"
    # FineWeb-Edu: one config per sample, `sample/100BT/*.parquet`
    card(
        data / "HuggingFaceFW/fineweb-edu/README.md",
        {"sample-100BT": {"train": "sample/100BT/*"}, "sample-10BT": {"train": "sample/10BT/*"}},
    )
    texts = {"text": [f"Document {i} on plants, light and water. " * 8 for i in range(N)], "id": [f"<urn:uuid:{i}>" for i in range(N)]}
    parquet(data / "HuggingFaceFW/fineweb-edu/sample/100BT/000_00000.parquet", texts)
    parquet(data / "HuggingFaceFW/fineweb-edu/sample/10BT/000_00000.parquet", texts)  # not read: not staged
    # GLUE: one directory per config
    glue = {
        "sst2": ({"sentence": string}, ["negative", "positive"], ("train", "validation")),
        "mnli": ({"premise": string, "hypothesis": string}, ["entailment", "neutral", "contradiction"], ("train", "validation_matched")),
        "qqp": ({"question1": string, "question2": string}, ["not_duplicate", "duplicate"], ("train", "validation")),
    }
    card(data / "nyu-mll/glue/README.md", {name: {split: f"{name}/{split}-*" for split in splits} for name, (_, _, splits) in glue.items()})
    for name, (columns, labels, splits) in glue.items():
        features = {**columns, "label": datasets.ClassLabel(names=labels), "idx": datasets.Value("int32")}
        for split in splits:
            table = {column: [f"{name} {split} {column} {i}." for i in range(N)] for column in columns}
            parquet(
                data / f"nyu-mll/glue/{name}/{split}-00000-of-00001.parquet",
                {**table, "label": [i % 2 for i in range(N)], "idx": list(range(N))},
                features,
            )
    # token classification: the hgissbkh copies and OntoNotes' Parquet conversion
    for repo, tokens, tags, layout in (
        ("hgissbkh/conll2003-en", "words", "ner", "data/{split}-00000-of-00001.parquet"),
        ("hgissbkh/uner_en", "tokens", "ner_tags", "data/{split}-00000-of-00001.parquet"),
        ("hgissbkh/ontonotes5@~parquet", "tokens", "tags", "default/{split}/0000.parquet"),
    ):
        features = {tokens: sequence(string), tags: sequence(datasets.ClassLabel(names=NER_TAGS))}
        for split in ("train", "validation", "test"):
            table = {tokens: [["Bush", "met", "NATO", f"{split}{i}"] for i in range(N)], tags: [[1, 0, 3, 0]] * N}
            parquet(data / repo / layout.format(split=split), table, features)
    # QA: SQuAD's layout
    answers = sequence({"text": string, "answer_start": datasets.Value("int32")})
    qa = {"id": string, "title": string, "context": string, "question": string, "answers": answers}
    for repo in ("rajpurkar/squad", "rajpurkar/squad_v2", "hgissbkh/record"):
        for split in ("train", "validation"):
            contexts = [f"The Normans were in Normandy, a region in France ({split} {i})." for i in range(N)]
            table = {"id": [f"{split}{i}" for i in range(N)], "title": ["Normans"] * N, "context": contexts,
                     "question": [f"Where is Normandy? {i}" for i in range(N)],
                     "answers": [{"text": ["France"], "answer_start": [42]}] * N}  # fmt: skip
            parquet(data / repo / f"data/{split}-00000-of-00001.parquet", table, qa)
    # IR: MS MARCO's training pairs, BEIR's corpora, queries and qrels, MLDR's configs
    pairs = {"query": [f"what is thing {i}" for i in range(N)], "positive": [f"Thing {i} is a thing." for i in range(N)]}
    parquet(data / "hgissbkh/msmarco-pairs/data/train-00000-of-00001.parquet", pairs)
    for beir, title in (("BeIR/msmarco", ""), ("BeIR/nq", "A title")):
        jsonl_gz(
            data / beir / "corpus.jsonl.gz", [{"_id": f"d{i}", "title": title, "text": f"Passage {i} about things."} for i in range(N)]
        )
        jsonl_gz(data / beir / "queries.jsonl.gz", [{"_id": f"q{i}", "text": f"question {i}"} for i in range(N)])
    tsv(data / "BeIR/msmarco-qrels/dev.tsv", [(f"q{i}", f"d{i}", 1) for i in range(8)])
    tsv(data / "BeIR/msmarco-qrels/test.tsv", [(f"q{i}", f"d{i}", 2) for i in range(8, 16)] + [("q8", "d20", 0)])
    tsv(data / "BeIR/nq-qrels/test.tsv", [(f"q{i}", f"d{i}", 1) for i in range(N)])
    card(
        data / "hgissbkh/mldr-en/README.md",
        {"default": {"dev": "default/dev-*", "test": "default/test-*"}, "corpus": {"corpus": "corpus/corpus-*"}},
    )
    passage = datasets.Features({"docid": string, "text": string})
    mldr = {"query_id": string, "query": string, "positive_passages": [passage], "negative_passages": [passage]}
    for split, numbers in (("dev", range(0, 6)), ("test", range(6, 12))):
        table = {"query_id": [f"m{n}" for n in numbers], "query": [f"long question {n}" for n in numbers],
                 "positive_passages": [[{"docid": f"doc{n}", "text": f"Long document {n}."}] for n in numbers],
                 "negative_passages": [[] for _ in numbers]}  # fmt: skip
        parquet(data / f"hgissbkh/mldr-en/default/{split}-00000-of-00001.parquet", table, mldr)
    parquet(
        data / "hgissbkh/mldr-en/corpus/corpus-00000-of-00001.parquet",
        {"docid": [f"doc{n}" for n in range(12)], "text": [f"Long document {n}." for n in range(12)]},
    )
    return root


def write_placeholder_models(root: Path, repos: list[str]) -> None:
    """Model repositories holding a config.json only: what staging copies, not what loads."""
    for repo in repos:
        (root / "models" / repo).mkdir(parents=True, exist_ok=True)
        (root / "models" / repo / "config.json").write_text("{}")
        (root / "models" / repo / "tokenizer.json").write_text("{}")


LLAMA3_TEXT_TOKENS = 128_000
LLAMA3_VOCABULARY = 128_256


def write_llama3_standin(out: Path) -> Path:
    """A tokenizer laid out as Llama-3's at its full size (what the paper's tokenizer handling
    meets): a byte-level BPE of 128,000 text ids, then <|begin_of_text|> (128000),
    <|end_of_text|> (128001) and <|reserved_special_token_K|> up to id 128255. Its merges are
    made up (byte pairs, then a byte before each pair), so its tokens are not Llama-3's; its
    ids, size and special layout are."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {character: i for i, character in enumerate(alphabet)}
    merges = []
    pairs = [(a, b) for a in alphabet for b in alphabet]
    for left, right in [*pairs, *((a, b + c) for b, c in pairs for a in alphabet)]:
        if len(vocab) == LLAMA3_TEXT_TOKENS:
            break
        vocab[left + right] = len(vocab)
        merges.append((left, right))
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    reserved = [f"<|reserved_special_token_{i}|>" for i in range(LLAMA3_VOCABULARY - LLAMA3_TEXT_TOKENS - 2)]
    backend.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", *reserved])
    begin = backend.token_to_id("<|begin_of_text|>")
    backend.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", begin)])
    PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|begin_of_text|>", eos_token="<|end_of_text|>").save_pretrained(out)
    return out
