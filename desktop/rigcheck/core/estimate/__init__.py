"""Estimation: memory, speed and fit for inference, fine-tuning and offloaded training."""
