"""The product's own text and example galleries: data, not code."""
