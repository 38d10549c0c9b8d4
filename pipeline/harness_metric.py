"""The harness's metrics as a Hugging Face ``evaluate`` module, loadable offline.

    import evaluate
    from pipeline.harness_metric import MODULE_PATH
    squad_v2 = evaluate.load(MODULE_PATH, "squad_v2")   # any name of pipeline.metrics.METRICS
    squad_v2.compute(predictions=["Paris", ""], references=[["Paris"], []])

``evaluate.load("squad_v2")`` and friends fetch their scripts from the hub, which the
embedded default cannot reach; a local module path works without it. This module computes
exactly what the pipeline reports (it calls the registered metric), so a Trainer's
``compute_metrics``, ``evaluate.combine`` or an evaluation notebook scores the same way
the harness does. Inputs use the shapes each metric documents; ``FEATURES`` declares them
for ``evaluate``'s batching and type checks.
"""

from __future__ import annotations

from pathlib import Path

import datasets
import evaluate

from pipeline.metrics import get_metric

MODULE_PATH = str(Path(__file__).resolve())

# A registered metric's input kinds (Metric.inputs) as datasets types.
FEATURE = {
    "id": datasets.Value("int64"),
    "text": datasets.Value("string"),
    "texts": datasets.Sequence(datasets.Value("string")),
    "positions": datasets.Sequence(datasets.Value("int64")),
    "scored": {"ids": datasets.Sequence(datasets.Value("string")), "scores": datasets.Sequence(datasets.Value("float64"))},
}


class HarnessMetric(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        prediction, reference = (FEATURE[kind] for kind in get_metric(self.config_name).inputs)  # an unknown name: the registry's error
        return evaluate.MetricInfo(
            description=f"{self.config_name} as the harness computes it (pipeline/metrics/{self.config_name}.py)",
            citation="",
            inputs_description="predictions and references as pipeline.metrics documents them for this metric",
            features=datasets.Features({"predictions": prediction, "references": reference}),
        )

    def _compute(self, predictions, references) -> dict[str, float]:
        return get_metric(self.config_name).compute(predictions, references)
