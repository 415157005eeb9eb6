"""hdvqa's Hydra configs. Importing this package (Hydra does, to read ``pkg://hdvqa.conf``)
stores every installed prototype's class-made config in Hydra's ConfigStore, which the
YAMLs of ``prototype/`` extend and which a prototype with no YAML is composed from; only the
selected ones when the process's one command named them (``hdvqa.entry_points.register_only``)."""

from hdvqa.engine.registry import register_configs
from hdvqa.entry_points import configs_to_register

register_configs(names=configs_to_register())

# Likewise the data node of every installed dataset adapter without a YAML here (hdvqa.datasets).
from hdvqa.datasets import register_data_configs  # noqa: E402

register_data_configs()
