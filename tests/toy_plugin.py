"""A stand-in third-party prototype, loaded through an entry point in test_registry."""

from hdvqa.engine import Prototype


class ToyPrototype(Prototype):
    name = "toy"
    category = "test"
