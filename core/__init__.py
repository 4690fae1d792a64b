"""Attention Explorer's computation: attention from scratch in NumPy, real models, and what is
measured on them. Never imports streamlit or plotly; only core.models.pretrained imports torch, and
only when called. Importing any of it only defines things: no environment variables, threads or
processes.

    lesson/     the math the learn page teaches: attention, layers, the trace of one layer, the toy
                model, the source articles' worked examples
    models/     engines and loading: the model registry, the bundled model, BERT in NumPy, the
                masked-LM head, the torch reference engine, AttentionResult, the interventions `run` takes
    measures/   what is computed from results: words and head ranking, norms and rollout, the atlas,
                ablation, attribution, the pronoun test, similarity, neighbours, Q/K space, one
                weight's arithmetic, two sentences compared
    cost/       the price of attention, the efficient variants, a variant in every head
    text.py     the one cleaning of user text (every page and the toy tokenizer)
    export.py   JSON, CSV and NPZ writers (the command line and the pages' downloads)
    __main__.py the command line: python -m core attend|ablate|attribute|fill
"""
