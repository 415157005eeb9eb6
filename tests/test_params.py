"""Rule parameters: every name, type and range is checked before any annotation file is read."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from hdvqa.engine.params import build_params, param_help
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError

WITH_PARAMS = [name for name in sorted(available()) if load_prototype_class(name).Params is not None]


def bounded_fields():
    """(prototype, field, a value just outside the field's declared range)."""
    for name in WITH_PARAMS:
        cls = load_prototype_class(name)
        hints = typing.get_type_hints(cls.Params)
        for f in dataclasses.fields(cls.Params):
            low, high = f.metadata.get("low"), f.metadata.get("high")
            kind = hints[f.name]
            for bound, is_open, step in ((low, f.metadata.get("low_open"), -1), (high, f.metadata.get("high_open"), 1)):
                if bound is None:
                    continue
                bad = bound if is_open else bound + step * (1 if typing.get_origin(kind) is None and kind is int else 0.5)
                if typing.get_origin(kind) is tuple:
                    default = getattr(cls.Params(), f.name)
                    bad = (bad, default[1]) if step < 0 else (default[0], bad)
                yield name, f.name, bad


@pytest.mark.parametrize("prototype, field, value", list(bounded_fields()))
def test_a_value_outside_its_range_names_the_range(prototype, field, value):
    cls = load_prototype_class(prototype)
    with pytest.raises(ConfigError, match=rf"prototype {prototype}: parameter {field}=.* is out of range; valid: "):
        build_params(prototype, cls.Params, {field: value})


def test_every_prototype_declares_ranges_for_its_numbers():
    # A number without a declared range would accept a negative count or padding silently.
    for name in WITH_PARAMS:
        cls = load_prototype_class(name)
        hints = typing.get_type_hints(cls.Params)
        for f in dataclasses.fields(cls.Params):
            if hints[f.name] in (int, float) or typing.get_origin(hints[f.name]) is tuple:
                assert f.metadata.get("low") is not None, f"{name}.{f.name} has no range"


@pytest.mark.parametrize("name", WITH_PARAMS)
def test_defaults_pass_their_own_checks(name):
    cls = load_prototype_class(name)
    defaults = {f.name: getattr(cls.Params(), f.name) for f in dataclasses.fields(cls.Params)}
    assert build_params(name, cls.Params, defaults) == cls.Params()


@pytest.mark.parametrize(
    "prototype, values, message",
    [
        ("ingredient_weight", {"pad": -1}, "parameter pad=-1.0 is out of range; valid: pad >= 0"),
        ("ingredient_weight", {"multiplier_low": 6.0}, r"multiplier_low \(6.0\) must be below multiplier_high \(5.0\)"),
        ("exact_ingredient_recognition", {"multiplier_low": 2, "multiplier_high": 1}, "must be below multiplier_high"),
        ("ingredients_order", {"min_ingredients": 6}, r"min_ingredients \(6\) exceeds max_ingredients \(5\)"),
        ("nutrition_change", {"low": [0.7, 0.5]}, "its low end must be below its high end"),
        ("nutrition_change", {"low": [0.5]}, "parameter low must be a list of 2 numbers"),
        ("nutrition_change", {"high": [0.5, 1.5]}, r"valid: high >= 1"),
        ("multi_step_localization", {"n_steps": 2.5}, "parameter n_steps must be an integer, got 2.5"),
        ("step_localization", {"min_steps": True}, "parameter min_steps must be an integer, got True"),
        ("recipe_recognition", {"exclude_frequent_recipes": "maybe"}, "must be true or false, got 'maybe'"),
        ("ingredient_retrieval", {"pad": float("nan")}, "parameter pad must be a number"),
        ("ingredient_weight", {"padding": 1}, r"unknown parameter 'padding'; valid parameters: .*pad \(a number, pad >= 0\)"),
        ("exact_ingredient_recognition", {"exclude_ingredients": [1]}, "must be a list of strings"),
    ],
)
def test_bad_values_are_named_with_what_is_valid(prototype, values, message):
    cls = load_prototype_class(prototype)
    with pytest.raises(ConfigError, match=message):
        build_params(prototype, cls.Params, values)


def test_whole_numbers_are_accepted_for_floats():
    cls = load_prototype_class("ingredient_weight")
    assert build_params("ingredient_weight", cls.Params, {"pad": 3}).pad == 3.0


def test_help_lists_type_and_range():
    cls = load_prototype_class("image_nutrition_estimation")
    assert param_help(cls.Params)[0] == "min_gap (a number, 0 <= min_gap < 1)"
    assert "negatives (a string, one of debiased, paper)" in param_help(cls.Params)


def test_a_runs_identity_records_only_the_parameters_set_off_their_defaults():
    from hdvqa.engine.params import param, rule_params, set_params
    from hdvqa.prototypes.recipe.multi_step_localization import MultiStepLocalization

    @rule_params
    class Params:
        k: int = param(3, low=1)
        names: list = dataclasses.field(default_factory=lambda: ["a"])

    assert set_params(Params()) == {} and set_params(Params(k=4, names=["b"])) == {"k": 4, "names": ["b"]}
    # a bound added for another dataset keeps every HD-EPIC key: its default is not part of them
    assert set_params(MultiStepLocalization.Params()) == {}
    assert set_params(MultiStepLocalization.Params(orders_per_recipe=12, negatives="paper")) == {
        "orders_per_recipe": 12, "negatives": "paper"}
