"""Plugins found by name; duplicates and unknown names are errors that list the choices."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


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


# --- configs from the classes (Hydra's ConfigStore) -------------------------------------------


def compose_prototype(name, *overrides):
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    GlobalHydra.instance().clear()
    with initialize_config_module(config_module="hdvqa.conf", version_base="1.3"):
        return OmegaConf.to_container(compose(config_name="config", overrides=[f"+prototype={name}", *overrides]))["prototype"]


@pytest.mark.parametrize("name", sorted(set(available())))
def test_shipped_configs_take_params_from_the_class(name):
    import dataclasses

    import yaml

    from hdvqa.engine.params import build_params
    from hdvqa.engine.registry import shipped_configs

    cls = load_prototype_class(name)
    composed = compose_prototype(name)
    if cls.Params is not None:
        assert sorted(composed["params"]) == sorted(f.name for f in dataclasses.fields(cls.Params))
        assert build_params(name, cls.Params, composed["params"]) == cls.Params()
    assert composed["name"] == name and composed["template"] is None
    if name in shipped_configs():  # the YAML says only what the class cannot: the published count
        text = yaml.safe_load((REPO / "conf" / "prototype" / f"{name}.yaml").read_text())
        assert "params" not in text and isinstance(text["n"], int) and composed["n"] == text["n"]


@pytest.fixture()
def toy_in_config_store():
    from hydra.core.config_store import ConfigStore

    from hdvqa.engine.registry import CLASS_GROUP, register_configs

    assert register_configs([ep("toy", "tests.toy_plugin:ToyPrototype")]) == ["toy"]
    yield
    repo = ConfigStore.instance().repo
    for group in ("prototype", CLASS_GROUP):
        repo[group].pop("toy.yaml", None)


def test_a_prototype_without_yaml_is_composed_from_its_class(toy_in_config_store):
    assert compose_prototype("toy") == {"name": "toy", "n": "all", "template": None, "params": {}, "sampling": None}


def test_class_n_and_params_make_the_node():
    from hdvqa.engine.registry import config_node
    from tests.toy_plugin import ToyPrototype

    class Counted(ToyPrototype):
        n = 7
        Params = load_prototype_class("ingredient_weight").Params

    node = config_node(Counted)
    assert node["n"] == 7 and node["params"].pad == 5.0
    assert config_node(ToyPrototype)["n"] == "all"


def test_unknown_name_suggests_the_near_one():
    with pytest.raises(ConfigError, match="unknown prototype 'step_localisation'; did you mean 'step_localization'"):
        load_prototype_class("step_localisation")
