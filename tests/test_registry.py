"""Plugins found by name; duplicates and unknown names are errors that list the choices."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError


def ep(name, value):
    return EntryPoint(name=name, value=value, group="hdvqa.prototypes")


def test_shipped_prototypes_are_registered():
    names = set(available())
    assert {"recipe_recognition", "step_localization", "following_activity_recognition"} <= names


def test_third_party_entry_point_loads():
    eps = [ep("toy", "tests.toy_plugin:ToyPrototype")]
    cls = load_prototype_class("toy", eps)
    assert cls.name == "toy"


def test_duplicate_names_are_an_error():
    eps = [ep("dup", "a.b:C"), ep("dup", "x.y:Z")]
    with pytest.raises(ConfigError, match="registered twice"):
        available(eps)


def test_unknown_name_lists_available():
    with pytest.raises(ConfigError, match="unknown prototype 'zzz'; available: .*recipe_recognition"):
        load_prototype_class("zzz")


def test_entry_point_name_must_match_class():
    eps = [ep("other", "tests.toy_plugin:ToyPrototype")]
    with pytest.raises(ConfigError, match="names must agree"):
        load_prototype_class("other", eps)
