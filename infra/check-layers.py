#!/usr/bin/env python3
"""Refuses an import cycle between the top-level modules of a layer crate.

Between crates, cargo already refuses a cycle and a layer that reaches upward (each layer is a
crate: domain, store, core, http; docs/layout.md). Inside a crate it does not, so this reads
every `crate::<module>` path of each crate's sources (a `use` or an inline path, grouped imports
included; comments left out) and fails with the cycle when two top-level modules reach each
other, directly or around a longer loop. Also prints each crate's module graph with `--graph`.

    infra/check-layers.py            # exit 1 and the cycles, if any
    infra/check-layers.py --graph    # the edges too
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ["shared/domain", "shared/store", "shared/store-conformance", "shared/core", "shared/http"]

LINE_COMMENT = re.compile(r"//.*")
GROUPED = re.compile(r"\bcrate::\{([^;]*?)\}", re.S)
SINGLE = re.compile(r"\bcrate::(\w+)")


def top_module(src: Path, path: Path) -> str:
    first = path.relative_to(src).parts[0]
    return first[:-3] if first.endswith(".rs") else first


def referenced_modules(text: str) -> set[str]:
    text = LINE_COMMENT.sub("", text)
    names = set(SINGLE.findall(text))
    for group in GROUPED.findall(text):
        depth, start = 0, 0
        for i, ch in enumerate(group + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                item = group[start:i].strip()
                start = i + 1
                head = re.match(r"(\w+)", item)
                if head and head.group(1) != "self":
                    names.add(head.group(1))
    return names


def module_graph(crate: Path) -> dict[str, set[str]]:
    src = crate / "src"
    modules = {top_module(src, p) for p in src.rglob("*.rs")} - {"lib"}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path in src.rglob("*.rs"):
        owner = top_module(src, path)
        if owner == "lib":
            continue
        for target in referenced_modules(path.read_text()):
            if target in modules and target != owner:
                graph[owner].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> int:
    show = "--graph" in sys.argv[1:]
    failed = False
    for crate in CRATES:
        graph = module_graph(ROOT / crate)
        if show:
            print(f"{crate}:")
            for module in sorted(graph):
                print(f"  {module} -> {', '.join(sorted(graph[module])) or '-'}")
        for component in cycles(graph):
            failed = True
            edges = [
                f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component
            ]
            print(f"{crate}: import cycle between {', '.join(component)}: {'; '.join(edges)}")
    if not failed:
        print(f"no import cycle between the top-level modules of {', '.join(CRATES)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
