"""Object movements turned into what questions need: itineraries, static spells, steady objects
and human fixture names. Pure functions over small DataFrames (tables of hdvqa.datasets.hd_epic.objects)."""

from hdvqa.objects.fixtures import (
    POSITIONS_ESTIMATED, FixtureName, fixture_name_lookup, fixture_positions, fixture_type, is_real_fixture, name_fixtures,
)
from hdvqa.objects.itineraries import itineraries, moves, object_views, static_spells, steady_objects, track_endpoints

__all__ = [
    "POSITIONS_ESTIMATED", "FixtureName", "fixture_name_lookup", "fixture_positions", "fixture_type", "is_real_fixture",
    "itineraries", "moves", "name_fixtures", "object_views", "static_spells", "steady_objects", "track_endpoints",
]
