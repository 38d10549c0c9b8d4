"""Zero-shot evaluation: what a pretrained model knows before any fine-tuning."""
