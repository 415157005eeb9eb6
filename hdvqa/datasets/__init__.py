"""Dataset adapters: how a release's files become the tables prototypes read (``data=<name>``).

Built in: ``demo`` and ``hd_epic`` (HD-EPIC's formats) and ``epic_kitchens_100``; others come
from packages through the ``hdvqa.datasets`` entry-point group. See docs/datasets.md.
"""

from hdvqa.datasets.adapter import (
    GROUP, Dataset, available, check_provides, load_adapter, register_data_configs, source_names,
)

__all__ = ["GROUP", "Dataset", "available", "check_provides", "load_adapter", "register_data_configs", "source_names"]
