"""Write layer: HD-EPIC VQA JSON files (and, later, exports), written atomically."""

from hdvqa.write.hdepic_json import entries_to_json, output_name, question_keys, questions_to_json, write_atomic

__all__ = ["entries_to_json", "output_name", "question_keys", "questions_to_json", "write_atomic"]
