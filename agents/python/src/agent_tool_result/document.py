"""Which contract a JSON document is: one rule, by its top-level member names alone, the same
in every reader. A top-level ``schemaVersion``: a guarantee result, whatever else it holds;
otherwise no ``ok`` but a ``type`` and a ``status``: a guarantee tool's refusal (an RFC 9457
problem); otherwise an envelope."""

from __future__ import annotations

from enum import Enum
from typing import Any


class Document(str, Enum):
    """The contract a document is read under."""

    ENVELOPE = "envelope"
    GUARANTEE = "guarantee"
    REFUSAL = "refusal"


def of(value: Any) -> Document:
    """The contract of the parsed document ``value``."""
    if isinstance(value, dict):
        if "schemaVersion" in value:
            return Document.GUARANTEE
        if "ok" not in value and "type" in value and "status" in value:
            return Document.REFUSAL
    return Document.ENVELOPE
