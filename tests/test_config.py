"""Strict config parsing: every bad key or value is one line naming it."""

from __future__ import annotations

import copy

import pytest
import yaml

from pipeline.__main__ import main
from pipeline.errors import PipelineError
from pipeline.workflow.configure import load_config, read_config
from tests.conftest import REPO


def default_data() -> dict:
    return yaml.safe_load((REPO / "config" / "default.yaml").read_text())


def with_reimported_clm(data: dict) -> dict:
    """``data`` with clm-tiny imported back as an outside model and continued with MLM (config/smoke.yaml's setup)."""
    data["outside_models"] = [{"name": "clm_reimported", "path": "results/pretrain/clm-tiny/model", "objective": "clm", "size": "tiny"}]
    data["continued_pretraining"]["outside_bases"] = ["clm_reimported"]
    return data


def own_tasks(task_dir, tasks: list[str]) -> dict:
    """The default with a task directory of its own, running ``tasks`` and leaving none out."""
    data = default_data()
    return {
        **data,
        "task_dir": str(task_dir),
        "finetuning": {**data["finetuning"], "tasks": tasks},
        "report": {**data["report"], "tasks_left_out": []},
    }


def merged(base: dict, override: dict) -> dict:
    """Snakemake's --configfile merge: mappings key by key, everything else replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def test_shipped_configs_parse():
    config = read_config(REPO / "config" / "default.yaml")
    assert config.pretraining.objectives == ("clm", "mlm") and "small" in config.sizes  # one size runs; the second is one line away
    paper = load_config(merged(default_data(), yaml.safe_load((REPO / "config" / "paper.yaml").read_text())))
    assert len(paper.pretraining.sizes) == 3
    smoke = load_config(merged(default_data(), yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())))
    assert smoke.pretraining.sizes == ("micro",)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["pretraining"].update(num_stepz=3), "cfg.pretraining.num_stepz: unknown key"),
        (
            lambda c: c["report"].update(tasks_left_out=[{"task": "squad", "why": "absent"}]),
            "report.tasks_left_out: 'squad' is not defined",
        ),
        (lambda c: c["report"].update(tasks_left_out=[{"task": "topic", "why": "why"}]), "'topic' is in finetuning.tasks too"),
        (lambda c: c["pretraining"].update(budget_steps="abc"), "cfg.pretraining.budget_steps: expected an integer, got 'abc'"),
        (lambda c: c["pretraining"].update(batch_size=True), "cfg.pretraining.batch_size: expected an integer, got True"),
        (lambda c: c["pretraining"].update(sizes=["huge"]), "pretraining.sizes: 'huge' is not defined"),
        (lambda c: c["pretraining"]["schedule"].update(kind="linear"), "cfg.pretraining.schedule.kind: 'linear' is not one of"),
        (lambda c: c["objectives"].update(random={"kind": "clm"}), "'random' is reserved"),
        (lambda c: c["objectives"].update(x={"kind": "nope"}), "cfg.objectives.x.kind: unknown objective 'nope' (registered: clm, electra"),
        (lambda c: c["objectives"]["mlm"].update(mask_ratio=1.5), "cfg.objectives.mlm: mask_ratio 1.5 must be in (0, 1)"),
        (lambda c: c["sources"]["gensim"].update(sha256="abc"), "cfg.sources.gensim: sha256 'abc' is not 64 lowercase hex digits"),
        (lambda c: c.pop("seed"), "cfg.seed: missing required key"),
        (lambda c: c["zoo"].update(objectives=["t5"]), "zoo.objectives: 't5' is not defined"),
        (lambda c: c["two_stage"].update(first_stage_fractions=[0.9]), "the split would fall after the decay starts (step 384 of 480)"),
        (lambda c: c["two_stage"].update(first_stage_fractions=[1.0]), "cfg.two_stage.first_stage_fractions[0]: 1.0 must be in (0, 1)"),
        (
            lambda c: c["two_stage"].update(first="meap", sizes=["small"]),
            "cfg: runs ['meap-small', 'mlm-small'] are the bases of two-stage or continued runs",
        ),
        (
            lambda c: (c["pretraining"]["schedule"].update(kind="cosine"), c["zoo"].update(budget_steps=None)),
            "two_stage needs pretraining.schedule.kind 'wsd'",
        ),
        (
            lambda c: c["pretraining"]["schedule"].update(kind="cosine"),
            "cfg: zoo.budget_steps: a budget below pretraining.budget_steps needs pretraining.schedule.kind 'wsd'",
        ),
        (
            lambda c: c["tokenizer"].update(training_sample={"documents": 0}),
            "cfg.tokenizer.training_sample.documents: 0 must be at least 1",
        ),
        # every number has its range, refused where it is set (issue: these four planned a whole DAG)
        (lambda c: c["pretraining"].update(batch_size=-8), "cfg.pretraining.batch_size: -8 must be at least 1"),
        (lambda c: c["pretraining"]["schedule"].update(peak_lr=-1.0), "cfg.pretraining.schedule.peak_lr: -1.0 must be in (0, 1]"),
        (lambda c: c["finetuning"].update(learning_rates=[-1e-3]), "cfg.finetuning.learning_rates[0]: -0.001 must be in (0, 1]"),
        (lambda c: c["finetuning"].update(max_steps=0), "cfg.finetuning.max_steps: 0 must be at least 1"),
        (lambda c: c["pretraining"].update(budget_steps=-5), "cfg.pretraining.budget_steps: -5 must be in [1, 10000000]"),
        (lambda c: c["finetuning"].update(warmup_fraction=1.0), "cfg.finetuning.warmup_fraction: 1.0 must be in [0, 1)"),
        (lambda c: c["pretraining"]["optimizer"].update(betas=[0.9, 1.5]), "cfg.pretraining.optimizer.betas[1]: 1.5 must be in [0, 1)"),
        (lambda c: c["corpus"].update(heldout_fraction=0), "cfg.corpus.heldout_fraction: 0.0 must be in (0, 1)"),
        (lambda c: c.update(seed=-1), "cfg.seed: -1 must be at least 0"),
        (lambda c: c["sizes"]["tiny"].update(num_heads=0), "cfg.sizes.tiny.num_heads: 0 must be in [1, 1024]"),
        (
            lambda c: c["zoo"].update(budget_steps=2000),
            "cfg: zoo.budget_steps: 2000 must lie between warmup + decay (144) and pretraining.budget_steps (1440)",
        ),
        (
            lambda c: c["two_stage"].update(budgets=[480, 2000]),
            "cfg: two_stage.budgets: 2000 must lie between warmup + decay (144) and pretraining.budget_steps (1440)",
        ),
        (lambda c: c["two_stage"].update(budgets=[100]), "cfg: two_stage.budgets: 100 must lie between warmup + decay (144)"),
        (
            lambda c: c["finetuning"]["by_task"].update(topic={"learning_curves": False}),
            "cfg: finetuning.by_task.topic.learning_curves: false leaves 'sentiment', of the same family (SC), on the curves",
        ),
        (
            lambda c: c["two_stage"].update(budgets=[360]),
            "two_stage.first_stage_fractions [0.75]: the split would fall after the decay starts (step 264 of 360)",
        ),
        (lambda c: c["two_stage"].update(budgets=[400, 400]), "cfg.two_stage.budgets[1]: 400 is listed twice"),
        (
            lambda c: c["two_stage"].update(splits=[{"sizes": ["tiny"], "budget": 480, "first_stage_steps": [400]}]),
            "cfg: two_stage.splits[0].first_stage_steps [400]: the split would fall after the decay starts (step 384)",
        ),
        (
            lambda c: c["two_stage"].update(splits=[{"sizes": ["tiny"], "budget": 480, "first_stage_steps": [120], "seconds": ["t5"]}]),
            "two_stage.splits[0].seconds: 't5' is not defined",
        ),
        (lambda c: c["continued_pretraining"].update(budgets=[0]), "cfg.continued_pretraining.budgets[0]: 0 must be in [1, 10000000]"),
        # the study's cut samples: CLM and MLM examples only, two samples of at least 12 tokens
        (
            lambda c: c["pretraining"].update(samples="split"),
            "cfg.pretraining.samples: 'split' cuts CLM and MLM examples only; run 'mlm_nsp-tiny' trains 'mlm_nsp' (kind 'nsp')",
        ),
        (
            lambda c: c["pretraining"].update(samples="split", sequence_length=16),
            "samples 'split' needs sequence_length >= 24 (two samples of at least 12)",
        ),
        (lambda c: c["continued_pretraining"].update(sizes=["small"], bases=["clm", "ul2"]), "cfg: runs ['clm-small', 'ul2-small']"),
        (lambda c: c["continued_pretraining"].update(optimizer="sgd"), "cfg.continued_pretraining.optimizer: unknown key"),
        (
            lambda c: with_reimported_clm(c)["continued_pretraining"].update(outside_bases=["gpt2"]),
            "cfg: continued_pretraining.outside_bases: 'gpt2' is not defined (defined: clm_reimported)",
        ),
        (
            lambda c: with_reimported_clm(c)["outside_models"][0].pop("size"),
            "cfg: continued_pretraining.outside_bases: outside model 'clm_reimported' has no size; name the config size",
        ),
        (
            lambda c: c["learning_curves"].update(runs=["clm", "ul2"], sizes=["small"]),
            "cfg.learning_curves: run 'clm' is planned at none of the sizes small",
        ),
        (
            lambda c: c.setdefault("hardware", {}).update(finetune_gpus=2),
            "cfg.hardware: finetune_gpus must be 0 or 1 (a fine-tuning job is one process), got 2",
        ),
        (
            lambda c: c["learning_curves"].update(runs=["clm75_mlm_480steps"]),
            "cfg.learning_curves: run 'clm75_mlm_480steps-tiny' saves no pretraining.checkpoint_steps checkpoint",
        ),
        # every number finite and in range, every list as it must be: refused at plan time, not in a job
        (
            lambda c: c["pretraining"]["schedule"].update(peak_lr=float("inf")),
            "cfg.pretraining.schedule.peak_lr: inf is not a finite number",
        ),
        (
            lambda c: c["pretraining"]["schedule"].update(peak_lr=float("nan")),
            "cfg.pretraining.schedule.peak_lr: nan is not a finite number",
        ),
        (lambda c: c["pretraining"]["schedule"].update(peak_lr=1e308), "cfg.pretraining.schedule.peak_lr: 1e+308 must be in (0, 1]"),
        (
            lambda c: c["pretraining"]["schedule"].update(peak_lr="1e400"),
            "cfg.pretraining.schedule.peak_lr: '1e400' is not a finite number",
        ),
        (lambda c: c["finetuning"].update(learning_rates=[float("inf")]), "cfg.finetuning.learning_rates[0]: inf is not a finite number"),
        (lambda c: c["pretraining"]["optimizer"].update(eps=10**400), "is not a finite number"),
        (lambda c: c.update(seed=10**20), "cfg.seed: 100000000000000000000 must be at most 2147483647"),
        (lambda c: c["pretraining"].update(budget_steps=2**40), "cfg.pretraining.budget_steps: 1099511627776 must be in [1, 10000000]"),
        # resource and size keys bounded by what a machine the docs name could hold (issue 53)
        (lambda c: c.setdefault("hardware", {}).update(max_job_hours=1e9), "cfg.hardware.max_job_hours: 1000000000.0 must be in (0, 720]"),
        (lambda c: c.setdefault("hardware", {}).update(cpus_per_gpu=100000), "cfg.hardware.cpus_per_gpu: 100000 must be in [1, 512]"),
        (lambda c: c.setdefault("hardware", {}).update(job_attempts=10**9), "cfg.hardware.job_attempts: 1000000000 must be in [1, 100]"),
        (
            lambda c: c.setdefault("hardware", {}).update(node_memory_gb=1e12),
            "cfg.hardware.node_memory_gb: 1000000000000.0 must be in (0, 16384]",
        ),
        (
            lambda c: c.setdefault("hardware", {}).update(warm_worker_idle_seconds=1e10),
            "cfg.hardware.warm_worker_idle_seconds: 10000000000.0 must be in [0, 86400]",
        ),
        (
            lambda c: c["continued_pretraining"].update(budgets=[2_000_000_000]),
            "cfg.continued_pretraining.budgets[0]: 2000000000 must be in [1, 10000000]",
        ),
        (lambda c: c["sizes"]["tiny"].update(num_layers=10**5), "cfg.sizes.tiny.num_layers: 100000 must be in [1, 1024]"),
        (lambda c: c["sizes"]["tiny"].update(hidden_size=10**6), "cfg.sizes.tiny.hidden_size: 1000000 must be in [1, 65536]"),
        (lambda c: c["pretraining"]["optimizer"].update(eps=5.0), "cfg.pretraining.optimizer.eps: 5.0 must be in (0, 1]"),
        (
            lambda c: c.setdefault("tasks", {}).update(
                qa={
                    "family": "QA",
                    "type": "qa_token_tagging",
                    "metric": "qa_token_position_f1",
                    "description": "a hub QA task without its answers",
                    "data": {"reader": "hf", "hub": {"path": "rajpurkar/squad", "fields": {"question": "question", "context": "context"}}},
                }
            ),
            "cfg.tasks.qa.data.hub.fields: no column mapped to our 'answers' (a qa_token_tagging row needs it)",
        ),
        (lambda c: c["finetuning"].update(tasks=[]), "cfg.finetuning.tasks: must list at least one"),
        (lambda c: c["finetuning"].update(learning_rates=[]), "cfg.finetuning.learning_rates: must list at least one"),
        (
            lambda c: c["finetuning"].update(tasks=["sentiment", "topic", "sentiment"]),
            "cfg.finetuning.tasks[2]: 'sentiment' is listed twice",
        ),
        (lambda c: c["finetuning"].update(seeds=[0, 1, 0]), "cfg.finetuning.seeds[2]: 0 is listed twice"),
        (lambda c: c["finetuning"].update(learning_rates=[1e-3, 0.001]), "cfg.finetuning.learning_rates[1]: 0.001 is listed twice"),
        (lambda c: c["pretraining"].update(sizes=["tiny", "tiny"]), "cfg.pretraining.sizes[1]: 'tiny' is listed twice"),
        (lambda c: c["pretraining"].update(objectives=[]), "cfg.pretraining.objectives: must list at least one"),
        (lambda c: c["corpus"].update(documents=[]), "cfg.corpus.documents: must list at least one"),
        (
            lambda c: c["pretraining"].setdefault("compute", {}).update(attention="flex"),
            "pretraining.compute.attention: 'flex' needs a GPU (hardware.gpus_per_run >= 1)",
        ),
        (
            lambda c: c["pretraining"].setdefault("compute", {}).update(by_size={"tiny": {"attention": "varlen"}}),
            "pretraining.compute.by_size.tiny.attention: 'varlen' needs a GPU (hardware.gpus_per_run >= 1): "
            "flash attention's variable-length kernel is CUDA only; use 'sdpa'",
        ),
        (
            lambda c: c["pretraining"].setdefault("compute", {}).update(lm_head="liger"),
            "pretraining.compute.lm_head: 'liger' needs a GPU (hardware.gpus_per_run >= 1): a Triton kernel; use 'chunked'",
        ),
        (
            lambda c: (
                c["pretraining"].setdefault("compute", {}).update(lm_head="liger", sparse_prediction=False),
                c.setdefault("hardware", {}).update(gpus_per_run=1),
            ),
            "pretraining.compute.lm_head: 'liger' is a sparse head; it needs compute.sparse_prediction: true",
        ),
        (
            lambda c: (
                c["pretraining"].setdefault("compute", {}).update(attention="varlen", precision="fp32"),
                c.setdefault("hardware", {}).update(gpus_per_run=1),
            ),
            "pretraining.compute.attention: 'varlen' needs precision 'bf16': flash attention computes in 16-bit floats only",
        ),
        (
            lambda c: (
                c["pretraining"].setdefault("compute", {}).update(attention="varlen", precision="bf16"),
                c.setdefault("hardware", {}).update(gpus_per_run=1),
            ),
            "cfg.pretraining.compute.attention: 'varlen' trains CLM and MLM examples only; run 'mlm_nsp-tiny' trains 'mlm_nsp'"
            " (kind 'nsp') at 'tiny': use 'flex' or 'sdpa' there",
        ),
        (
            lambda c: c["tokenizer"].update(vocab_size=1),
            "cfg.tokenizer.vocab_size: 1 is below the 296 tokens a trained byte-level BPE starts with (256 bytes + 40 special tokens)",
        ),
    ],
)
def test_bad_config_names_the_culprit(edit, message):
    data = default_data()
    edit(data)
    with pytest.raises(PipelineError) as error:
        load_config(data, "cfg")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_check_config_cli_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    data = default_data()
    data["finetuning"]["learning_ratez"] = [1e-4]
    bad.write_text(yaml.safe_dump(data))
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {bad}: finetuning.learning_ratez: unknown key (known keys: " + err.split("(known keys: ")[1]
    assert main(["check-config", str(REPO / "config" / "default.yaml")]) == 0
    assert main(["check-config", str(tmp_path / "missing.yaml")]) == 2
    # An overlay is merged over config/default.yaml, as `snakemake --configfile` merges it.
    assert main(["check-config", str(REPO / "config" / "smoke.yaml")]) == 0
    assert "config/smoke.yaml: ok (" in capsys.readouterr().out
    # ... and an error names the file that set the key at fault, whichever of the files it is
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text("finetuning:\n  seeds: [0, -1]\n")
    assert main(["check-config", str(REPO / "config" / "smoke.yaml"), str(seeds)]) == 2
    assert capsys.readouterr().err == f"error: {seeds}: finetuning.seeds[1]: -1 must be at least 0\n"
    seeds.write_text("tokenizer:\n  min_frequency: 0\n")  # first on the line, and smoke.yaml leaves the key alone
    assert main(["check-config", str(seeds), str(REPO / "config" / "smoke.yaml")]) == 2
    assert capsys.readouterr().err == f"error: {seeds}: tokenizer.min_frequency: 0 must be at least 1\n"


def test_committed_schema_is_current_and_accepts_the_shipped_configs():
    import json

    import jsonschema

    from pipeline.schema import config_schema
    from pipeline.workflow.configure import with_task_files

    schema = json.loads((REPO / "config" / "schema.json").read_text())
    assert schema == config_schema(), "config/schema.json is stale: run python -m pipeline schema --out config/schema.json"
    jsonschema.validate(with_task_files(default_data()), schema)
    jsonschema.validate(with_task_files(merged(default_data(), yaml.safe_load((REPO / "config" / "smoke.yaml").read_text()))), schema)
    for task_file in sorted((REPO / "config" / "tasks").glob("*.yaml")):  # editors validate a task file on its own
        jsonschema.validate(yaml.safe_load(task_file.read_text()), schema["properties"]["tasks"]["additionalProperties"])
    bad = default_data()
    bad["tokenizer"]["vocab"] = 10
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_tasks_come_from_one_file_each_with_the_configs_entries_merged_over_them(tmp_path):
    config = read_config(REPO / "config" / "default.yaml")
    assert set(config.tasks) == {path.stem for path in (REPO / "config" / "tasks").glob("*.yaml")}
    assert config.tasks["news_cloze"].type == "extractive_qa" and config.tasks["news_cloze"].metric == "squad_v2"
    smoke = load_config(merged(default_data(), yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())))
    assert smoke.tasks["topic"].max_length == 48 and smoke.tasks["topic"].description == config.tasks["topic"].description
    (tmp_path / "mine.yaml").write_text((REPO / "config" / "tasks" / "topic.yaml").read_text())
    own = load_config(own_tasks(tmp_path, ["mine"]))
    assert set(own.tasks) == {"mine"}


@pytest.mark.parametrize(
    "task_file, message",
    [
        (
            "metric: f2\n",
            "cfg.tasks.bad.metric: unknown metric 'f2' (registered: accuracy, encodeval_ndcg_at_10, exact_match, ndcg_at_10, "
            "qa_token_position_f1, sentence_macro_f1, span_f1, squad_v2)",
        ),
        ("metric: squad_v2\n", "cfg.tasks.bad.metric: sequence_classification predictions cannot be scored with 'squad_v2' (accuracy can)"),
        ("also_metrics: [accuracy]\n", "cfg.tasks.bad.also_metrics: 'accuracy' is the task's metric already"),
        (
            "type: retrieval\nmetric: encodeval_ndcg_at_10\nalso_metrics: [span_f1]\n",
            "cfg.tasks.bad.also_metrics: retrieval predictions cannot be scored with 'span_f1' (ndcg_at_10, encodeval_ndcg_at_10 can)",
        ),
        (
            "type: token_classification\nneedle: {lengths: [8]}\n",
            "cfg.tasks.bad: a 'needle' entry goes with type 'needle_in_a_haystack', and only with it",
        ),
        ("family: XX\n", "cfg.tasks.bad.family: 'XX' is not one of ['SC', 'TC', 'QA', 'IR', 'NIAH']"),
    ],
)
def test_a_bad_task_file_is_one_line_naming_the_task(tmp_path, task_file, message):
    base = yaml.safe_load((REPO / "config" / "tasks" / "topic.yaml").read_text())
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({**base, **yaml.safe_load(task_file)}))
    data = own_tasks(tmp_path, ["bad"])
    with pytest.raises(PipelineError) as error:
        load_config(data, "cfg")
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_missing_task_dir_or_a_bad_per_task_entry_is_named():
    with pytest.raises(PipelineError, match=r"cfg.task_dir: .*nowhere is not a directory"):
        load_config({**default_data(), "task_dir": "nowhere"}, "cfg")
    data = default_data()  # an overlay cannot delete the default's per-task budgets: another config's tasks are ignored
    data["finetuning"]["by_task"] = {"sentimental": {"max_steps": 3}, "topic": {"max_steps": 4}}
    assert set(load_config(data, "cfg").finetuning.by_task) == {"topic"}
    data["finetuning"]["by_task"] = {"topic": {"max_stepz": 3}}
    with pytest.raises(PipelineError, match=r"cfg.finetuning.by_task.topic.max_stepz: unknown key"):
        load_config(data, "cfg")


def test_bag_of_words_regularization_must_be_positive():
    with pytest.raises(PipelineError, match=r"cfg.bag_of_words.regularization\[1\]: 0.0 must be above 0"):
        load_config({**default_data(), "bag_of_words": {"regularization": [0.1, 0.0]}}, "cfg")
    with pytest.raises(PipelineError, match=r"cfg.bag_of_words.regularization: must list at least one"):
        load_config({**default_data(), "bag_of_words": {"regularization": []}}, "cfg")


def test_a_task_runs_under_the_shared_protocol_with_its_own_entry_applied():
    data = default_data()
    data["finetuning"]["by_task"] = {"needle": {"max_steps": 7, "seeds": [0, 5], "runs": ["clm"]}}
    finetuning = load_config(data).finetuning
    needle, topic = finetuning.for_task("needle"), finetuning.for_task("topic")
    assert (needle.max_steps, needle.seeds, needle.learning_rates) == (7, (0, 5), finetuning.learning_rates)
    assert (topic.max_steps, topic.seeds) == (finetuning.max_steps, finetuning.seeds) and needle.by_task == {}


def test_selection_seeds_set_the_runs_of_a_job():
    data = default_data()
    data["finetuning"].update(learning_rates=[1e-3, 3e-3, 1e-2], seeds=[0, 1, 2], selection_seeds=[0])
    assert load_config(data).finetuning.num_runs == 3 * 1 + 2
    data["finetuning"]["selection_seeds"] = None
    assert load_config(data).finetuning.num_runs == 3 * 3


@pytest.mark.parametrize(
    ("selection", "by_task", "message"),
    [
        ([5], {}, r"cfg.finetuning: selection_seeds \[5\] must be one or more of seeds \[0, 1, 2\]"),
        ([], {}, r"cfg.finetuning.selection_seeds: must list at least one"),
        ([0], {"needle": {"seeds": [7]}}, r"cfg.finetuning: selection_seeds \[0\] must be one or more of by_task.needle.seeds \[7\]"),
    ],
)
def test_selection_seeds_must_be_seeds_of_every_task(selection, by_task, message):
    data = default_data()
    data["finetuning"].update(seeds=[0, 1, 2], selection_seeds=selection, by_task=by_task)
    with pytest.raises(PipelineError, match=message):
        load_config(data, "cfg")


def test_learning_curves_take_each_run_at_the_sizes_where_it_is_planned():
    """The two-stage runs exist at the tiny size only: their checkpoints are fine-tuned there,
    CLM's and MLM's at both sizes."""
    from pipeline.pretrain.plan import curve_checkpoints, plan_runs

    data = default_data()
    data["pretraining"].update(sizes=["tiny", "small"], checkpoint_steps=[240, 960])
    data["learning_curves"] = {"sizes": ["tiny", "small"], "runs": ["clm", "mlm", "clm25_mlm_480steps"]}
    config = load_config(data)
    checkpoints = [(p.run, step) for p, step in curve_checkpoints(config, plan_runs(config))]
    assert checkpoints == [
        ("clm-tiny", 240),
        ("clm-tiny", 960),
        ("mlm-tiny", 240),
        ("mlm-tiny", 960),
        ("clm25_mlm_480steps-tiny", 240),
        ("clm-small", 240),
        ("clm-small", 960),
        ("mlm-small", 240),
        ("mlm-small", 960),
    ]


def test_two_stage_budgets_plan_decay_branches_and_splits_per_budget():
    """A budget below budget_steps gets every split (k = fraction x budget) and both single-
    objective ends: the from-scratch runs branched where the budget's decay starts, each
    carrying its AdamW moments, under that budget's schedule; the bases save those steps."""
    from pipeline.pretrain.plan import plan_runs

    data = default_data()
    data["pretraining"].update(sizes=["tiny", "small"], budget_steps=480, checkpoint_steps=[240])
    data["zoo"]["budget_steps"] = None
    data["two_stage"].update(budgets=[400, 480], first_stage_fractions=[0.25, 0.5])
    plans = plan_runs(load_config(data))
    short = {run: p for run, p in plans.items() if p.size == "tiny" and p.last_step == 400}
    assert {run: p.study for run, p in short.items()} == {
        "clm_400steps-tiny": "short_budget",
        "mlm_400steps-tiny": "short_budget",
        "clm25_mlm_400steps-tiny": "two_stage",
        "clm50_mlm_400steps-tiny": "two_stage",
    }
    for objective in ("clm", "mlm"):
        branch = short[f"{objective}_400steps-tiny"]
        assert (branch.objective, branch.start.run, branch.start.step, branch.start.carry_optimizer) == (
            objective,
            f"{objective}-tiny",
            304,
            True,
        )
        assert (branch.first_step, branch.schedule_steps) == (304, 400)
    split = short["clm50_mlm_400steps-tiny"]
    assert (split.start.run, split.start.step, split.first_step, split.schedule_steps) == ("clm-tiny", 200, 200, 400)
    assert plans["clm50_mlm-tiny"].first_step == 240 and plans["clm50_mlm-tiny"].last_step == 480
    assert plans["clm-tiny"].stage_checkpoint_steps == (100, 120, 200, 240, 304)
    assert plans["mlm-tiny"].stage_checkpoint_steps == (304,)
    assert plans["clm-small"].stage_checkpoint_steps == () and "clm_400steps-small" not in plans


def test_a_shorter_zoo_budget_trains_the_zoo_to_it_and_shares_its_references_with_the_splits():
    """The default: CLM and MLM for 1,440 steps, the zoo and the splits for 480; the zoo's
    CLM and MLM of its budget are the splits' decay branches, planned once."""
    from pipeline.pretrain.plan import plan_runs

    data = default_data()
    data["pretraining"]["sizes"] = ["tiny", "small"]
    plans = plan_runs(load_config(data))
    zoo = [p for p in plans.values() if p.study == "objectives" and p.objective not in ("clm", "mlm")]
    assert zoo and {(p.last_step, p.schedule_steps, p.start.kind) for p in zoo} == {(480, 480, "initial")}
    assert (plans["clm-tiny"].last_step, plans["clm-small"].last_step) == (1440, 1440) and "mlm_480steps-small" not in plans
    assert sorted(run for run, p in plans.items() if p.study == "short_budget") == ["clm_480steps-tiny", "mlm_480steps-tiny"]
    assert plans["clm-tiny"].stage_checkpoint_steps == (120, 240, 360, 384) and plans["mlm-tiny"].stage_checkpoint_steps == (384,)
    data = default_data()
    data["two_stage"] = None
    plans = plan_runs(load_config(data))
    assert plans["mlm_480steps-tiny"].start.step == 384 and "clm25_mlm_480steps-tiny" not in plans


def test_an_outside_base_is_continued_like_an_own_base_from_its_imported_weights():
    """Same objective, budget, schedule and block offset as mlm_cpt_on_clm; the start is the
    imported model, at the size its outside_models entry names."""
    from pipeline.pretrain.plan import Start, plan_runs

    plans = plan_runs(load_config(with_reimported_clm(default_data())))
    own, outside = plans["mlm_cpt_on_clm-tiny"], plans["mlm_cpt_on_clm_reimported-tiny"]
    assert outside.start == Start("outside", "clm_reimported") and own.start == Start("final", "clm-tiny")
    assert (outside.objective, outside.last_step, outside.schedule, outside.data_offset_steps, outside.study) == (
        own.objective,
        own.last_step,
        own.schedule,
        own.data_offset_steps,
        "continued",
    )


def test_a_carried_optimizer_into_a_loss_with_its_own_parameters_is_refused_at_plan_time():
    """two_stage CLM -> ELECTRA carrying AdamW's state: the second stage trains a generator besides
    the backbone, so the state cannot fit; refused when planned, not in the job after its base."""
    data = default_data()
    data["two_stage"] = {**data["two_stage"], "second": "electra", "optimizer_state": "carry", "splits": []}
    with pytest.raises(PipelineError) as error:
        load_config(data, "cfg")
    assert "cfg.two_stage.optimizer_state: carry, but " in str(error.value)
    assert "(replaced_token_detection loss), which trains other parameters besides the backbone; set reset" in str(error.value)
    data["two_stage"]["optimizer_state"] = "reset"
    load_config(data, "cfg")


def test_a_gradient_clip_norm_that_clips_nothing_is_refused():
    data = default_data()
    data["finetuning"]["optimizer"] = {"grad_clip_norm": 1e300}
    with pytest.raises(PipelineError, match=r"finetuning\.optimizer\.grad_clip_norm: 1e\+300 must be"):
        load_config(data, "cfg")
