"""Pretraining: shared initial weights, the token stream, the schedule, the loop."""
