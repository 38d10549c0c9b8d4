"""The one backbone every objective trains (EuroBERT / Llama layout, from transformers)."""
