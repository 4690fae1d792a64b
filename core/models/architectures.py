"""Which NumPy engine runs a checkpoint, chosen by its config.json's model_type and checked before
any weights are downloaded: BERT encoders (core/models/bert.py), GPT-2 decoders
(core/models/gpt2.py) and Llama-family decoders such as SmolLM2 (core/models/llama.py). Every
other architecture is refused with one message that says what runs instead. Only config.json and
safetensors are read: nothing runs code from a model repository."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.models import registry
from core.models.bert import BertNumpy
from core.models.bert_config import UnsupportedModelError, check_bert_config
from core.models.bert_config import check_supported as check_bert_supported
from core.models.decoder import DecoderNumpy
from core.models.errors import ModelError
from core.models.gpt2 import GPT2Numpy
from core.models.gpt2_config import check_gpt2_config
from core.models.llama import LlamaNumpy
from core.models.llama_config import check_llama_config

__all__ = ["check_config", "check_supported", "check_torch_config", "engine_from_dir", "is_decoder"]
__all__ += ["load_engine", "load_torch_engine", "torch_engine_from_dir"]

CHECKS = {"bert": check_bert_config, "gpt2": check_gpt2_config, "llama": check_llama_config}
ENGINES = {"bert": BertNumpy, "gpt2": GPT2Numpy, "llama": LlamaNumpy}
DECODER_TYPES = ("gpt2", "llama")  # run by transformers' GPT2LMHeadModel / LlamaForCausalLM as the reference


def check_config(config: dict) -> None:
    """UnsupportedModelError unless a NumPy engine runs this config.json (prepare_model_files'
    check_config)."""
    model_type = config.get("model_type")
    if model_type in CHECKS:
        CHECKS[model_type](config)
        return
    if config.get("is_encoder_decoder"):
        kind = "an encoder-decoder (its decoder reads the encoder through cross-attention)"
    elif any(str(name).endswith("ForCausalLM") for name in config.get("architectures") or ()):
        kind = "a decoder of another family than GPT-2 and Llama"
    else:
        kind = "an architecture this product does not run"
    raise UnsupportedModelError(
        f"config.json: model_type {model_type!r} is {kind}; the product runs BERT encoders, GPT-2 and "
        "Llama-family decoders (for example bert-base-uncased, gpt2, HuggingFaceTB/SmolLM2-135M)"
    )


def check_torch_config(config: dict) -> None:
    """UnsupportedModelError unless the torch reference runs this config.json: GPT-2 and Llama through
    transformers' GPT2LMHeadModel and LlamaForCausalLM, encoders through core/models/pretrained.py."""
    from core.models import pretrained

    model_type = config.get("model_type")
    check = CHECKS[model_type] if model_type in DECODER_TYPES else pretrained.check_encoder_config
    check(config)


def check_supported(model_dir: str | Path) -> str | None:
    """None when a NumPy engine runs the checkpoint in `model_dir`, else the reason it cannot."""
    model_dir = Path(model_dir)
    try:
        config = registry.read_config(model_dir)
        check_config(config)
    except ModelError as err:
        return str(err)
    if config["model_type"] == "bert":
        return check_bert_supported(model_dir)
    if not any((model_dir / n).is_file() for n in ("model.safetensors", "model.safetensors.index.json")):
        return f"no model.safetensors in {model_dir} (the NumPy engine reads safetensors weights only)"
    return None


def engine_from_dir(model_dir: Path, *, name: str, compact: bool = False) -> BertNumpy | DecoderNumpy:
    """The NumPy engine for the checkpoint already in `model_dir`, by its model_type. compact: a
    Llama holds its weights in bfloat16 (half the memory: the hosted demo's SmolLM2); the other
    families are held as they are (the hosted demo's BERT and letter GPT-2 are small)."""
    engine = ENGINES[registry.read_config(model_dir)["model_type"]]
    if compact and engine is LlamaNumpy:
        return engine.from_pretrained(model_dir, name=name, compact=True)
    return engine.from_pretrained(model_dir, name=name)


def torch_engine_from_dir(model_dir: Path, *, name: str):
    """The torch reference for the checkpoint in `model_dir` (torch is imported here)."""
    from core.models import pretrained, pretrained_decoder

    if registry.read_config(model_dir).get("model_type") in DECODER_TYPES:
        return pretrained_decoder.load_from_dir(model_dir, name=name)
    return pretrained.load_from_dir(model_dir, name=name)


def load_engine(
    choice: registry.ModelSpec | str | Path | None,
    *,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> BertNumpy | DecoderNumpy:
    """The NumPy engine for a model choice ("bundled", a Hub id, a local folder), by architecture.
    Raises core.models.errors.ModelError subclasses with messages for the user."""
    return registry.load_choice(
        choice,
        engine_from_dir,
        check_config=check_config,
        into="NumPy",
        name=name,
        progress=progress,
    )


def load_torch_engine(
    choice: registry.ModelSpec | str | Path | None,
    *,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
):
    """The torch reference engine for a model choice, by architecture: transformers' GPT-2 or Llama
    for a decoder (core/models/pretrained_decoder.py), the encoder reference otherwise
    (core/models/pretrained.py, which refuses every other decoder). torch is imported as it loads."""
    return registry.load_choice(
        choice,
        torch_engine_from_dir,
        check_config=check_torch_config,
        into="PyTorch",
        name=name,
        progress=progress,
    )


def is_decoder(engine) -> bool:
    """True for an engine whose attention is causal (each token sees only what came before it)."""
    from core.models.pretrained_decoder import PretrainedDecoder  # no torch: it imports torch when it runs

    return isinstance(engine, DecoderNumpy | PretrainedDecoder)
