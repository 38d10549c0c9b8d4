"""Losses that turn a batch into a scalar, by name; an objective names the one it trains with.

A loss is an ``nn.Module`` so that an objective needing trainable parts beyond the
backbone (an NSP head, ELECTRA's generator and detection head) owns them: the trainer
optimises, checkpoints and resumes ``backbone + loss`` without knowing what is inside.
Importing this package registers every module in it, so a new loss is one new file.
"""

from pipeline.pretrain.losses.base import LOSSES, PretrainingLoss, build_loss, register_loss
from pipeline.registry import load_members

load_members(__name__, __path__)

__all__ = ["LOSSES", "PretrainingLoss", "build_loss", "register_loss"]
