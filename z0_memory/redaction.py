"""Secret redaction applied before anything is stored (memories, pending items, provenance, the retry queue).

The patterns live with the offline extractor, which must also drop statements whose value is a secret; this
module is the name every other writer imports.
"""

from z0_memory.offline.extractor import redact_secrets

__all__ = ["redact_secrets"]
