"""Unpickling without running code: only the globals a DataFrame of plain values needs.

A pickle can name any importable callable and have the unpickler call it; this one
refuses every global outside a fixed allow-list and says which, so loading a
downloaded annotation file can never run a command.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import check_size, checked_frame, read_bytes

ALLOWED_GLOBALS = frozenset(
    {
        ("builtins", "slice"), ("builtins", "list"), ("builtins", "dict"), ("builtins", "tuple"),
        ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "bytearray"), ("builtins", "complex"),
        ("numpy", "ndarray"), ("numpy", "dtype"),
        ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
        ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
        ("pandas", "DataFrame"), ("pandas", "Series"), ("pandas", "Index"), ("pandas", "RangeIndex"),
        ("pandas.core.frame", "DataFrame"), ("pandas.core.series", "Series"),
        ("pandas.core.indexes.base", "_new_Index"), ("pandas.core.indexes.base", "Index"),
        ("pandas.core.indexes.range", "RangeIndex"),
        ("pandas._libs.internals", "_unpickle_block"),
        ("pandas.core.internals.managers", "BlockManager"),
        ("pandas.core.internals.managers", "SingleBlockManager"),
        ("pandas.core.internals.blocks", "new_block"),
        ("pandas.core.arrays.string_", "StringArray"), ("pandas.core.arrays.string_", "StringDtype"),
        ("pandas.arrays", "StringArray"), ("pandas", "StringDtype"),
        # Rebuilds an array of an allowed class only (the class comes through find_class too).
        ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"),
        # pandas >= 3 stores strings (and column names) as pyarrow arrays: a type looked up by
        # name, byte buffers, and the array rebuilt from them; validated after loading.
        ("pandas.arrays", "ArrowStringArray"), ("pandas.core.arrays.string_arrow", "ArrowStringArray"),
        ("pyarrow.lib", "_restore_array"), ("pyarrow.lib", "type_for_alias"), ("pyarrow.lib", "py_buffer"),
    }
)


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, path):
        super().__init__(file)
        self._path = path

    def find_class(self, module, name):
        if (module, name) not in ALLOWED_GLOBALS:
            raise AnnotationError(
                self._path, f"refused to load global {module}.{name}: only plain DataFrame contents are allowed in a pickle"
            )
        return super().find_class(module, name)


def _check_arrow_buffers(obj, path) -> None:
    """A pyarrow array rebuilt from a pickle's buffers is not checked by pyarrow; a hostile one
    could point outside them. Validate every arrow-backed column and index fully."""
    if isinstance(obj, pd.DataFrame):
        named = [("columns", obj.columns.array), *((str(c), obj.iloc[:, i].array) for i, c in enumerate(obj.columns))]
    elif isinstance(obj, pd.Series):
        named = [(str(obj.name), obj.array)]
    else:
        return
    for name, array in [("index", obj.index.array), *named]:
        if hasattr(array, "__arrow_array__"):
            try:
                array.__arrow_array__().validate(full=True)
            except Exception as exc:
                raise AnnotationError(path, f"invalid arrow data: {' '.join(str(exc).split())}", field=name) from None


def load_pickle(path: Path):
    """Unpickle ``path`` allowing only plain-DataFrame globals."""
    data = read_bytes(path, "pickle")  # a regular file within the pickle size limit
    if not data:
        raise AnnotationError(path, "file is empty")
    try:
        obj = _RestrictedUnpickler(io.BytesIO(data), path).load()
    except AnnotationError:
        raise
    except Exception as exc:  # a truncated or corrupt pickle raises many kinds of error
        raise AnnotationError(path, f"malformed pickle: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}") from None
    try:
        _check_arrow_buffers(obj, path)
    except AnnotationError:
        raise
    except Exception as exc:  # noqa: BLE001 - a frame whose BUILD state left it inconsistent
        raise AnnotationError(path, f"malformed DataFrame: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None
    return obj


def read_pickle(path):
    """A pickle through the restricted unpickler (no code runs); the value, unchecked."""
    check_size(path, "pickle")
    return load_pickle(path)


def read_pickled_frame(path) -> pd.DataFrame:
    """A pickled DataFrame (restricted unpickler, size limit), rebuilt as a consistent frame."""
    return checked_frame(read_pickle(path), path)
