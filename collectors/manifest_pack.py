"""manifest.json's `nodes` and `ranks` stored with what they share once (#27 §5).

At 128 nodes x 8 GPUs every node's facts (GPU model, driver, links, topology, HCAs, environment,
container, scheduler) repeat nearly whole, and the ranks of one local rank differ only in their
node, host and GPU UUID: a synthetic manifest was 1.8 MB. When a run has several nodes, each of
the two maps is written in place as

    node_facts / rank_facts: {"shared": {group: facts},
                              "differ": {key: {JSON pointer (RFC 6901): that entry's own value}}}

An entry is its group's shared facts with its pointers' values put in (pointer "": the entry
whole, when its shape differs). Nodes form one group; ranks one per local rank, named in each
rank's entry under "@". A fact that only some entries share is the most common value, the rest
their own. read_manifest (manifest.py) gives both maps back whole: exactly, key order and types
too (1 is not true). Manifests of one node, and those written before v4, keep them whole.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

PACKED = {"nodes": "node_facts", "ranks": "rank_facts"}
"""A map of the manifest -> the key it is written under when packed."""
GROUP = "@"
"""In a packed entry: the group whose shared facts it starts from (never a JSON pointer)."""


def shape(value: Any) -> tuple[Any, ...]:
    """A dict's keys in order, a list's length, or a leaf: what must match to compare inside."""
    if isinstance(value, dict):
        return ("dict", *value)
    return ("list", len(value)) if isinstance(value, list) else ("leaf",)


def shared_facts(values: list[Any]) -> Any:
    """What the entries' facts have alike: among the values of the most common shape, dicts key
    by key and lists item by item, a leaf the most common value (the first of a tie). A value of
    another shape (a node with an extra key, a GPU fewer) then differs whole."""
    common = Counter(shape(v) for v in values).most_common(1)[0][0]
    alike = [v for v in values if shape(v) == common]
    first = alike[0]
    if isinstance(first, dict):
        return {key: shared_facts([v[key] for v in alike]) for key in first}
    if isinstance(first, list):
        return [shared_facts([v[i] for v in alike]) for i in range(len(first))]
    counted = Counter((type(v), v) for v in alike)  # True == 1, but not the same fact
    return counted.most_common(1)[0][0][1]


def fact_differences(shared: Any, value: Any, pointer: str = "") -> dict[str, Any]:
    """{JSON pointer: value} where `value` is not `shared` (the smallest parts that differ)."""
    if shape(shared) != shape(value):
        return {pointer: value}
    if isinstance(shared, dict):
        found: dict[str, Any] = {}
        for key in shared:
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            found |= fact_differences(shared[key], value[key], f"{pointer}/{escaped}")
        return found
    if isinstance(shared, list):
        found = {}
        for index, (a, b) in enumerate(zip(shared, value, strict=True)):
            found |= fact_differences(a, b, f"{pointer}/{index}")
        return found
    same = type(shared) is type(value) and shared == value  # True == 1, but not the same fact
    return {} if same else {pointer: value}


def with_differences(shared: str, differ: Mapping[str, Any]) -> Any:
    """The shared facts (`shared`: as JSON text, parsed afresh for each entry: no two entries
    share an object) with each pointer's value put in: one entry's facts whole."""
    facts = json.loads(shared)
    for pointer, value in differ.items():
        if pointer == "":
            facts = copy.deepcopy(value)
            continue
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]
        ]
        target = facts
        for part in parents:
            target = target[int(part) if isinstance(target, list) else part]
        target[int(last) if isinstance(target, list) else last] = copy.deepcopy(value)
    return facts


def group_of(name: str, facts: Any) -> str:
    """Nodes: one group; ranks: one per local rank (its GPU, CPUs and NUMA node alike)."""
    if name == "ranks" and isinstance(facts, dict):
        return str(facts.get("local_rank", ""))
    return ""


def pack(name: str, entries: dict[str, Any]) -> dict[str, Any]:
    """One map (`nodes` or `ranks`) as {"shared", "differ"} (module docstring)."""
    groups: dict[str, list[Any]] = {}
    for facts in entries.values():
        groups.setdefault(group_of(name, facts), []).append(facts)
    shared = {group: shared_facts(values) for group, values in groups.items()}
    differ = {}
    for key, facts in entries.items():
        group = group_of(name, facts)
        own = fact_differences(shared[group], facts)
        differ[key] = own if len(shared) == 1 else {GROUP: group, **own}
    return {"shared": shared, "differ": differ}


def unpack(packed: Mapping[str, Any]) -> dict[str, Any]:
    """pack's result back into the map, each entry whole."""
    texts = {group: json.dumps(facts) for group, facts in packed["shared"].items()}
    only = next(iter(texts)) if len(texts) == 1 else None
    entries = {}
    for key, own in packed["differ"].items():
        pointers = {p: v for p, v in own.items() if p != GROUP}
        entries[key] = with_differences(texts[own.get(GROUP, only)], pointers)
    return entries


def pack_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as written: with several nodes, `nodes` and `ranks` packed in place."""
    nodes = manifest.get("nodes")
    if not isinstance(nodes, dict) or len(nodes) < 2:
        return manifest
    return {
        (PACKED[k] if is_map(k, v) else k): (pack(k, v) if is_map(k, v) else v)
        for k, v in manifest.items()
    }


def unpack_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as read: packed maps back whole, in place (the errors of a damaged one
    are KeyError, IndexError, TypeError, ValueError or AttributeError: read_manifest says so)."""
    names = {stored: name for name, stored in PACKED.items()}
    if not any(stored in manifest for stored in names):
        return manifest
    return {names.get(k, k): (unpack(v) if k in names else v) for k, v in manifest.items()}


def is_map(key: str, value: Any) -> bool:
    return key in PACKED and isinstance(value, dict) and len(value) >= 2
