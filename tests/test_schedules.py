"""Learning-rate schedules, checked at their corners."""

import pytest

from pipeline.config import ScheduleSpec
from pipeline.schedules import learning_rate, linear_with_warmup


def test_wsd_warmup_stable_decay():
    spec = ScheduleSpec(kind="wsd", peak_lr=1.0, num_warmup_steps=4, num_decay_steps=5)
    lrs = [learning_rate(step, 20, spec) for step in range(20)]
    assert lrs[:4] == [0.25, 0.5, 0.75, 1.0]
    assert lrs[4:15] == [1.0] * 11  # stable until the last num_decay_steps
    assert lrs[15:] == pytest.approx([1.0, 0.8, 0.6, 0.4, 0.2])


def test_cosine_reaches_floor():
    spec = ScheduleSpec(kind="cosine", peak_lr=2.0, num_warmup_steps=2, min_lr_ratio=0.1)
    assert learning_rate(1, 12, spec) == 2.0
    assert learning_rate(2, 12, spec) == pytest.approx(2.0)
    assert learning_rate(7, 12, spec) == pytest.approx(0.2 + 1.8 * 0.5)
    assert learning_rate(12, 12, spec) == pytest.approx(0.2)


def test_finetuning_linear_schedule():
    lrs = [linear_with_warmup(step, 10, 1.0, 0.1) for step in range(10)]
    assert lrs[0] == 1.0  # one warmup step
    assert lrs[1:] == pytest.approx([1.0 - i / 9 for i in range(9)])


@pytest.mark.parametrize(("num_steps", "warmup"), [(1000, 100), (439, 44), (392, 40), (10, 1), (3, 1)])
def test_the_transformers_warmup_is_the_trainer_s_to_the_digit(num_steps, warmup):
    """The study's Trainer: get_linear_schedule_with_warmup over TrainingArguments.get_warmup_steps'
    ceil(0.1 x steps) (CoNLL's 439 steps warm up over 44, UNER's 392 over 40), the first step at 0."""
    lrs = [linear_with_warmup(step, num_steps, 1.0, 0.1, "transformers") for step in range(num_steps)]
    assert lrs[0] == 0.0 and lrs[warmup - 1] == pytest.approx((warmup - 1) / warmup) and lrs[warmup] == 1.0
    assert lrs[warmup + 1 :] == pytest.approx([(num_steps - step) / (num_steps - warmup) for step in range(warmup + 1, num_steps)])
