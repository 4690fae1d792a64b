"""Why a model cannot be used: the errors core.models.registry and core.models.bundled raise, each
with a message written for the person who chose the model."""

from __future__ import annotations

__all__ = ["ModelError", "ModelFilesError", "ModelInputError", "ModelNotFoundError", "first_line"]


class ModelError(RuntimeError):
    """Any reason a model cannot be used; the message is written for the person who chose it."""


class ModelInputError(ModelError, ValueError):
    """What the user typed is not a Hub id or an acceptable local directory."""


class ModelFilesError(ModelError):
    """A model's files are missing, unreadable or not what they should be."""


class ModelNotFoundError(ModelError):
    """The Hub id is unknown, private, or the Hub cannot be reached (and the files are not cached)."""


def first_line(err: BaseException) -> str:
    """An exception's first line (at most 200 characters), or its class name when it has no text."""
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__
