"""Is it seen? In front of the camera, inside the image, and not occluded by another fixture.

Occlusion is a segment test from the camera centre to each point against the other fixtures,
either their bounding boxes (``BoxOccluder``: exact slab test, vectorised over frames x points
x boxes; the gaze rule's "another landmark's bounding box") or their meshes (``MeshOccluder``:
trimesh ray casting against the digital twin). A point's own fixture never occludes it.
"""

from __future__ import annotations

import numpy as np

from hdvqa.geometry.view import project

EPS = 1e-6
CHUNK = 2_000_000  # segments x boxes per slab-test batch: bounds temporaries to ~100 MB


def box_points(bounds: np.ndarray) -> np.ndarray:
    """The 8 corners and the centre (K, 9, 3) of axis-aligned boxes (K, 2, 3) = (min, max)."""
    lo, hi = bounds[:, 0], bounds[:, 1]
    corners = [np.where(np.array(bits, bool), hi, lo) for bits in np.ndindex(2, 2, 2)]
    return np.stack([*corners, (lo + hi) / 2], axis=1)


class BoxOccluder:
    """Occlusion by axis-aligned boxes (K, 2, 3)."""

    def __init__(self, bounds: np.ndarray):
        self.bounds = np.asarray(bounds, float)

    def blocked(self, origins: np.ndarray, targets: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """(N,): segment origins[n] -> targets[n] passes through a box other than owner[n]."""
        K = len(self.bounds)
        out = np.zeros(len(origins), bool)
        step = max(1, CHUNK // max(1, K))
        lo, hi = self.bounds[None, :, 0, :], self.bounds[None, :, 1, :]
        for s in range(0, len(origins), step):  # batches only bound memory; each is one array op
            o = origins[s : s + step, None, :]  # (n, 1, 3)
            d = targets[s : s + step, None, :] - o
            d = np.where(np.abs(d) < 1e-12, 1e-12, d)
            t1, t2 = (lo - o) / d, (hi - o) / d  # (n, K, 3)
            a, b = np.minimum(t1, t2), np.maximum(t1, t2)
            # max/min over the 3 axes written out: a reduction over a length-3 axis is slow in numpy
            t_near = np.maximum(np.maximum(a[..., 0], a[..., 1]), a[..., 2])
            t_far = np.minimum(np.minimum(b[..., 0], b[..., 1]), b[..., 2])
            hit = (t_far >= np.maximum(t_near, EPS)) & (t_near < 1 - EPS)
            hit[np.arange(len(hit)), owner[s : s + step]] = False
            out[s : s + step] = hit.any(axis=1)
        return out


class MeshOccluder:
    """Occlusion by the twin's meshes: one trimesh ray caster over every fixture's faces."""

    def __init__(self, mesh, face_owner: np.ndarray):
        self.mesh, self.face_owner = mesh, np.asarray(face_owner)

    def blocked(self, origins: np.ndarray, targets: np.ndarray, owner: np.ndarray) -> np.ndarray:
        d = targets - origins
        length = np.linalg.norm(d, axis=1)
        d = d / np.maximum(length, 1e-12)[:, None]
        loc, ray, tri = self.mesh.ray.intersects_location(origins, d, multiple_hits=True)
        dist = np.linalg.norm(loc - origins[ray], axis=1)
        hits = (self.face_owner[tri] != owner[ray]) & (dist < length[ray] - 1e-4)
        out = np.zeros(len(origins), bool)
        out[ray[hits]] = True
        return out


def visible_points(points: np.ndarray, owner: np.ndarray, T_world_camera: np.ndarray, camera, occluder) -> np.ndarray:
    """(F, P): point p is in front of the camera, inside the image and not occluded in frame f.
    Only points inside the image are tested for occlusion (the costly part)."""
    _, _, inside = project(points, T_world_camera, camera)
    f, p = np.nonzero(inside)
    seen = inside.copy()
    seen[f, p] = ~occluder.blocked(T_world_camera[f, :3, 3], points[p], np.asarray(owner)[p])
    return seen


def visible_boxes(bounds: np.ndarray, T_world_camera: np.ndarray, camera, occluder=None, need: int = 5) -> np.ndarray:
    """(F, K): at least ``need`` of box k's 9 points (corners and centre) are visible in frame f,
    occluders being the other boxes unless given (the gaze rule's landmark visibility)."""
    K = len(bounds)
    points = box_points(bounds).reshape(-1, 3)
    owner = np.repeat(np.arange(K), 9)
    seen = visible_points(points, owner, T_world_camera, camera, occluder or BoxOccluder(bounds))
    return seen.reshape(len(T_world_camera), K, 9).sum(axis=-1) >= need


def boxes_seen(bounds: np.ndarray, T_world_camera: np.ndarray, camera, occluder=None, need: int = 5,
               passes: int = 4) -> np.ndarray:
    """(K,): ``visible_boxes(...).any(axis=0)``, box k visible in some frame, with fewer
    occlusion tests: only a box with ``need`` of its points inside the image in a frame is tested
    there, and a box once seen is tested no more. The frames go in ``passes`` interleaved passes
    (every ``passes``-th frame first), so a box seen somewhere is usually found in the first. Each
    point's projection and each segment's occlusion test are the ones ``visible_boxes`` makes."""
    K, F = len(bounds), len(T_world_camera)
    points = box_points(bounds).reshape(-1, 3)
    owner = np.repeat(np.arange(K), 9)
    occluder = occluder or BoxOccluder(bounds)
    _, _, inside = project(points, T_world_camera, camera)
    candidate = inside.reshape(F, K, 9).sum(axis=2) >= need  # (F, K): can reach ``need`` visible points
    seen = np.zeros(K, bool)
    for start in range(min(passes, F)):
        rows = np.arange(start, F, passes)
        test = candidate[rows] & ~seen
        if not test.any():
            continue
        mask = inside[rows] & np.repeat(test, 9, axis=1)
        f, p = np.nonzero(mask)
        mask[f, p] = ~occluder.blocked(T_world_camera[rows[f], :3, 3], points[p], owner[p])
        seen |= (mask.reshape(len(rows), K, 9).sum(axis=2) >= need).any(axis=0)
    return seen


def _outlines(vertices: list[np.ndarray], T_world_camera: np.ndarray, camera, rows: np.ndarray):
    """What ``hidden_fraction`` and ``first_unhidden_each`` share, before any outline is built:
    pixels and front flags (F, V), each vertex's fixture, whether fixture j has a vertex in front
    (F, K), ``nearer`` (F, r, j): j in front of and nearer than fixture ``rows[f, r]`` (mean vertex
    depth; ``rows`` (F, R), the fixtures asked about in each frame), and ``overlaps``: those of them
    whose outline's bounding box meets that fixture's (a nearer outline can cover it only then:
    its hull lies in its box)."""
    K = len(vertices)
    counts = np.array([len(v) for v in vertices])
    uv, depth, _ = project(np.concatenate(vertices), T_world_camera, camera)
    front = depth > EPS
    owner = np.repeat(np.arange(K), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    n_front = np.add.reduceat(front, starts, axis=1)
    mean_depth = np.add.reduceat(np.where(front, depth, 0.0), starts, axis=1) / np.maximum(n_front, 1)
    ok = n_front > 0

    def asked(a):  # (F, R, 1): a's value for each frame's fixtures asked about
        return np.take_along_axis(a, rows, axis=1)[:, :, None]

    nearer = ok[:, None, :] & (mean_depth[:, None, :] < asked(mean_depth))  # (F, r, j): j nearer than rows[f, r]
    nearer &= asked(ok)
    box = [reduce(np.where(front, uv[..., a], fill), starts, axis=1) for a in (0, 1)
           for reduce, fill in ((np.minimum.reduceat, np.inf), (np.maximum.reduceat, -np.inf))]  # x1 x2 y1 y2 (F, K)
    overlaps = nearer.copy()
    for lo, hi in ((box[0], box[1]), (box[2], box[3])):
        overlaps &= (lo[:, None, :] <= asked(hi)) & (hi[:, None, :] >= asked(lo))
    return uv, front, owner, ok, nearer, overlaps


def _hulls(uv: np.ndarray, front: np.ndarray, owner: np.ndarray, needed: np.ndarray) -> np.ndarray:
    """(F, K) convex hulls of the front vertices' pixels where ``needed`` (F, K), None elsewhere:
    a multipoint per (frame, fixture), then its hull, one shapely call each."""
    import shapely  # noqa: PLC0415 - heavy import, only where outlines are needed

    F, K = needed.shape
    f_idx, v_idx = np.nonzero(front & needed[:, owner])
    hull_of = f_idx * K + owner[v_idx]
    hulls = np.full(F * K, None, dtype=object)
    present = np.unique(hull_of)
    if len(present):
        hulls[present] = shapely.convex_hull(shapely.multipoints(uv[f_idx, v_idx], indices=np.searchsorted(present, hull_of)))
    return hulls.reshape(F, K)


def hidden_fraction(vertices: list[np.ndarray], T_world_camera: np.ndarray, camera, of: int | None = None) -> np.ndarray:
    """(F, K): the fraction of fixture k's projected outline (convex hull of its projected
    vertices in front of the camera) covered by the outlines of fixtures nearer to the camera
    (mean vertex depth) in frame f. NaN where no vertex of k is in front. With ``of=k``, (F,)
    for fixture k alone: the same figures, without the unions of the other K - 1 outlines."""
    import shapely  # noqa: PLC0415 - heavy import, only where outlines are needed

    K, F = len(vertices), len(T_world_camera)
    rows = np.arange(K) if of is None else np.array([of])
    uv, front, owner, ok, nearer, overlaps = _outlines(vertices, T_world_camera, camera, np.broadcast_to(rows, (F, len(rows))))
    # Outlines are built only where they count. A nearer fixture whose outline's bounding box
    # misses k's covers none of it: when no nearer one overlaps k's box, k's covered area is
    # exactly 0 and no union is needed; otherwise the union is of every nearer outline, as the
    # plain definition has it (dropping the disjoint ones moves the overlay's area in the 17th
    # digit: ``first_unhidden`` does, where only the comparison with a threshold counts). The
    # hulls and unions are the shapely calls' cost.
    covers = overlaps.any(axis=2)  # (F, k): some nearer outline may cover part of k's
    nearer &= covers[:, :, None]
    needed = nearer.any(axis=1)
    needed[:, rows] |= ok[:, rows]
    hulls = _hulls(uv, front, owner, needed)
    frac = np.full((F, len(rows)), np.nan)
    mine = hulls[:, rows]
    area = np.where(ok[:, rows], np.asarray(shapely.area(mine.astype(object)), float), np.nan)
    frac[ok[:, rows]] = 1.0  # a degenerate outline (a point, a segment) counts as hidden, as before
    covered = np.zeros_like(frac)
    f, r = np.nonzero(covers & (area > 0))
    if len(f):
        union = shapely.union_all(np.where(nearer[f, r], hulls[f], None), axis=1)
        covered[f, r] = np.nan_to_num(np.asarray(shapely.area(shapely.intersection(mine[f, r], union)), float))
    pos = area > 0
    frac[pos] = covered[pos] / area[pos]
    return frac if of is None else frac[:, 0]


def first_unhidden(vertices: list[np.ndarray], T_world_camera: np.ndarray, camera, of: int, max_hidden: float) -> int | None:
    """The first frame f in which less than ``max_hidden`` of fixture ``of``'s outline is hidden
    (``hidden_fraction(...)[f] < max_hidden``), None when there is none (``first_unhidden_each``)."""
    return first_unhidden_each(vertices, T_world_camera, camera, np.full(len(T_world_camera), of), [0], max_hidden)[0]


def first_unhidden_each(vertices: list[np.ndarray], T_world_camera: np.ndarray, camera, of: np.ndarray, starts,
                        max_hidden: float) -> list[int | None]:
    """For each run of frames (``starts``: where each begins; the last ends at F), the first frame
    of the run (counted from its start) in which less than ``max_hidden`` of fixture ``of[f]``'s
    outline is hidden (``hidden_fraction(...)[f] < max_hidden`` for that fixture), None when there
    is none: several draws' frames (each its own fixture) tested together, each frame as alone.

    The same test as ``hidden_fraction``, with less built: the fixture's outline in every frame; a
    frame where no nearer outline's box meets its box is 0 hidden without any union; other frames
    are looked at only before the first such one of their run, and the union there is of the
    nearer outlines whose box meets the fixture's only (the others cover none of it). Leaving them
    out can move the covered area in its last digit, so a frame hidden by exactly ``max_hidden`` to
    the last bit could be decided otherwise; elsewhere the answer is ``hidden_fraction``'s (tests
    compare them)."""
    import shapely  # noqa: PLC0415 - heavy import, only where outlines are needed

    F, K = len(T_world_camera), len(vertices)
    of, frames = np.asarray(of, dtype=np.intp), np.arange(F)
    uv, front, owner, ok, _, overlaps = _outlines(vertices, T_world_camera, camera, of[:, None])
    overlaps = overlaps[:, 0]  # (F, K)
    own = np.zeros((F, K), bool)
    own[frames, of] = True
    mine = _hulls(uv, front, owner, ok & own)[frames, of]
    area = np.where(ok[frames, of], np.asarray(shapely.area(mine.astype(object)), float), np.nan)
    # nan (no vertex in front) and 1.0 (a degenerate outline) are never below a max_hidden <= 1
    positive = area > 0
    covered_by = overlaps.any(axis=1)
    clear = positive & ~covered_by  # 0 hidden: passes any max_hidden > 0
    ends = [*list(starts)[1:], F]
    firsts, look = [], []
    for s, e in zip(starts, ends):
        hits = np.flatnonzero(clear[s:e]) if max_hidden > 0 else ()
        first = s + int(hits[0]) if len(hits) else e
        firsts.append(first)
        look.extend(s + np.flatnonzero(positive[s:first] & covered_by[s:first]))
    below = np.zeros(F, bool)
    if look:
        look = np.array(look)
        hulls = _hulls(uv[look], front[look], owner, overlaps[look])
        union = shapely.union_all(np.where(overlaps[look], hulls, None), axis=1)
        covered = np.nan_to_num(np.asarray(shapely.area(shapely.intersection(mine[look], union)), float))
        below[look] = covered / area[look] < max_hidden
    out = []
    for s, e, first in zip(starts, ends, firsts):
        passed = np.flatnonzero(below[s:first])
        out.append(int(passed[0]) if len(passed) else (first - s if first < e else None))
    return out
