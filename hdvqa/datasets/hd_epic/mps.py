"""HD-EPIC's Aria MPS files: where the release keeps them per participant and video, and a
reader of them (``hdvqa.tables.mps`` reads the formats) that checks them against the release's
video durations."""

from __future__ import annotations

from pathlib import Path

from hdvqa.datasets.hd_epic.layout import RELEASE_LAYOUT
from hdvqa.tables.mps import MpsReader

LAYOUT = {
    "trajectory": "SLAM-and-Gaze/{participant}/SLAM/{video}/closed_loop_trajectory.csv",
    "gaze": "SLAM-and-Gaze/{participant}/GAZE/{video}/eye_gaze/general_eye_gaze.csv",
    "frame_times": "Videos/{participant}/{video}_mp4_to_vrs_time_ns.csv",
    "camera": "SLAM-and-Gaze/{participant}/SLAM/{video}/camera.json",  # the demo's pinhole rig
}


def participant(video: str) -> str:
    """``P01-20240202-110250`` -> ``P01``: HD-EPIC's video ids start with their participant."""
    return video.split("-")[0]


def release_durations(root: Path) -> dict:
    """Video durations from the release's video table under ``root`` ({} when it has none)."""
    from hdvqa.tables.tableset import TableSet  # noqa: PLC0415

    if not (root / RELEASE_LAYOUT["video_info"]).is_file():
        return {}
    return TableSet(root)["videos"].set_index("video_id")["duration"].to_dict()


class MpsStore(MpsReader):
    """The MPS files of one HD-EPIC root (``LAYOUT``, ``layout`` overriding keys of it), converted
    once and memory-mapped."""

    def __init__(self, root, cache_dir=None, layout: dict | None = None, durations=None):
        """``durations``: video id -> seconds (a mapping, or a callable giving one) the files are
        checked against; None: the release's video table under ``root`` when there is one."""
        root = Path(root)
        super().__init__(root, {**LAYOUT, **(layout or {})}, cache_dir,
                         (lambda: release_durations(root)) if durations is None else durations, participant)
