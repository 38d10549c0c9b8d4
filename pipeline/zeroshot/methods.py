"""Which score a model's minimal pairs get, from the objective it was pretrained with.

A model is scored the way its training let it read text:

- causal attention (CLM, MEAP): sentence log-likelihood;
- bidirectional attention (MLM and its variants, MLM+NSP): pseudo-log-likelihood;
- prefix attention (prefix LM, span corruption, UL2): sentence log-likelihood with an
  empty prefix, where the prefix pattern is causal. That is exactly what prefix LM trains
  beyond its prefix; span corruption and UL2's denoisers trained the head on span targets
  after sentinels, so for them it is a harder, out-of-format reading, stated in the report;
- a loss that does not train the LM head (ELECTRA, whose kept backbone is the
  discriminator and whose detection head is not exported): not scored;
- random init: both scores, as the twin of each kind of model.
"""

from __future__ import annotations

from typing import Any

from pipeline.objectives import parse_objective
from pipeline.pretrain.losses import LOSSES

SENTENCE_LOG_LIKELIHOOD = "sentence_log_likelihood"
PSEUDO_LOG_LIKELIHOOD = "pseudo_log_likelihood"
METHODS = (SENTENCE_LOG_LIKELIHOOD, PSEUDO_LOG_LIKELIHOOD)
ATTENTION = {SENTENCE_LOG_LIKELIHOOD: "causal", PSEUDO_LOG_LIKELIHOOD: "bidirectional"}


def scoring_methods(objective: dict[str, Any] | None) -> tuple[tuple[str, ...], str | None]:
    """(methods, why none) for a model pretrained with ``objective``; None is random init."""
    if objective is None:
        return METHODS, None
    parsed = parse_objective(objective)
    if not LOSSES[parsed.loss].measures_language_model:
        return (), f"{parsed.kind}: its LM head is never trained (the kept backbone is a discriminator)"
    return ((PSEUDO_LOG_LIKELIHOOD,) if parsed.attention == "bidirectional" else (SENTENCE_LOG_LIKELIHOOD,)), None
