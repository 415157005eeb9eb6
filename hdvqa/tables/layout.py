"""Where each annotation file of the public HD-EPIC release lives under ``data.root``, and the
negative banks a run may name: plain data the registry and the loaders share (a loader module
registers its layout keys here; no module here imports a loader)."""

from __future__ import annotations

RELEASE_LAYOUT = {
    "recipes": "high-level/complete_recipes.json",
    "activities_dir": "high-level/activities",
    "narrations": "narrations-and-action-segments/HD_EPIC_Narrations.pkl",
    "noun_classes": "narrations-and-action-segments/HD_EPIC_noun_classes.csv",
    "verb_classes": "narrations-and-action-segments/HD_EPIC_verb_classes.csv",
    "assoc_info": "scene-and-object-movements/assoc_info.json",
    "mask_info": "scene-and-object-movements/mask_info.json",
    "priming_info": "eye-gaze-priming/priming_info.json",
    "video_info": "youtube-links/HD_EPIC_YouTube_URLs.csv",
}

# data.banks name -> the table it feeds
BANKS = {"similar_recipes": "similar_recipes", "unused_ingredients": "unused_ingredients"}
