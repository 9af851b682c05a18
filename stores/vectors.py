"""Embeddings as statement parameters, in pgvector's binary format.

An embedding written as a text literal (``'[0.0172,...]'``) costs Python formatting and a ``strtof`` per
dimension on the server, on every search; the binary form (dimension, unused, big-endian float4s) is
one numpy conversion. ``Database`` registers the dumper on every pooled connection, so a statement takes
``%(v)s::vector`` with a :class:`VectorParam` value.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from psycopg.adapt import Dumper
from psycopg.pq import Format

# pgvector's own limit for the vector type (and so for any vector parameter)
MAX_DIMENSIONS = 16000


class VectorParam:
    """One embedding, ready to be sent as a ``vector`` parameter."""

    __slots__ = ("data",)

    def __init__(self, embedding: Sequence[float]) -> None:
        values = np.asarray(embedding, dtype=">f4")
        if values.ndim != 1 or not 0 < values.size <= MAX_DIMENSIONS:
            raise ValueError(f"an embedding must be a flat list of 1 to {MAX_DIMENSIONS} numbers, "
                             f"got shape {values.shape}")
        if not np.isfinite(values).all():
            raise ValueError("an embedding must not contain NaN or infinite values")
        self.data = struct.pack(">HH", values.size, 0) + values.tobytes()


class VectorParamDumper(Dumper):
    """Binary dumper for :class:`VectorParam` (oid 0: the statement's ``::vector`` cast gives the type)."""

    format = Format.BINARY

    def dump(self, obj: VectorParam) -> bytes:
        return obj.data
