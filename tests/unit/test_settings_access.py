"""The config is read by key only where settings are built: a `config["<key>"]` lookup or a `config.text(key)`,
`config.optional_text(key)` call (on a name or attribute called `config`, or its `.values`) anywhere else in
sink_engine/, lambdas/, infra/ or devtools/ fails this test, naming the file, line and lookup. Code that acts on a
key reads it through its seam's settings object (a frozen
dataclass built once by `from_config`: docs/development/layout.md, "Reading the config").

Where a lookup belongs:
- a `settings.py` module (each seam's settings and the helpers that build them);
- a function named `from_config` (a settings object's builder, wherever its class lives), and what it nests;
- sink_engine/config/ (parsing, defaults and the checks that need nothing above it);
- the validation checks in ALLOWED_FUNCTIONS: they take key names from a table (the credential pairs, the keys
  EnvelopeFormat refuses, the S3-object settings a table refuses) and judge each key as a key (set or not, with its
  name in the error), which no seam's
  settings object holds by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("sink_engine", "lambdas", "infra", "devtools")
BUILDERS = "from_config"
TEXT_READERS = ("text", "optional_text")  # SinkConfig's readers of a key named at run time
ALLOWED_DIRECTORIES = ("sink_engine/config/",)
ALLOWED_FUNCTIONS = {
    "sink_engine/validation.py": {"_check_connection", "_check_envelope"},
    "sink_engine/target/iceberg_tables/target.py": {"_refuse_object_settings"},
}


def _is_config(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "values":
        node = node.value
    return (isinstance(node, ast.Name) and node.id == "config") or (
        isinstance(node, ast.Attribute) and node.attr == "config"
    )


def lookups(source: str, allowed_functions: frozenset[str] = frozenset()) -> list[tuple[int, str]]:
    """(line, lookup) of every config lookup in `source` outside a `from_config` and `allowed_functions`."""

    def walk(node: ast.AST):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                child.name == BUILDERS or child.name in allowed_functions
            ):
                continue
            if isinstance(child, ast.Subscript) and _is_config(child.value) and isinstance(child.ctx, ast.Load):
                yield child.lineno, ast.unparse(child)
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in TEXT_READERS
                and _is_config(child.func.value)
            ):
                yield child.lineno, ast.unparse(child)
            yield from walk(child)

    return list(walk(ast.parse(source)))


def _checked_files() -> list[Path]:
    files = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if path.name == "settings.py" or name.startswith(ALLOWED_DIRECTORIES):
                continue
            files.append(path)
    return files


def test_the_config_is_read_by_key_only_where_settings_are_built():
    # given every module of the code but the places where settings are built
    found = []
    for path in _checked_files():
        name = path.relative_to(ROOT).as_posix()
        allowed = frozenset(ALLOWED_FUNCTIONS.get(name, ()))
        found += [f"{name}:{line}: {text}" for line, text in lookups(path.read_text(encoding="utf-8"), allowed)]
    # then none reads a key from the config itself
    assert found == [], (
        "config lookups outside the settings builders; read these keys through the seam's settings "
        "(its `from_config`):\n" + "\n".join(found)
    )


def test_the_allowed_places_still_exist():
    # the exceptions name real files and functions: a renamed one would otherwise leave its place unchecked
    for name, functions in ALLOWED_FUNCTIONS.items():
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        assert functions <= defined, f"{name} no longer defines {sorted(functions - defined)}"
    for prefix in ALLOWED_DIRECTORIES:
        assert (ROOT / prefix).exists(), f"{prefix} is gone: remove it from the exceptions"


@pytest.mark.parametrize(
    "source, expected",
    [
        ('def run(config):\n    return config["tasks.max"]\n', [(2, "config['tasks.max']")]),
        ("def probe(context):\n    return context.config['s3.region']\n", [(2, "context.config['s3.region']")]),
        ("def f(self):\n    return self.config.values[KEY]\n", [(2, "self.config.values[KEY]")]),
        ('def f(config, key):\n    return f"{config[key]}"\n', [(2, "config[key]")]),
        (
            "class S:\n    @classmethod\n    def from_config(cls, config):\n        return cls(config['name'])\n",
            [],
        ),
        ("def f(config, key):\n    return config.optional_text(key)\n", [(2, "config.optional_text(key)")]),
        ("def f(options):\n    return options['config']\n", []),
    ],
)
def test_the_scan_finds_lookups_on_the_config_and_nothing_else(source, expected):
    assert lookups(source) == expected


def test_an_allowed_function_is_left_out_by_name():
    source = "def _check_connection(config):\n    return config['a']\n\ndef other(config):\n    return config['b']\n"
    assert lookups(source, frozenset({"_check_connection"})) == [(5, "config['b']")]
