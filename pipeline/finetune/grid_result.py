"""One fine-tuning grid point's result: what scores.json lists under ``grid``, and what a
killed job's resume state keeps of each point it finished (:mod:`.resume`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GridResult:
    learning_rate: float
    seed: int
    validation: float  # the metric's headline value, in points
    test: float
    trained_steps: int  # the optimizer steps this point trained (ExampleBudget.trained_steps)
    seconds: float  # the point's wall-clock seconds: the sum of ``phases``
    validation_scores: dict[str, float]  # the metric's whole result (NIAH: and per-cell accuracies)
    test_scores: dict[str, float]
    # The headline of each test example in split order, for paired comparisons with another
    # model's on the same examples (the study's released results); None: not a mean over examples.
    test_examples: list[float] | None
    # Where ``seconds`` went, each phase timed with the device synchronised: "set_up" (the pretrained
    # weights restored, the head drawn, the optimizer built), "training" (the steps) and "scoring" (the
    # validation and test predictions and their metrics); a task scored on another's models has its
    # scoring alone. The cost estimate times each phase apart (bench/finetune_throughput.py). Empty in
    # the resume states of jobs that ran before phases were timed.
    phases: dict[str, float] = field(default_factory=dict)


Point = tuple[GridResult, dict[str, GridResult]]  # a grid point's result, and those of the tasks scored on its model
