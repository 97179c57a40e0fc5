"""One lazy-export declaration per package: the ``if TYPE_CHECKING:`` block is read once for ``__getattr__``,
``__dir__`` and ``__all__``, so the three cannot disagree and every declared name resolves."""

from __future__ import annotations

import importlib

import pytest

from stableval._lazy import declared_exports


def test_every_public_name_resolves() -> None:
    import stableval

    for name in stableval.__all__:
        assert getattr(stableval, name) is not None
    with pytest.raises(AttributeError):
        _ = stableval.no_such_name  # type: ignore[attr-defined]


PACKAGES = ("stableval", "stableval.aggregate", "stableval.data", "stableval.data.files", "stableval.datasets",
            "stableval.evaluate")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves_to_its_declared_home(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__ == sorted(dir(package))
    assert len(package.__all__) > 5
    home = declared_exports(open(package.__file__, encoding="utf-8").read())
    for public in package.__all__:
        value = getattr(package, public)
        if public in home and hasattr(value, "__module__") and not isinstance(value, dict | tuple | list):
            assert value.__module__.startswith(home[public]), (public, value.__module__, home[public])


def test_an_undeclared_name_is_an_attribute_error() -> None:
    import stableval.data

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        stableval.data.nope  # noqa: B018


def test_only_type_checking_imports_are_declared() -> None:
    source = ("import os\nfrom a import b\nif TYPE_CHECKING:\n    from c.d import e as e\n"
              "if other:\n    from f import g\n")
    assert declared_exports(source) == {"e": "c.d"}
