"""Write layer: HD-EPIC VQA JSON files (and, later, exports), written atomically."""

from hdvqa.write.hdepic_json import output_name, questions_to_json, write_atomic

__all__ = ["output_name", "questions_to_json", "write_atomic"]
