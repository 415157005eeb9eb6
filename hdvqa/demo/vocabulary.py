"""The demo's noun classes and the narration table's column types, shared by the writers of
the demo kitchen (kitchen, interactions, narrations), which import this and not each other."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from hdvqa.demo.recipe_book import NOUN_CATEGORIES


@lru_cache(maxsize=1)
def noun_classes() -> pd.DataFrame:
    nouns = ["pot", "phone", *sorted(NOUN_CATEGORIES)]
    category = {**NOUN_CATEGORIES, "pot": "cookware", "phone": "electronics"}
    return pd.DataFrame(
        {"id": range(len(nouns)), "key": nouns, "instances": [str([n]) for n in nouns], "category": [category[n] for n in nouns]}
    )


def narration_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    # Object columns, as in the release's pickle (not pandas' newer string arrays).
    return frame.astype(object).astype({"start_timestamp": float, "end_timestamp": float, "narration_timestamp": float})
