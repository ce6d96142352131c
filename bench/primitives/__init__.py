"""The primitives: their facts (facts.py, torch-free, what the CLI plans with) and their
implementations (registry.py: torch name -> implementation, imported with torch on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from distbench.primitives.facts import COMMANDS, FACTS, PrimitiveFacts

if TYPE_CHECKING:
    from distbench.primitives.base import Primitive

__all__ = ["COMMANDS", "FACTS", "PrimitiveFacts", "get_primitive"]


def get_primitive(name: str) -> Primitive:
    """The implementation of primitive `name` (imports torch)."""
    from distbench.primitives.registry import PRIMITIVES

    return PRIMITIVES[name]
