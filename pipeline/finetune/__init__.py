"""Downstream fine-tuning under the study's protocol (LR grid x seeds, best LR on validation)."""
