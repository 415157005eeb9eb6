"""HD-EPIC's name in the table registry, and where each annotation file of its public release
lives under ``data.root`` (the loaders register these keys for it; the twin and the dialogue
tables add ``twin`` and ``dialogue``; ``data.files.KEY=PATH`` overrides one)."""

from __future__ import annotations

NAME = "hd_epic"
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
