"""The math the learn page teaches, written from scratch in NumPy: attention (softmax, heads,
masks), the layers around it (layer norm, GELU, feed-forward), one layer's trace under the
lesson's step names, the toy model, and the source articles' worked examples. Every engine in
core.models computes with these functions."""
