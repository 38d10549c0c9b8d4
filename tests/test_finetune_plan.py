"""Which models each task fine-tunes (pipeline.finetune.plan)."""

from __future__ import annotations

import yaml

from pipeline.config import RANDOM_INIT
from pipeline.finetune.plan import can_generate, finetunes
from pipeline.workflow.configure import load_config
from tests.conftest import REPO


def config(by_task: dict | None = None):
    data = yaml.safe_load((REPO / "config" / "default.yaml").read_text())
    data["finetuning"]["by_task"] = by_task or {}
    return load_config(data)


def test_generative_tasks_take_only_models_that_predict_the_next_token():
    default = config()
    assert [name for name in ("clm", "meap", "prefix_lm", "ul2", RANDOM_INIT) if can_generate(default, name)] == [
        "clm",
        "meap",
        "prefix_lm",
        "ul2",
        RANDOM_INIT,
    ]
    assert not any(can_generate(default, name) for name in ("mlm", "mlm_nsp", "electra", "mlm_20"))
    assert finetunes(default, "needle", "meap", "tiny", "meap") and not finetunes(default, "needle", "mlm", "tiny", "mlm")
    assert not finetunes(default, "needle", "clm50_mlm", "tiny", "mlm")  # a two-stage run ends as MLM
    assert finetunes(default, "topic", "mlm", "small", "mlm")


def test_a_tasks_runs_are_named_with_or_without_the_size():
    limited = config({"news_cloze": {"runs": ["clm", "mlm-tiny"]}})
    assert finetunes(limited, "news_cloze", "clm", "small", "clm") and finetunes(limited, "news_cloze", "mlm", "tiny", "mlm")
    assert not finetunes(limited, "news_cloze", "mlm", "small", "mlm") and not finetunes(
        limited, "news_cloze", RANDOM_INIT, "tiny", RANDOM_INIT
    )
    assert finetunes(limited, "topic", "mlm", "small", "mlm")  # other tasks are untouched


def test_a_task_kept_off_the_learning_curves_keeps_its_final_models_and_is_not_costed_there():
    from pipeline.workflow.configure import resolve
    from pipeline.workflow.cost_printout import plan_costs
    from pipeline.workflow.targets import finetuned, finetuned_checkpoints

    data = yaml.safe_load((REPO / "config" / "default.yaml").read_text())
    data["finetuning"]["by_task"] = {"title_search": {"learning_curves": False}}
    resolved = resolve(data)
    checkpoint_tasks = {task for task, *_ in finetuned_checkpoints(resolved)}
    assert "title_search" not in checkpoint_tasks and "sentiment" in checkpoint_tasks
    assert ("title_search", "clm", "tiny") in {(task, name, size) for task, name, size in finetuned(resolved)}
    costed = {cost.stage: cost.jobs for cost in plan_costs(resolved.config, resolved)}
    assert costed["finetune_checkpoint"] == len(finetuned_checkpoints(resolved))
