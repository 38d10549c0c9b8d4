"""pretraining.compute.lm_head: the sparse head the trainer's losses compute with. Liger's is a Triton
kernel (a GPU's), so here a stand-in takes its place in the import and records what it is handed;
on a GPU, bench/gpu_speed.sh's liger attempt compares its losses with the chunked head's."""

from __future__ import annotations

import sys
import types

import pytest
import torch

from pipeline.batch import Batch
from pipeline.errors import PipelineError
from pipeline.example import IGNORE
from pipeline.model import liger_head
from pipeline.model.backbone import BackboneSpec, build_language_model, language_model_loss
from pipeline.model.linear_cross_entropy import linear_cross_entropy
from pipeline.objectives import parse_objective
from pipeline.pretrain.losses.base import build_loss
from pipeline.tokenization.special_tokens import SpecialIds
from tests.conftest import MICRO

SPECIAL = SpecialIds(pad=0, bos=1, eos=2, mask=3, num_special=4, vocab_size=64, sentinels=())
LIGER_MODULE = "liger_kernel.transformers.fused_linear_cross_entropy"


@pytest.fixture
def liger_stand_in(monkeypatch):
    """liger-kernel's loss module, with a LigerFusedLinearCrossEntropyLoss that computes as the chunked head does."""
    handed = []

    class LigerFusedLinearCrossEntropyLoss:  # called as liger's: (weight, hidden, labels)
        def __call__(self, weight, hidden, labels):
            handed.append(labels.tolist())
            return linear_cross_entropy(hidden, weight, labels)

    module = types.ModuleType(LIGER_MODULE)
    module.LigerFusedLinearCrossEntropyLoss = LigerFusedLinearCrossEntropyLoss
    for name in ("liger_kernel", "liger_kernel.transformers"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, LIGER_MODULE, module)
    liger_head._liger_loss.cache_clear()
    yield handed
    liger_head._liger_loss.cache_clear()


def batch_with_labels() -> tuple[torch.nn.Module, Batch]:
    model = build_language_model(BackboneSpec.create(MICRO, SPECIAL, max_length=32), "bidirectional", seed=0)
    ids = torch.randint(SPECIAL.num_special, SPECIAL.vocab_size, (2, 10), generator=torch.Generator().manual_seed(0))
    labels = torch.full_like(ids, IGNORE)
    labels[0, 3], labels[1, 7], labels[1, 0] = 11, 42, 9
    return model, Batch(ids, labels, "bidirectional")


def test_the_liger_head_hands_liger_s_loss_the_labelled_positions_only(liger_stand_in):
    model, batch = batch_with_labels()
    liger = language_model_loss(model, batch, "liger")
    assert liger_stand_in == [[11, 9, 42]]  # row-major order of the labelled positions
    torch.testing.assert_close(liger, language_model_loss(model, batch, "chunked"))
    torch.testing.assert_close(liger, language_model_loss(model, batch, "dense"))


def test_a_run_s_losses_take_the_configured_head(liger_stand_in):
    """The trainer builds its loss with ComputeSpec.head: MLM through the loss module reaches Liger's kernel."""
    model, batch = batch_with_labels()
    loss = build_loss(parse_objective({"kind": "mlm"}), BackboneSpec.create(MICRO, SPECIAL, 32), 0, head="liger")
    loss(model, batch)
    assert liger_stand_in == [[11, 9, 42]]


def test_without_liger_kernel_the_head_stops_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "liger_kernel", None)  # an import of it raises ImportError
    liger_head._liger_loss.cache_clear()
    model, batch = batch_with_labels()
    with pytest.raises(PipelineError) as error:
        language_model_loss(model, batch, "liger")
    liger_head._liger_loss.cache_clear()
    message = str(error.value)
    assert message.startswith("pretraining.compute.lm_head: 'liger' needs liger-kernel (") and "\n" not in message
    assert message.endswith("pip install -c constraints.txt -e '.[gpu]'")
