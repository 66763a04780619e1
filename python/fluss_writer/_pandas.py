"""pandas DataFrame -> pyarrow Table for ``AppendWriter.write_pandas``.

The table's Arrow schema drives the conversion of the columns the table has (so ``int64`` data
lands in an ``INT`` column as ``int32``, object columns of ``Decimal`` as ``decimal128``, ...),
but no column is dropped or invented here: a DataFrame column the table lacks is handed to the
core as it is (its inferred type, or nulls if pandas cannot say), and the core rejects the whole
call as INVALID_ROW naming it. Which columns a table takes is the core's rule, for rows, Arrow
batches, streams and DataFrames alike.
"""

from __future__ import annotations

from typing import Any


def to_arrow(df: Any, table_schema: Any) -> Any:
    import pyarrow as pa

    schema = pa.schema(table_schema)
    names = [str(c) for c in df.columns]
    if sorted(names) == sorted(schema.names):
        return pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    known = [f for f in schema if f.name in names]
    out = pa.Table.from_pandas(df[[f.name for f in known]], schema=pa.schema(known), preserve_index=False)
    for c, name in zip(df.columns, names):
        if name in schema.names:
            continue
        try:
            arr = pa.array(df[c], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            arr = pa.nulls(len(df))
        out = out.append_column(name, arr)
    return out
