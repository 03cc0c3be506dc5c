"""Model sources: config.json, GGUF, safetensors headers, the catalog and the Hugging Face hub."""
