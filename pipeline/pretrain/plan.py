"""Every pretraining run of a configuration, and where each one starts.

A run is ``{name}-{size}``. Three studies produce four kinds of run, all expressed in config:

- from scratch (``pretraining.objectives`` at ``pretraining.sizes``, plus ``zoo``):
  the shared initial weights of the size, steps ``0 .. budget_steps`` (the zoo's to its own
  ``zoo.budget_steps`` where that is shorter); the CLM-vs-MLM runs
  once per pretraining seed (``pretraining.replicates``: ``clm``, ``clm_r1``, ...), each
  replicate from its own seed's initial weights, so that objectives still share weights
  and blocks within a replicate;
- two-stage (``two_stage``): at each step budget ``B`` (``two_stage.budgets``, by default
  budget_steps), the second objective takes over the first objective's from-scratch run at
  step ``k`` = fraction x B, from its checkpoint taken in the stable phase of WSD
  (*before* any decay, as the study does), and trains steps ``k .. B`` on the same blocks
  and the WSD schedule of budget B, so every split of a budget spends the same steps on
  the same tokens in the same order;
- short budget: for a budget B below budget_steps (of the two-stage splits or of the zoo),
  the single-objective ends of its splits, and the zoo's references, are each objective's
  from-scratch run branched at step B - num_decay_steps and decayed
  to B. WSD's LR does not depend on the budget before its decay, so the branch is, up to
  float rounding, the run a B-step budget would have trained, at the cost of the decay only;
- continued pretraining (``continued_pretraining``): an objective trained on a *decayed*
  (final) model for each of its budgets and its schedule, reading the blocks that follow the
  base's (``data_offset_steps``), identically for every base; an outside model
  (``outside_bases``) is continued the same way, on the corpus packed with its tokenizer.

The plan is pure data: the Snakemake rules turn it into jobs and inputs (so a rerun of
a base run reruns what starts from it), and the trainer follows it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from pipeline.config import Config, ContinuedPretrainingSpec, PretrainingSpec, ScheduleSpec, TwoStageSpec
from pipeline.config.replicates import arm_of, replicate_name

Study = Literal["objectives", "short_budget", "two_stage", "continued"]
InitKind = Literal["initial", "checkpoint", "final", "outside"]


@dataclass(frozen=True)
class Start:
    """Where a run's weights (and optimizer state) come from."""

    kind: InitKind  # initial: the size's shared initial weights; checkpoint / final: another run's; outside: an imported model
    run: str | None = None  # the run (or outside model) whose weights start this one
    step: int | None = None  # checkpoint step (kind == "checkpoint")
    carry_optimizer: bool = False  # resume that run's AdamW moments too


@dataclass(frozen=True)
class RunPlan:
    run: str  # "{name}-{size}": directory name under results/pretrain
    name: str
    size: str
    objective: str  # config name of the objective this run trains with
    study: Study
    description: str  # one line for the report
    start: Start
    first_step: int  # the run trains steps first_step .. last_step - 1
    last_step: int
    schedule: ScheduleSpec
    schedule_steps: int  # the LR schedule spans steps 0 .. schedule_steps
    data_offset_steps: int = 0  # step s reads the blocks of step s + data_offset_steps
    stage_checkpoint_steps: tuple[int, ...] = ()  # checkpoints (with optimizer state) other runs start from
    replicate: int = 0  # pretraining seed index: initial weights, block order and objective noise of seed + replicate

    def seed(self, config_seed: int) -> int:
        """The seed of this run's initial weights, block order and objective randomness."""
        return config_seed + self.replicate

    def curve_steps(self, checkpoint_steps: tuple[int, ...]) -> tuple[int, ...]:
        """The learning-curve checkpoints (pretraining.checkpoint_steps) this run saves.

        Steps count from the start of the whole budget, so a second stage saves only those
        after its split; continued pretraining has its own budget and saves none.
        """
        if self.study == "continued":
            return ()
        return tuple(s for s in checkpoint_steps if self.first_step < s < self.last_step)


def run_name(name: str, size: str) -> str:
    return f"{name}-{size}"


def planned_run(
    name: str,
    size: str,
    objective: str,
    study: Study,
    description: str,
    start: Start,
    steps: tuple[int, int],
    schedule: ScheduleSpec,
    schedule_steps: int | None = None,
    **options: Any,
) -> RunPlan:
    """``name`` at ``size`` training steps ``first .. last - 1`` of ``steps`` under a schedule
    spanning ``schedule_steps`` (by default its whole budget, 0 .. last: every run but one
    stopped early, pretraining.stop_at_step); ``options``: the other fields of :class:`RunPlan`."""
    first_step, last_step = steps
    return RunPlan(
        run=run_name(name, size),
        name=name,
        size=size,
        objective=objective,
        study=study,
        description=description,
        start=start,
        first_step=first_step,
        last_step=last_step,
        schedule=schedule,
        schedule_steps=last_step if schedule_steps is None else schedule_steps,
        **options,
    )


def two_stage_name(first: str, fraction: float, second: str) -> str:
    return f"{first}{round(100 * fraction)}_{second}"


def split_name(first: str, first_steps: int, second: str) -> str:
    """A split named by its first stage's steps, as the study names its models: ``clm10k_mlm``."""
    thousands, rest = divmod(first_steps, 1000)
    return f"{first}{thousands}k_{second}" if rest == 0 else f"{first}{first_steps}steps_{second}"


def budget_name(name: str, budget: int, budget_steps: int) -> str:
    """``name`` at a step budget: ``clm25_mlm_12000steps``; unchanged at the full budget_steps."""
    return name if budget == budget_steps else f"{name}_{budget}steps"


def continued_name(objective: str, base: str) -> str:
    return f"{objective}_cpt_on_{base}"


def plan_runs(config: Config) -> dict[str, RunPlan]:
    """Every run of ``config`` by run name, bases before the runs that start from them."""
    pretraining = config.pretraining
    # (objective, size, replicate, step budget) of every from-scratch run
    scratch = [
        (o, s, i, pretraining.budget_steps)
        for i in range(pretraining.replicates)
        for s in pretraining.sizes
        for o in pretraining.objectives
    ]
    branches: dict[str, RunPlan] = {}  # decay branches by run name: the zoo and two-stage may share one
    later: list[RunPlan] = []

    if config.zoo is not None:
        zoo_steps = config.zoo.budget_steps or pretraining.budget_steps
        planned = {(o, s) for o, s, _, _ in scratch}
        scratch += [(o, s, 0, zoo_steps) for s in config.zoo.sizes for o in config.zoo.objectives if (o, s) not in planned]
        if zoo_steps < pretraining.budget_steps:
            for size in config.zoo.sizes:
                for objective in pretraining.objectives if size in pretraining.sizes else ():
                    branch = decay_branch(objective, size, zoo_steps, pretraining)
                    branches[branch.run] = branch

    if config.two_stage is not None:
        stage = config.two_stage
        # (size, budget, first-stage steps, second objective, name) of every split
        splits = [
            (size, budget, round(fraction * budget), stage.second, two_stage_name(stage.first, fraction, stage.second))
            for size in stage.sizes
            for budget in stage.budgets or (pretraining.budget_steps,)
            for fraction in stage.first_stage_fractions
        ]
        splits += [
            (size, group.budget, steps, second, split_name(stage.first, steps, second))
            for group in stage.splits
            for size in group.sizes
            for second in group.seconds or (stage.second,)
            for steps in group.first_stage_steps
        ]
        ends = {(size, budget) for size in stage.sizes for budget in stage.budgets or ()} | {(s, b) for s, b, *_ in splits}
        for size, budget in sorted(ends):
            if budget < pretraining.budget_steps:
                for objective in (stage.first, stage.second):
                    branch = decay_branch(objective, size, budget, pretraining)
                    branches[branch.run] = branch
        later += [second_stage(stage, size, steps, budget, second, name, pretraining) for size, budget, steps, second, name in splits]

    if config.continued_pretraining is not None:
        cpt = config.continued_pretraining
        bases = [(base, size, Start("final", run_name(base, size))) for size in cpt.sizes for base in cpt.bases]
        bases += [(base, config.outside_model(base).size, Start("outside", base)) for base in cpt.outside_bases]
        later += [continued_run(cpt, base, size, start, budget, pretraining) for base, size, start in bases for budget in cpt.all_budgets]

    later = [*branches.values(), *later]
    if pretraining.stop_at_step is not None and later:
        raise ValueError(
            f"pretraining.stop_at_step {pretraining.stop_at_step}: runs {sorted(p.run for p in later)} start from steps or final models of"
            " the from-scratch runs, which stop there; leave two_stage, continued_pretraining and a shorter zoo budget out"
        )
    split_steps: dict[str, set[int]] = {}  # run -> the steps other runs start from (checkpoints with optimizer state)
    for plan in later:
        if plan.start.kind == "checkpoint":
            split_steps.setdefault(plan.start.run, set()).add(plan.start.step)
    plans = {}
    for objective, size, replicate, budget_steps in scratch:
        name = replicate_name(objective, replicate)
        run = run_name(name, size)
        seed = f", pretraining seed +{replicate}" if replicate else ""
        last_step = min(budget_steps, pretraining.last_step)
        steps = (
            f"{budget_steps} steps"
            if last_step == budget_steps
            else f"the first {last_step} steps of a {budget_steps}-step schedule, undecayed"
        )
        plans[run] = planned_run(
            name,
            size,
            objective,
            "objectives",
            f"{objective} from scratch for {steps}{seed}",
            Start("initial"),
            (0, last_step),
            pretraining.schedule,
            schedule_steps=budget_steps,
            stage_checkpoint_steps=tuple(sorted(split_steps.get(run, ()))),
            replicate=replicate,
        )
    missing = sorted({p.start.run for p in later if p.start.kind != "outside"} - set(plans))
    if missing:
        raise ValueError(f"runs {missing} are the bases of two-stage or continued runs but are not trained from scratch")
    for plan in later:
        if plan.run in plans:
            raise ValueError(f"run {plan.run!r} is planned twice")
        plans[plan.run] = plan
    return plans


def continued_run(cpt: ContinuedPretrainingSpec, base: str, size: str, start: Start, budget: int, pretraining: PretrainingSpec) -> RunPlan:
    """``cpt.objective`` on ``base``'s final weights for ``budget`` steps; every base and budget
    reads the same blocks (those after a full from-scratch run's)."""
    name = budget_name(continued_name(cpt.objective, base), budget, cpt.budget_steps)
    what = f"the outside model {base}" if start.kind == "outside" else f"the decayed {base} model"
    description = f"{cpt.objective} for {budget} steps on {what}"
    schedule = schedule_within(cpt.schedule, budget)
    return planned_run(
        name, size, cpt.objective, "continued", description, start, (0, budget), schedule, data_offset_steps=pretraining.budget_steps
    )


def schedule_within(schedule: ScheduleSpec, budget: int) -> ScheduleSpec:
    """``schedule`` for a ``budget`` of steps: its warmup and decay shrunk in proportion where
    together they exceed the budget (a 2k-step budget under 2k + 2k: 1k + 1k), else as it is."""
    ramps = schedule.num_warmup_steps + schedule.num_decay_steps
    if ramps <= budget:
        return schedule
    warmup = schedule.num_warmup_steps * budget // ramps
    return dataclasses.replace(schedule, num_warmup_steps=warmup, num_decay_steps=budget - warmup)


def second_stage(stage: TwoStageSpec, size: str, step: int, budget: int, second: str, name: str, pretraining: PretrainingSpec) -> RunPlan:
    """The ``second`` objective of a split named ``name``: from the first objective's undecayed
    checkpoint at ``step``, trained to ``budget`` under its WSD schedule."""
    start = Start("checkpoint", run_name(stage.first, size), step, carry_optimizer=stage.optimizer_state == "carry")
    description = f"{stage.first} for {step} steps, then {second} to step {budget}"
    name = budget_name(name, budget, pretraining.budget_steps)
    return planned_run(name, size, second, "two_stage", description, start, (step, budget), pretraining.schedule)


def decay_branch(objective: str, size: str, budget: int, pretraining: PretrainingSpec) -> RunPlan:
    """``objective`` at a ``budget`` shorter than its from-scratch run: that run's checkpoint
    where the decay of ``budget`` starts (stable phase, AdamW moments carried, as if the run
    had gone on) trained to ``budget`` under the WSD schedule of ``budget``."""
    decay_start = budget - pretraining.schedule.num_decay_steps
    name = budget_name(objective, budget, pretraining.budget_steps)
    description = f"{objective} for {budget} steps: its {pretraining.budget_steps}-step run from step {decay_start}, decayed to {budget}"
    start = Start("checkpoint", run_name(objective, size), decay_start, carry_optimizer=True)
    return planned_run(name, size, objective, "short_budget", description, start, (decay_start, budget), pretraining.schedule)


def curve_checkpoints(config: Config, plans: dict[str, RunPlan]) -> list[tuple[RunPlan, int]]:
    """(run, step) of every checkpoint ``learning_curves`` fine-tunes: each named run (every
    pretraining replicate of it) at each of its sizes where the run is planned (a two-stage
    run may exist at fewer sizes than CLM and MLM), at every pretraining.checkpoint_steps
    step it saves. A name planned at none of the sizes, or a run that saves no checkpoint,
    is a config error, not a silent gap."""
    curves = config.learning_curves
    if curves is None:
        return []
    chosen = [p for size in curves.sizes for name in curves.runs for p in plans.values() if p.size == size and arm_of(p.name)[0] == name]
    for name in curves.runs:
        if not any(plan.name == name for plan in chosen):
            sizes = ", ".join(curves.sizes)
            raise ValueError(f"learning_curves: run {name!r} is planned at none of the sizes {sizes} (planned: {', '.join(plans)})")
    checkpoints = []
    for plan in chosen:
        steps = plan.curve_steps(config.pretraining.checkpoint_steps)
        if not steps:
            raise ValueError(f"learning_curves: run {plan.run!r} saves no pretraining.checkpoint_steps checkpoint")
        checkpoints += [(plan, step) for step in steps]
    return checkpoints
