"""The project's module structure, read with `ast` (function-local imports counted; imports under `if
TYPE_CHECKING:` are not, as they never run):

- no import cycle among the project's modules (an import of `a.b.c` runs `a/__init__` and `a/b/__init__` first, so
  those count too);
- a function-local import of the project's own modules only where it defers a heavy dependency (`HEAVY`: pyspark,
  pyiceberg, the CDK, and what the Lambdas' layers lack; the imported module pulls one in when it is imported), with
  its reason in a comment;
- each target's modules under its folder (`sink_engine/target/<target>/`): the contract's implementations live
  there, and the rest of the engine reaches a target's modules only through the entry points listed here;
- capabilities are consulted, not probed: no ConfigError caught around a target's methods, and no target method
  but `validate` raises one (what a target cannot do is declared in its `capabilities`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGES = ("sink_engine", "lambdas", "infra", "devtools")
LOCAL_IMPORT_RULE = ("sink_engine", "lambdas", "infra")  # devtools' benchmarks import what each command needs
# Third-party packages worth deferring, with why: a module that pulls one in is imported where it is needed.
HEAVY = {
    "pyspark": "the driver's Spark session, seconds to start",
    "pyiceberg": "IcebergFormat's steps only",
    "aws_cdk": "synthesis only",
    "constructs": "synthesis only (the CDK's)",
    "pyarrow": "not in the Lambdas' layers (the DLQ replay Lambda ships sink_engine without it)",
    "fastavro": "not in the Lambdas' layers",
    "google": "Protobuf's runtime: not in the Lambdas' layers, loaded for the topics that use it",
    "ptars": "Protobuf's runtime: not in the Lambdas' layers, loaded for the topics that use it",
}
TARGETS = ROOT / "sink_engine" / "target"

# The contract's parts (sink_engine/target/contract.py, sink_engine/task/output.py, task/record_writer.py): their
# implementations are a target's modules.
CONTRACT = {"Target", "ContinuousTarget", "VerifiedTarget", "RangeOutput", "StreamOutput", "RecordWriter"}
CONTRACT |= {"StreamCommits", "CommitCoordinator"}
CONTRACT_MODULES = {"sink_engine.target.contract", "sink_engine.task.output", "sink_engine.task.record_writer"}

# Modules outside a target's folder that import one of its modules, with why.
ENTRY_POINTS = {
    ("sink_engine.target.choice", "sink_engine.target.iceberg_tables.target"): "the one place a target is chosen",
    ("sink_engine.target.choice", "sink_engine.target.s3_objects.target"): "the one place a target is chosen",
    ("sink_engine.cli", "sink_engine.target.iceberg_tables.cli"): "`sink-engine iceberg maintain`",
    ("sink_engine.cli", "sink_engine.target.s3_objects.verify.read"): "`sink-engine read` of stored objects",
}
# restore reads what the S3 objects target wrote, as verify lists it; synthesis declares what a target's runs use
ENTRY_PREFIXES = {
    ("sink_engine.restore.", "sink_engine.target.s3_objects.verify."),
    ("sink_engine.restore.", "sink_engine.target.s3_objects.naming"),
    ("infra.", "sink_engine.target.iceberg_tables.settings"),
    ("infra.", "sink_engine.target.iceberg_tables.stream_commit"),
    ("infra.", "sink_engine.target.s3_objects."),
    ("devtools.", "sink_engine.target."),
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported project module
    line: int
    local: bool  # inside a function
    commented: bool  # a comment on its line or the line above


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def resolved(name: str) -> str | None:
    """The project module `name` imports (a name inside a module resolves to the module)."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.AST, local: bool = False):
    """Every import statement that runs, with whether it is inside a function."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            nodes: list[ast.AST] = list(node.orelse)
        else:
            nodes = [node]
        for child in nodes:
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, local
            else:
                yield from _statements(child, local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))


def _names(statement: ast.Import | ast.ImportFrom, module: str, path: Path) -> list[str]:
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    base = statement.module or ""
    if statement.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[: len(package) - statement.level + 1] + ([base] if base else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base for alias in statement.names]


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    path = modules()[module]
    text = path.read_text()
    lines = text.splitlines()
    found = []
    for statement, local in _statements(ast.parse(text)):
        line = statement.lineno
        commented = "#" in lines[line - 1] or lines[line - 2].strip().startswith("#")
        for name in _names(statement, module, path):
            target = resolved(name)
            if target is not None and target != module:
                found.append(Import(module, target, line, local, commented))
    return tuple(found)


@cache
def third_party_of(module: str) -> frozenset[str]:
    """The top-level packages outside the project that `module` imports when it is imported."""
    tree = ast.parse(modules()[module].read_text())
    roots = set()
    for statement, local in _statements(tree):
        if local:
            continue
        if isinstance(statement, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in statement.names}
        elif statement.module and not statement.level:
            roots.add(statement.module.split(".")[0])
    return frozenset(roots - set(PACKAGES))


def graph() -> dict[str, set[str]]:
    """module -> the project modules importing it runs (its imports' parent packages too)."""
    edges: dict[str, set[str]] = {module: set() for module in modules()}
    for module in modules():
        for found in imports_of(module):
            parts = found.target.split(".")
            for end in range(1, len(parts) + 1):
                name = ".".join(parts[:end])
                if name in modules() and name != module and not module.startswith(name + "."):
                    edges[module].add(name)
    return edges


@cache
def heavy(module: str) -> bool:
    """Whether importing `module` imports pyspark, pyiceberg or the CDK."""
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if third_party_of(name) & set(HEAVY):
            return True
        todo += [found.target for found in imports_of(name) if not found.local]
    return False


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_no_import_cycle_among_the_projects_modules_counting_function_local_imports():
    found = cycles(graph())
    assert not found, "import cycles (module -> the modules of its cycle it imports, with lines):\n" + "\n".join(
        f"{module}: "
        + ", ".join(f"{i.target}:{i.line}" for i in imports_of(module) if any(i.target == m for m in cycle))
        for cycle in found
        for module in cycle
    )


def test_the_cycle_check_finds_a_cycle_through_a_function_local_import():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_folder_of_the_engines_modules_is_a_package():
    # (a folder without __init__.py is a namespace package, which setuptools' package discovery leaves out of the
    # engine's wheel: pyproject.toml's packages.find)
    folders = {path.parent for module, path in modules().items() if module.startswith("sink_engine.")}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists()) == []


def test_function_local_imports_of_the_project_only_defer_a_heavy_dependency_with_a_reason():
    offenders = [
        f"{found.source}:{found.line} imports {found.target}"
        + ("" if heavy(found.target) else f" (which pulls in none of {', '.join(HEAVY)})")
        + ("" if found.commented else " (no comment giving the reason)")
        for module in modules()
        if module.startswith(LOCAL_IMPORT_RULE)
        for found in imports_of(module)
        if found.local and not (heavy(found.target) and found.commented)
    ]
    assert not offenders, "\n".join(offenders)


def test_the_lambdas_import_no_heavy_dependency():
    # given each Lambda's handler and what importing it imports (its layers hold none of HEAVY)
    handlers = [module for module in modules() if module.startswith("lambdas.") and module.endswith(".handler")]
    assert handlers
    # then none of them pulls one in
    assert [module for module in handlers if heavy(module)] == []


def _classes(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            yield node, {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}


def test_the_contracts_implementations_sit_in_a_targets_folder():
    outside = [
        f"{module}: class {node.name}({', '.join(sorted(bases & CONTRACT))})"
        for module, path in modules().items()
        if module.startswith("sink_engine.")
        and module not in CONTRACT_MODULES
        and not (path.is_relative_to(TARGETS) and path.parent != TARGETS)
        for node, bases in _classes(path)
        if bases & CONTRACT
    ]
    assert not outside, "implementations of the target contract outside sink_engine/target/<target>/:\n" + "\n".join(
        outside
    )


def _folder(module: str) -> str | None:
    """The target folder a module of sink_engine/target/<target>/ belongs to."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["sink_engine", "target"] and len(parts) > 3 else None


def test_the_rest_reaches_a_targets_modules_only_through_its_entry_points():
    reached = sorted(
        f"{found.source}:{found.line} imports {found.target}"
        for module in modules()
        for found in imports_of(module)
        if (folder := _folder(found.target)) is not None
        and _folder(module) != folder
        and (module, found.target) not in ENTRY_POINTS
        and not any(module.startswith(a) and found.target.startswith(b) for a, b in ENTRY_PREFIXES)
    )
    assert not reached, "\n".join(reached)


TARGET_METHODS = {"verify", "stream_output", "stream_commits", "stream_coordinator", "check_continuous"}


def _caught(handler: ast.ExceptHandler) -> set[str]:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {k.id if isinstance(k, ast.Name) else getattr(k, "attr", "") for k in kinds if k is not None}


def test_no_config_error_is_caught_around_a_targets_methods():
    probes = []
    for module, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Try) or not any("ConfigError" in _caught(h) for h in node.handlers):
                continue
            calls = {
                call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
                for statement in node.body
                for call in ast.walk(statement)
                if isinstance(call, ast.Call)
            }
            if calls & TARGET_METHODS:
                probes.append(f"{module}:{node.lineno} catches ConfigError from {sorted(calls & TARGET_METHODS)}")
    assert not probes, "consult the target's capabilities instead:\n" + "\n".join(probes)


def test_no_target_method_but_validate_raises_a_config_error():
    raising = [
        f"{module_name(path)}: {cls.name}.{method.name}"
        for path in TARGETS.rglob("*.py")
        for cls, bases in _classes(path)
        if bases & {"Target", "ContinuousTarget", "VerifiedTarget"}
        for method in cls.body
        if isinstance(method, ast.FunctionDef) and method.name != "validate"
        for raised in ast.walk(method)
        if isinstance(raised, ast.Raise)
        and isinstance(raised.exc, ast.Call)
        and getattr(raised.exc.func, "id", None) == "ConfigError"
    ]
    assert not raising, "declare it in the target's capabilities:\n" + "\n".join(raising)
