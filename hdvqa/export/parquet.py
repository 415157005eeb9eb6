"""One parquet file of every question with typed columns (records.PARQUET_SCHEMA)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hdvqa.export.records import PARQUET_SCHEMA, full_record


def parquet_bytes(questions) -> bytes:
    rows = [full_record(q) for q in questions]
    table = pa.Table.from_pylist(rows, schema=PARQUET_SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()
