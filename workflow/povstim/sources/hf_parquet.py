"""Hugging Face dataset parquet files: read only the text column, in row-group batches.

TinyStories, (Simple English) Wikipedia and most text datasets on the hub are
distributed as parquet with one document per row. Reading one column in
batches keeps memory flat however large the file (English Wikipedia shards
are ~1 GB each).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..io import PovstimError


def documents(path: Path, column: str = "text", batch_size: int = 2048) -> Iterator[str]:
    import pyarrow.parquet as pq  # heavy import: only for parquet sources

    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid/OSError family
        raise PovstimError(f"{path}: not a readable parquet file ({exc})") from None
    names = pf.schema_arrow.names
    if column not in names:
        raise PovstimError(f"{path}: parquet has no column '{column}' (columns: {', '.join(names)}); set `column:`")
    for batch in pf.iter_batches(batch_size=batch_size, columns=[column]):
        for doc in batch.column(0).to_pylist():
            if doc:
                yield doc


def paragraphs(doc: str) -> Iterator[str]:
    """A document's paragraphs (Wikipedia rows separate them by newlines)."""
    for para in doc.split("\n"):
        para = para.strip()
        if para:
            yield para
