"""The question prototypes shipped with hdvqa, one module (and template) each, by category.

Installed as ``hdvqa.prototypes``; each is registered in setup.cfg's ``hdvqa.prototypes``
entry-point group, the same way a third-party package adds its own.
"""
