"""image_nutrition_estimation on the released annotations: each image shows its own choice, the
negatives follow the seed, and the published dev questions agree with the rule."""

from __future__ import annotations

import json
import re

from hdvqa.engine.registry import load_prototype_class
from hdvqa.render import generate_rendered


def load(name):
    return load_prototype_class(name)()


def test_image_i_shows_choice_i_and_negatives_follow_the_seed(real_tables):
    proto = load("image_nutrition_estimation")
    first = generate_rendered(proto, real_tables, n=60, seed=0)
    adds = real_tables.add_segments.sort_values(["capture", "start"]).drop_duplicates("ingredient_id").set_index("ingredient_id")
    names = real_tables.ingredients.drop_duplicates("ingredient_id").set_index("ingredient_id")["name"]
    assert len(first.questions) == 60
    for q in first.questions:
        sources = [c["sources"][0] for c in q.metadata["choices"]]
        assert [q.inputs[f"image {i + 1}"]["id"] for i in range(5)] == [adds.at[s, "video_id"] for s in sources]
        assert q.choices == [names[s] for s in sources]
    other = {q.target_id: set(q.choices) for q in generate_rendered(proto, real_tables, n=None, seed=1).questions}
    changed = sum(other[q.target_id] != set(q.choices) for q in first.questions if q.target_id in other)
    # a new seed draws other negatives; since issue 22 each target first takes the candidates the
    # set-level plan gives it (seed-independent), so the seed changes the four in only a few questions
    assert changed > 0


def test_published_dev_questions_follow_the_rule(real_tables, real_root):
    """Every dev question's positive and nutrient is one of our targets, and its negatives have a
    higher value-to-amount ratio and a value lower by the 20% gap (99 of the 100 today)."""
    dev = json.loads((real_root / "vqa-benchmark-dev" / "nutrition_image_nutrition_estimation.json").read_text())
    proto = load("image_nutrition_estimation")
    targets = {t.target_id for t in proto.targets(real_tables)}
    ing = real_tables.ingredients.drop_duplicates("ingredient_id").set_index("ingredient_id")
    follow = total = 0
    for q in dev.values():
        nutrient = re.search(r"higher (\w+)\?", q["question"]).group(1)
        pos = q["metadata"][q["correct_idx"]]["ingredient_id"]
        assert f"{pos}/{nutrient}" in targets
        value, ratio = ing.at[pos, nutrient], ing.at[pos, nutrient] / ing.at[pos, "amount"]
        for i, m in enumerate(q["metadata"]):
            if i != q["correct_idx"]:
                v = ing.at[m["ingredient_id"], nutrient]
                total += 1
                follow += bool(v / ing.at[m["ingredient_id"], "amount"] > ratio and value - v >= 0.2 * value)
    assert total == 100 and follow >= 99
