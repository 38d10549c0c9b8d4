"""Reference scores that need no pretrained model: what the fine-tuned models are measured against."""
