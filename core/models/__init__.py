"""Engines and loading: which models may be chosen and how they are found (registry, bundled),
BERT in NumPy written as the lesson's steps (bert, bert_config, bert_weights, masked_lm), the
torch reference engine (pretrained), the one result every engine returns (result), and the
interventions an engine's `run` reads (interventions)."""
