"""The offline extractor's public entry point; the implementation is the ``z0_memory.offline.extraction`` package
(clauses, cues, vocabulary, statements, candidates).
"""

from z0_memory.offline.extraction import *  # noqa: F403  (the package's public names)
from z0_memory.offline.extraction import __all__  # noqa: F401
