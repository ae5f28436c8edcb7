#!/usr/bin/env python3
"""Checks the direction of the imports inside each layer crate.

Between crates, cargo already refuses a cycle and a layer that reaches upward (each layer is a
crate: domain, store, core, http; docs/layout.md). Inside a crate it does not, so this reads
every `crate::<module>` path of each crate's sources (a `use` or an inline path, grouped imports
included; comments left out) and fails

- with the cycle when two top-level modules reach each other, directly or around a longer loop;
- with the import when a module reaches one that docs/layout.md says it never imports
  (`RULES` below: the table's rules, written as data).

It also prints the import circles between the files of the folders in `FILE_CYCLE_FOLDERS` (a
file reaching a sibling, a parent's item or a child through `crate::`, `super::`, `self::` or a
child module's name; an item a `mod.rs` re-exports counts as its defining file's). They fail the
check only when `FILE_CYCLES_FAIL` is true.

    infra/check-layers.py            # exit 1 and the cycles or forbidden imports, if any
    infra/check-layers.py --graph    # the edges too
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = [
    "shared/domain",
    "shared/store",
    "shared/store-conformance",
    "shared/core",
    "shared/adapters",
    "shared/http",
]

# docs/layout.md's rules as data: per crate, a top-level module's `never` (modules it must not
# import) or `only` (the modules it may import, nothing else).
RULES: dict[str, dict[str, dict[str, set[str]]]] = {
    "shared/core": {
        "auth": {"never": {"grants", "flows"}},
        "issuance": {"never": {"grants", "flows"}},
        "client_documents": {"never": {"grants", "flows"}},
        "federation": {"never": {"grants", "flows"}},
        "grants": {"never": {"flows"}},
        "flows": {"never": {"grants"}},
        "requests": {"only": {"errors"}},
    },
}

# Folders whose file-to-file circles are printed: (crate, folder under its src).
FILE_CYCLE_FOLDERS = [("shared/core", "flows")]
FILE_CYCLES_FAIL = True

LINE_COMMENT = re.compile(r"//.*")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
GROUPED = re.compile(r"\bcrate::\{([^;]*?)\}", re.S)
SINGLE = re.compile(r"\bcrate::(\w+)")
USE = re.compile(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);")
PATH_ATTRIBUTE = re.compile(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;')
MOD_DECLARATION = re.compile(r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
CHAR = re.compile(r"'(?:[^'\\]|\\.)'")
INLINE_MODULE = re.compile(r"\bmod\s+(\w+)\s*\{")
INLINE_PATH = re.compile(r"(?<![\w:])((?:crate|super|self|\w+)(?:::\w+)+)")


def strip_comments(text: str) -> str:
    return LINE_COMMENT.sub("", BLOCK_COMMENT.sub("", text))


def top_module(src: Path, path: Path) -> str:
    first = path.relative_to(src).parts[0]
    return first[:-3] if first.endswith(".rs") else first


def referenced_modules(text: str) -> set[str]:
    text = strip_comments(text)
    names = set(SINGLE.findall(text))
    for group in GROUPED.findall(text):
        for item in split_top_level(group):
            head = re.match(r"(\w+)", item)
            if head and head.group(1) != "self":
                names.add(head.group(1))
    return names


def split_top_level(group: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, ch in enumerate(group + ","):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            item = group[start:i].strip()
            start = i + 1
            if item:
                items.append(item)
    return items


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
    """Strongly connected components of more than one node (Tarjan)."""
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


def forbidden_imports(crate: str, graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module, rule in sorted(RULES.get(crate, {}).items()):
        reached = graph.get(module, set())
        bad = reached & rule.get("never", set())
        if "only" in rule:
            bad |= reached - rule["only"]
        for target in sorted(bad):
            found.append(f"{crate}: {module} imports {target}, which docs/layout.md forbids")
    return found


# --- file-level circles -------------------------------------------------------------------------

Module = tuple[str, ...]


def file_modules(src: Path) -> dict[Module, Path]:
    """Each source file's module path, `#[path]` test files under the module declaring them."""
    modules: dict[Module, Path] = {}
    by_path: dict[Path, Module] = {}
    for path in sorted(src.rglob("*.rs")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib"):
            parts.pop()
        by_path[path] = tuple(parts)
    for path, module in list(by_path.items()):
        for target, name in PATH_ATTRIBUTE.findall(path.read_text()):
            declared = (path.parent / target).resolve()
            for other in by_path:
                if other.resolve() == declared:
                    by_path[other] = module + (name,)
    for path, module in by_path.items():
        modules[module] = path
    return modules


def _expand(text: str, prefix: list[str] | None = None) -> list[tuple[list[str], str]]:
    prefix = prefix or []
    text = re.sub(r"\s+", "", text)
    brace = text.find("{")
    if brace != -1 and text.endswith("}"):
        head = [p for p in text[:brace].split("::") if p]
        found = []
        for item in split_top_level(text[brace + 1 : -1]):
            found.extend(_expand(item, prefix + head))
        return found
    path, _, alias = text.partition("@as@")
    segments = prefix + [p for p in path.split("::") if p]
    if segments and segments[-1] == "self":
        segments.pop()
    bound = alias or (segments[-1] if segments else "")
    return [(segments, bound)]


def inline_modules(module: Module, text: str) -> list[tuple[Module, str]]:
    """The file's own text and each inline `mod name { .. }` apart, under its own module path,
    so that a test module's `super::` names its file."""
    pieces: list[tuple[Module, str]] = []
    outer, position = [], 0
    for match in INLINE_MODULE.finditer(text):
        if match.start() < position:
            continue
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(text)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    break
        outer.append(text[position : match.start()])
        pieces += inline_modules(module + (match.group(1),), text[match.end() : end])
        position = end + 1
    outer.append(text[position:])
    return [(module, "".join(outer))] + pieces


class FileGraph:
    def __init__(self, src: Path):
        self.modules = file_modules(src)
        self.texts = {
            m: strip_comments(CHAR.sub("' '", STRING.sub('""', p.read_text())))
            for m, p in self.modules.items()
        }
        self.children = {m: set(MOD_DECLARATION.findall(t)) for m, t in self.texts.items()}
        self.reexports: dict[Module, dict[str, list[str]]] = {}
        for module, text in self.texts.items():
            names: dict[str, list[str]] = {}
            for visibility, tree in USE.findall(text):
                if not visibility:
                    continue
                for segments, bound in _expand(tree):
                    absolute = self.absolute(module, segments)
                    if absolute is not None and bound and bound != "*":
                        names[bound] = absolute
            self.reexports[module] = names

    def absolute(
        self, module: Module, segments: list[str], bound: dict[str, list[str]] | None = None
    ) -> list[str] | None:
        if not segments:
            return None
        head, rest = segments[0], segments[1:]
        if bound and head in bound:
            return bound[head] + rest
        if head == "crate":
            return rest
        if head == "self":
            return list(module) + rest
        if head == "super":
            base = list(module)
            while segments and segments[0] == "super":
                if not base:
                    return None
                base.pop()
                segments = segments[1:]
            return base + segments
        if head in self.children.get(module, set()):
            return list(module) + segments
        return None

    def resolve(self, path: list[str], depth: int = 0) -> Module | None:
        """The file defining what the absolute `path` names."""
        for cut in range(len(path), -1, -1):
            prefix = tuple(path[:cut])
            if prefix in self.modules:
                rest = path[cut:]
                if rest and depth < 8:
                    target = self.reexports.get(prefix, {}).get(rest[0])
                    if target is not None and target[: len(prefix)] != list(prefix) + rest[:1]:
                        deeper = self.resolve(target + rest[1:], depth + 1)
                        if deeper is not None:
                            return deeper
                return prefix
        return None

    def edges(self, folder: Module) -> dict[Module, set[Module]]:
        inside = {m for m in self.modules if m[: len(folder)] == folder}
        graph: dict[Module, set[Module]] = {m: set() for m in inside}
        for module in inside:
            for scope, text in inline_modules(module, self.texts[module]):
                uses = [pair for _, tree in USE.findall(text) for pair in _expand(tree)]
                bound = {}
                for segments, name in uses:
                    absolute = self.absolute(scope, segments)
                    if absolute is not None and name not in ("", "*"):
                        bound[name] = absolute
                inline = [p.split("::") for p in INLINE_PATH.findall(USE.sub("", text))]
                for segments in [segments for segments, _ in uses] + inline:
                    absolute = self.absolute(scope, segments, bound)
                    if absolute is None:
                        continue
                    target = self.resolve(absolute)
                    if target is not None and target in inside and target != module:
                        graph[module].add(target)
        return graph


def file_name(src_folder: Path, module: Module, modules: dict[Module, Path]) -> str:
    return str(modules[module].relative_to(src_folder))


def file_cycles(crate: str, folder: str, show: bool) -> list[str]:
    src = ROOT / crate / "src"
    files = FileGraph(src)
    graph = files.edges(tuple(folder.split("/")))
    keyed = {file_name(src, m, files.modules): {file_name(src, t, files.modules) for t in ts}
             for m, ts in graph.items()}
    if show:
        print(f"{crate}/src/{folder} (files):")
        for name in sorted(keyed):
            if keyed[name]:
                print(f"  {name} -> {', '.join(sorted(keyed[name]))}")
    found = []
    for component in cycles(keyed):
        edges = [f"{a} -> {b}" for a in component for b in sorted(keyed[a]) if b in component]
        found.append(f"{crate}/src: file circle {', '.join(component)}: {'; '.join(edges)}")
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
        for problem in forbidden_imports(crate, graph):
            failed = True
            print(problem)
    if not failed:
        print(
            "no import cycle between the top-level modules of "
            f"{', '.join(CRATES)}, and no import docs/layout.md forbids"
        )
    for crate, folder in FILE_CYCLE_FOLDERS:
        circles = file_cycles(crate, folder, show)
        for circle in circles:
            print(circle if FILE_CYCLES_FAIL else f"(reported, not failing) {circle}")
        failed |= FILE_CYCLES_FAIL and bool(circles)
        if not circles:
            print(f"no file circle in {crate}/src/{folder}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
