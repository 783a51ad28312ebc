"""What `pip install .` gives: pyproject.toml's dependencies (requirements.txt) and extras cover every library the
engine imports, and `sink-engine --version` names the package's version."""

import ast
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import sink_engine
from sink_engine.cli import main, package_version

ROOT = Path(__file__).resolve().parents[2]


def declared() -> tuple[set[str], set[str]]:
    """The distributions pyproject.toml declares: its dependencies, and those of its extras, read from the
    requirement files its [tool.setuptools.dynamic] names, as setuptools reads them."""
    dynamic = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["dynamic"]

    def names(files: list[str]) -> set[str]:
        lines = [line for f in files for line in (ROOT / f).read_text().splitlines()]
        return {
            canonicalize_name(Requirement(line).name)
            for line in lines
            if line.strip() and not line.strip().startswith("#")
        }

    extras = set().union(*(names(spec["file"]) for spec in dynamic["optional-dependencies"].values()))
    return names(dynamic["dependencies"]["file"]), extras


def _type_checking_only(node: ast.AST) -> bool:
    """An `if TYPE_CHECKING:` block (annotations' imports, e.g. pyspark's types in modules that load without it)."""
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imported() -> tuple[set[str], set[str]]:
    """The top-level third-party modules sink_engine imports when its modules load, and those it imports inside
    functions (when a command needs them); `if TYPE_CHECKING:` imports are neither."""
    at_load, in_functions = set(), set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                continue  # read by mypy, never imported at run time
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                modules = (
                    [a.name for a in child.names]
                    if isinstance(child, ast.Import)
                    else [child.module]
                    if child.level == 0 and child.module
                    else []
                )
                (in_functions if in_function else at_load).update(m.split(".")[0] for m in modules)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    for path in (ROOT / "sink_engine").rglob("*.py"):
        visit(ast.parse(path.read_text()), False)

    def third_party(modules: set[str]) -> set[str]:
        return {m for m in modules if m not in sys.stdlib_module_names and m != "sink_engine"}

    return third_party(at_load), third_party(in_functions - at_load)


def distributions(module: str) -> set[str]:
    found = metadata.packages_distributions().get(module)
    assert found, f"{module} is imported by sink_engine but no installed distribution provides it"
    return {canonicalize_name(d) for d in found}


def test_the_dependencies_cover_every_library_the_engine_imports_as_it_loads():
    dependencies, _ = declared()
    at_load, _ = imported()
    assert {"pyarrow", "confluent_kafka", "boto3", "botocore", "orjson"} <= at_load  # the scan sees them
    missing = {m for m in at_load if not distributions(m) & dependencies}
    assert not missing, f"imported at load but not in requirements.txt (pyproject's dependencies): {sorted(missing)}"


def test_the_libraries_a_command_imports_later_are_dependencies_or_extras():
    dependencies, extras = declared()
    _, later = imported()
    assert "pyspark" in later
    missing = {m for m in later if not distributions(m) & (dependencies | extras)}
    assert not missing, f"imported by a function but declared nowhere: {sorted(missing)}"


def test_the_extras_hold_the_optional_readers_and_spark():
    _, extras = declared()
    assert {"polars", "ptars", "pyspark"} <= extras


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"sink-engine {package_version()}\n"
    assert package_version() in (sink_engine.__version__, metadata.version("sink-engine"))


def test_version_falls_back_to_the_source_without_package_metadata(monkeypatch):
    # given no installed metadata (the EMR job archive copies sink_engine/ alone)
    def absent(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", absent)
    # then the version is the source's
    assert package_version() == sink_engine.__version__
