"""The offline extractor's public entry point; the implementation is the ``z0_memory.offline.extraction`` package
(clauses, cues, vocabulary, statements, candidates).
"""

from z0_memory.offline.extraction import (
    OFFLINE_EXTRACTOR_NAME,
    SLOTS,
    ExistingMemory,
    Slot,
    TurnMessage,
    canonical_value,
    extract_candidates,
    redact_secrets,
)

__all__ = [
    "OFFLINE_EXTRACTOR_NAME",
    "SLOTS",
    "ExistingMemory",
    "Slot",
    "TurnMessage",
    "canonical_value",
    "extract_candidates",
    "redact_secrets",
]
