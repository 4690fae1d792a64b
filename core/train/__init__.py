"""Training a small GPT-2 from scratch: a hand-written backward pass in NumPy and AdamW."""
