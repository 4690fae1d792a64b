"""What is computed from an engine's results, never drawn: words and head ranking (analysis),
norms and rollout (flow), the head atlas, ablation, attribution, the pronoun test (referent),
similarity and corpus neighbours, one head's Q/K space, one weight's arithmetic (neuron), and two
sentences compared."""
