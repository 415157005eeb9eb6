"""hdvqa: turn egocentric-video annotations into multiple-choice VQA benchmarks."""

__version__ = "0.1.0"
