"""The price of attention: its time and memory measured against length (price), the efficient
variants written from scratch (variants), and a variant in every head of a real model
(variant_model)."""
