"""The digital twin: one mesh per fixture (``Digital-Twin/.../meshes/PXX/PXX_<fixture>.obj``).

``load_twin(tables, participant)`` gives the meshes of one kitchen with what the geometry
layer needs (bounds, vertices, one combined mesh whose faces know their fixture for ray
casting); the ``fixtures`` table lists every fixture of every kitchen. Meshes are read once
per TableSet. A mesh that cannot be read, is empty, or has a vertex that is not finite or lies more than
``guarded.COORDINATE_BOUND`` metres out is a located error; a mesh that is not watertight is kept (projection and ray casting use its surface
only) and counted in ``tables.warnings``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import read_mesh
from hdvqa.tables.registry import loader

TWIN_DIR = "Digital-Twin"  # layout key "twin": data.files.twin may point elsewhere
FIXTURE_ID = re.compile(r"^(P\d+)_(.+?)(?:\.(\d+))?$")
NOT_FIXTURES = {"mid-air"}  # mask_info's fixture values that name no mesh


def twin_root(tables) -> Path:
    return tables.path("twin")


def mesh_dir(tables, participant: str) -> Path:
    """``Digital-Twin/.../meshes/PXX``: the release nests it; the first match in sorted order."""
    root = twin_root(tables)
    if not root.is_dir():
        raise AnnotationError(root, "digital twin folder not found (fixture meshes are needed by this prototype)")
    direct = root / "meshes" / participant
    if direct.is_dir():
        return direct
    found = sorted(p for p in root.rglob(participant) if p.is_dir() and p.parent.name == "meshes")
    if not found:
        raise AnnotationError(root / "meshes" / participant, f"no meshes folder for participant {participant}")
    return found[0]


def fixture_type(fixture_id: str) -> str:
    """``P01_cupboard.009`` -> ``cupboard``."""
    m = FIXTURE_ID.match(fixture_id)
    return m.group(2) if m else fixture_id


@dataclass
class Twin:
    """The fixtures of one kitchen, in fixture-id order."""

    participant: str
    fixture_ids: list[str]
    meshes: list = field(repr=False)
    files: list[Path] = field(repr=False)

    def index(self, fixture_id: str) -> int:
        try:
            return self._position[fixture_id]
        except KeyError:
            raise KeyError(f"fixture {fixture_id!r} is not in the digital twin of {self.participant}") from None

    @cached_property
    def _position(self) -> dict[str, int]:
        return {f: i for i, f in enumerate(self.fixture_ids)}

    @cached_property
    def types(self) -> list[str]:
        return [fixture_type(f) for f in self.fixture_ids]

    @cached_property
    def bounds(self) -> np.ndarray:
        """Axis-aligned boxes (K, 2, 3): min and max corner per fixture."""
        return np.stack([m.bounds for m in self.meshes])

    @cached_property
    def centres(self) -> np.ndarray:
        return self.bounds.mean(axis=1)

    @cached_property
    def vertices(self) -> list[np.ndarray]:
        return [np.asarray(m.vertices, float) for m in self.meshes]

    @cached_property
    def combined(self):
        """(mesh, face_owner): every fixture's faces in one mesh, and the fixture of each face."""
        import trimesh  # noqa: PLC0415

        owner = np.repeat(np.arange(len(self.meshes)), [len(m.faces) for m in self.meshes])
        return trimesh.util.concatenate(self.meshes), owner


def _read_mesh(path: Path, fixture_id: str):
    """A guarded OBJ read: size limit, UTF-8, faces, finite vertices within COORDINATE_BOUND."""
    return read_mesh(path, fixture_id)


def _parse_twin(tables, participant: str) -> Twin:
    folder = mesh_dir(tables, participant)
    files = sorted(folder.glob("*.obj"))
    if not files:
        raise AnnotationError(folder, "no .obj meshes in the folder")
    ids, meshes = [], []
    for path in files:
        m = FIXTURE_ID.match(path.stem)
        if not m or m.group(1) != participant:
            raise AnnotationError(path, f"fixture id {path.stem!r} does not start with {participant}_", path.stem, "fixture")
        ids.append(path.stem)
        meshes.append(_read_mesh(path, path.stem))
    leaky = [i for i, mesh in zip(ids, meshes) if not mesh.is_watertight]
    if leaky:
        tables.warnings.append(f"{len(leaky)} mesh(es) of {participant} not watertight (kept): {', '.join(leaky[:5])}")
    return Twin(participant, ids, meshes, files)


def load_twin(tables, participant: str) -> Twin:
    """The twin of one participant's kitchen, read once per TableSet."""
    return tables.parsed(f"twin:{participant}", lambda t: _parse_twin(t, participant))


@loader("fixtures", files=("twin",), needs=("videos",), layout={"twin": TWIN_DIR}, dataset=NAME)
def load_fixtures(tables) -> pd.DataFrame:
    """One row per fixture of every participant with videos: participant, fixture_id,
    fixture_type, unique_type (the only one of its type in the kitchen), watertight, n_faces,
    centre and bounds (metres)."""
    frames = []
    for participant in sorted(tables["videos"]["participant"].unique()):
        twin = load_twin(tables, participant)
        b = twin.bounds
        frame = pd.DataFrame({
            "participant": participant, "fixture_id": twin.fixture_ids, "fixture_type": twin.types,
            "watertight": [m.is_watertight for m in twin.meshes], "n_faces": [len(m.faces) for m in twin.meshes],
            "cx": twin.centres[:, 0], "cy": twin.centres[:, 1], "cz": twin.centres[:, 2],
            "min_x": b[:, 0, 0], "min_y": b[:, 0, 1], "min_z": b[:, 0, 2], "max_x": b[:, 1, 0], "max_y": b[:, 1, 1], "max_z": b[:, 1, 2],
        })
        frame["unique_type"] = ~frame["fixture_type"].duplicated(keep=False)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def fixture_ids_on_disk(tables, participants) -> list[str]:
    """The fixture ids the twin has meshes for (their file names), of the participants that have a
    meshes folder: what ``check_fixtures_known`` needs without reading a mesh."""
    ids = []
    for pid in participants:
        try:
            folder = mesh_dir(tables, str(pid))
        except AnnotationError:  # no folder for this participant: its fixtures are all unknown
            continue
        ids.extend(p.stem for p in folder.glob("*.obj"))
    return sorted(ids)


def check_fixtures_known(tables, frame: pd.DataFrame, file, record_col: str, column: str = "fixture", known=None) -> None:
    """Every fixture a table names (other than null and ``mid-air``) must have a mesh in the twin
    (``known``: the fixture ids; None: the ``fixtures`` table's)."""
    named = frame[column].notna() & ~frame[column].isin(NOT_FIXTURES)
    known = tables["fixtures"]["fixture_id"] if known is None else pd.Series(list(known), dtype=object)
    unknown = frame.loc[named & ~frame[column].isin(known)]
    if len(unknown):
        row = unknown.iloc[0]
        raise AnnotationError(file, f"fixture {row[column]!r} is not in the digital twin ({twin_root(tables)})", str(row[record_col]), column)
