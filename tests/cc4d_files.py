"""A tiny hand-written CaptainCook4D release (the public annotation repository's layout and
formats, none of its content): 2 recipes, 5 recordings by 2 people in 2 kitchens, a few mistakes."""

from __future__ import annotations

import json
from pathlib import Path

ACTIVITIES = {
    1: ("Butter Toast", {
        1: "Take-Take two slices of bread",
        2: "Toast-Toast the bread for 2 minutes",
        3: "Boil-Boil water in the kettle",
        4: "Spread-Spread butter on the toast",
        5: "Pour-Pour the water into a mug",
        6: "Serve-Serve the toast on a plate",
    }),
    2: ("Green Tea", {7: "Heat-Heat a cup of water", 8: "Steep-Steep the tea bag for 3 minutes", 9: "Remove-Remove the tea bag"}),
}
# The task graph's own node numbers (START 0, END last), mapped to steps by text as in the release.
GRAPHS = {
    1: [("START", 1), ("START", 3), (1, 2), (2, 4), (3, 5), (4, 6), (5, 6), (6, "END")],
    2: [("START", 7), (7, 8), (8, 9), (9, "END")],
}
VIDEOS = [  # recording_id, environment_id, person_id, duration (s)
    ("1_1", 1, 1, 400.0), ("1_2", 2, 2, 420.0), ("1_3", 1, 1, 380.0), ("1_4", 2, 2, 300.0), ("2_1", 2, 2, 200.0),
]
# recording -> [(step, start, end, [(tag, description)])]; -1 times: a skipped step
STEPS = {
    "1_1": [(1, 5.0, 30.0, []), (3, 31.0, 60.0, []), (2, 61.0, 180.0, []), (4, 181.0, 220.0, []), (5, 221.0, 250.0, []),
            (6, 251.0, 300.0, [])],
    "1_2": [(3, 2.0, 40.0, []), (1, 41.0, 70.0, []), (2, 71.0, 300.0, [("Timing Error", "Toasted the bread for 5 minutes")]),
            (4, 301.0, 340.0, []), (5, -1.0, -1.0, [("Missing Step", "Skipped this step")]), (6, 341.0, 400.0, [])],
    "1_3": [(1, 3.0, 20.0, []), (2, 21.0, 150.0, []), (3, 151.0, 190.0, []),
            (4, 191.0, 230.0, [("Technique Error", "Spread the butter with a fork"),
                               ("Measurement Error", "Used far too much butter")]),
            (5, 231.0, 260.0, []), (6, 261.0, 300.0, [])],
    "1_4": [(1, 1.0, 20.0, [("Preparation Error", "Took only one slice of bread")]), (2, 21.0, 120.0, []),
            (4, 121.0, 160.0, [("Order Error", "Spread butter before boiling the water")]), (3, 161.0, 200.0, []),
            (5, 201.0, 220.0, []), (6, 221.0, 260.0, [])],
    "2_1": [(7, 1.0, 60.0, []), (8, 61.0, 150.0, [("Timing Error", "Steeped the tea for 10 minutes")]), (9, 151.0, 170.0, [])],
}


def graph_file(activity: int) -> dict:
    name, steps = ACTIVITIES[activity]
    ids = list(steps)
    nodes = {"START": 0, **{s: i + 1 for i, s in enumerate(ids)}, "END": len(ids) + 1}
    texts = {"0": "START", **{str(nodes[s]): steps[s] for s in ids}, str(len(ids) + 1): "END"}
    return {"steps": texts, "edges": [[nodes[a], nodes[b]] for a, b in GRAPHS[activity]]}


def recordings(steps=None) -> list:
    out = []
    for rid, rows in (steps or STEPS).items():
        activity = int(rid.split("_")[0])
        names = ACTIVITIES[activity][1]
        annotations = []
        for step, start, end, errors in rows:
            entry = {"description": names.get(step, "Other-a step of another recipe"), "step_id": step, "start_time": start, "end_time": end}
            if errors:
                entry["errors"] = [{"tag": t, "description": d} for t, d in errors]
            annotations.append(entry)
        out.append({"recording_id": rid, "activity_id": activity, "is_error": any(r[3] for r in rows),
                    "step_annotations": annotations})
    return out


def write_release(root: Path, *, videos=None, steps=None, activity_rows=None, graphs=None) -> Path:
    root = Path(root)
    for sub in ("metadata", "annotation_csv", "annotation_json", "task_graphs"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    lines = ["recording_id,environment_id,person_id,duration(min),duration(sec)"]
    lines += [f"{r},{e},{p},{d / 60:.2f},{d}" for r, e, p, d in (videos or VIDEOS)]
    (root / "metadata" / "video_information.csv").write_text("\n".join(lines) + "\n")
    # The release lists an activity's steps once per recording of it.
    rows = activity_rows or [(a, ACTIVITIES[a][0], s, text) for rid in STEPS for a in [int(rid.split("_")[0])]
                             for s, text in ACTIVITIES[a][1].items()]
    csv = ['"activity_idx","activity_name","step_index","step_description"'] + [f'"{a}","{n}","{s}","{t}"' for a, n, s, t in rows]
    (root / "annotation_csv" / "activity_step_description.csv").write_text("\n".join(csv) + "\n")
    (root / "annotation_json" / "error_annotations.json").write_text(json.dumps(recordings(steps)))
    every = ['"step_idx","step_description"'] + [f'"{s}","{t}"' for _, (_, named) in ACTIVITIES.items() for s, t in named.items()]
    (root / "annotation_csv" / "step_idx_description.csv").write_text("\n".join(every) + "\n")
    for activity, (name, _) in ACTIVITIES.items():
        data = (graphs or {}).get(activity, graph_file(activity))
        (root / "task_graphs" / (name.replace(" ", "").lower() + ".json")).write_text(json.dumps(data))
    return root
