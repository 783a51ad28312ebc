"""The configuration reference page, docs/reference/configuration.md, rendered from the key tables: the keys the
engine honours (sink_engine/config/keys.py: each `Key` with its type, default and `doc`; the prefixes whose keys are
passed on), the keys a connector file may carry that change nothing here, those accepted at one value only, those
refused (sink_engine/config/key_policy.py, confluent_keys.py), the look-alike keys, and Confluent Cloud's values
(sink_engine/config/cloud.py). The page is committed; tests/unit/test_config_reference.py fails when it differs from
what the tables render, and `make docs` writes it anew before building the site. Usage:
    python -m devtools.config_reference            # write the page
    python -m devtools.config_reference --check    # exit 1 when the committed page is not the tables' (CI)

`Key.doc` may hold Markdown: `code` spans, and links to docs pages by their path under docs/
(`[Schemas](schemas/index.md)`), which the page makes relative to itself. Other text is escaped.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sink_engine.config import cloud, confluent_keys, key_policy
from sink_engine.config.keys import (
    CLOUD_KEYS,
    JAVA_LONG_MAX,
    KEYS,
    NOT_BUILT_YET,
    OFF_VALUES,
    PASSTHROUGH_DOCS,
    REQUIRED,
    Key,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "configuration.md"
PAGE_DEPTH = 1  # folders between docs/ and the page: links in docs are made relative by this many `../`


@dataclass(frozen=True)
class Row:
    """One row of a key table: a declared key, or a prefix whose keys are passed on."""

    name: str  # as shown: `flush.size`, `consumer.override.*`
    default: str
    values: str
    doc: str


@dataclass(frozen=True)
class Section:
    title: str
    intro: str
    matches: Callable[[str], bool]  # by key name (a prefix row: the prefix with its trailing dot)


def _names(*names: str) -> Callable[[str], bool]:
    return lambda key: key in names


def _prefixed(*prefixes: str) -> Callable[[str], bool]:
    return lambda key: key.startswith(prefixes)


_CLOUD = {k.name for k in CLOUD_KEYS}
# The page's sections, in order; a key goes to the first that matches it, a key none matches to "Other keys".
SECTIONS: tuple[Section, ...] = (
    Section(
        "Connector and topics",
        "",
        _names("name", "connector.class", "topics", "topics.regex", "bootstrap.servers", "tasks.max"),
    ),
    Section(
        "Kafka client",
        "See [Kafka authentication](configuration/kafka-authentication.md).",
        _prefixed("consumer.override.", "security.protocol", "sasl."),
    ),
    Section(
        "S3 credentials and proxy",
        "Only the S3 client: DynamoDB and Kafka keep the job's own credentials.",
        _prefixed("aws.access.key.id", "aws.secret.access.key", "s3.credentials.", "s3.proxy."),
    ),
    Section(
        "Bucket and object names",
        "",
        _names(
            "s3.bucket.name",
            "s3.region",
            "store.url",
            "topics.dir",
            "directory.delim",
            "file.delim",
            "filename.offset.zero.pad.width",
        ),
    ),
    Section(
        "Format and compression",
        "See [Output](output/index.md).",
        lambda key: (
            key.startswith("format.")
            or key
            in ("s3.compression.type", "json.decimal.format", "s3.compression.level", "parquet.codec", "avro.codec")
        ),
    ),
    Section("Uploads and object options", "", _prefixed("s3.")),
    Section(
        "Partitioning",
        "See [Partitioning and rotation](output/partitioning.md).",
        lambda key: (
            (key.startswith(("partition", "timestamp.")) and key != "partitioner.max.open.files")
            or key in ("path.format", "locale", "timezone")
        ),
    ),
    Section(
        "Rotation",
        "What closes a topic-partition's open files: see [Partitioning and rotation](output/partitioning.md).",
        _prefixed("flush.size", "rotate.", "partitioner.max.open.files"),
    ),
    Section(
        "Converters",
        "See [Schemas](schemas/index.md). Every `value.converter.*` setting below exists for keys as "
        "`key.converter.*` too.",
        _prefixed("value.converter", "key.converter"),
    ),
    Section(
        "Schemas, keys and headers files",
        "",
        _prefixed("schema.compatibility", "sink.schema.", "store.kafka.", "keys.format.", "headers.format."),
    ),
    Section(
        "Transforms",
        "See [Single message transforms](transforms/index.md).",
        _prefixed("transforms", "predicates"),
    ),
    Section(
        "Tombstones and bad records",
        "See [Dead-letter queue](dead-letter-queue.md).",
        _prefixed("behavior.on.null.values", "tombstone.", "errors."),
    ),
    Section("Iceberg tables", "`format.class=IcebergFormat`: see [Iceberg tables](iceberg.md).", _prefixed("iceberg.")),
    Section("Offsets, lease and runs", "", _prefixed("offset.storage.", "sink.")),
    Section(
        "Confluent Cloud",
        "With `connector.class` `S3_SINK` (see [Confluent Cloud configs](configuration/confluent-cloud.md)); with "
        "another connector class these keys are ignored and reported.",
        lambda key: key in _CLOUD,
    ),
)
OTHER = Section("Other keys", "", lambda key: True)

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_CODE = re.compile(r"(`+)(.+?)\1")


def _escape(text: str) -> str:
    """Plain text as Markdown in a table cell: no emphasis, tag, link or cell break of its own."""
    text = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([*_\[\]|#])", r"\\\1", text)


def markdown(doc: str) -> str:
    """`doc` as Markdown of one table cell: its `code` spans and [links](page.md) kept, the rest escaped."""
    out, pos = [], 0
    pattern = re.compile(f"{_CODE.pattern}|{_LINK.pattern}")
    for match in pattern.finditer(doc):
        out.append(_escape(doc[pos : match.start()]))
        if match.group(2) is not None:  # a code span (a | in it does not end the table cell)
            out.append(match.group(0))
        else:
            label, target = match.group(3), match.group(4)
            if "://" not in target:
                target = "../" * PAGE_DEPTH + target
            out.append(f"[{_escape(label)}]({target})")
        pos = match.end()
    out.append(_escape(doc[pos:]))
    return "".join(out).replace("\n", " ")


def _short(spellings: tuple[str, ...]) -> str:
    """The short class name among a class's spellings (JsonFormat, not io.confluent...JsonFormat nor json)."""
    return next((s for s in spellings if "." not in s and s[:1].isupper()), spellings[0])


def _default(key: Key) -> str:
    value = key.default
    if value is REQUIRED:
        return "required"
    if value is None or value == "" or value == ():
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if key.kind == "class":
        for spellings in key.classes.values():
            if value in spellings:
                return f"`{_short(spellings)}`"
    return f"`{value}`"


def _values(key: Key) -> str:
    if key.kind == "bool":
        return "`true`, `false`"
    if key.kind == "int":
        low = "" if key.minimum is None else f"{key.minimum:,}"
        high = "" if key.maximum is None else f"{key.maximum:,}"
        if key.maximum is None and key.minimum is not None:
            return f"integer, at least {low}"
        if key.minimum is None:
            return f"integer, at most {high}" if high else f"integer, at most {JAVA_LONG_MAX:,}"
        return f"integer, {low} to {high}"
    if key.kind == "choice":
        return ", ".join(f"`{c}`" if c else "unset" for c in key.choices)
    if key.kind == "class":
        names = [_short(key.classes[c]) for c in key.built]
        return ", ".join(f"`{n}`" for n in names) + " (or the full class name)"
    if key.kind == "list":
        return "comma-separated list"
    return "string"


def _rows() -> list[Row]:
    rows = [Row(k.name, _default(k), _values(k), markdown(k.doc)) for k in KEYS]
    rows += [Row(prefix + "*", "", "any", markdown(doc)) for prefix, doc in PASSTHROUGH_DOCS.items()]
    return rows


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return lines + [""]


def _key_tables() -> list[str]:
    grouped: dict[str, list[Row]] = {}
    for row in _rows():
        name = row.name.removesuffix("*")
        section = next((s for s in SECTIONS if s.matches(name)), OTHER)
        grouped.setdefault(section.title, []).append(row)
    lines: list[str] = []
    for section in (*SECTIONS, OTHER):
        rows = grouped.get(section.title)
        if not rows:
            continue
        lines += [f"## {section.title}", ""]
        if section.intro:
            lines += [markdown(section.intro), ""]
        lines += _table(
            ("key", "default", "type or values", "what it does"),
            ((f"`{r.name}`", r.default, r.values, r.doc) for r in rows),
        )
    return lines


def _sorted_table(header: tuple[str, str], entries: Mapping[str, str], shown: Callable[[str], str]) -> list[str]:
    return _table(header, ((shown(key), markdown(why)) for key, why in sorted(entries.items())))


def _role_options(keys: Iterable[str]) -> dict[str, list[str]]:
    """`value.converter.<option>` and `key.converter.<option>` keys grouped by option (others by themselves)."""
    options: dict[str, list[str]] = {}
    for key in keys:
        role_option = confluent_keys.converter_option(key)
        name = f"{{value,key}}.converter.{role_option[1]}" if role_option else key
        options.setdefault(name, []).append(key)
    return options


def _policy_tables() -> list[str]:
    lines = [
        "## Keys accepted with no effect here",
        "",
        "Kafka Connect's connector and worker keys, and settings of the Confluent connector that do not apply to "
        "this engine: accepted, and listed by `sink-engine validate` with the reason below.",
        "",
    ]
    lines += _sorted_table(("key", "why it changes nothing here"), key_policy.ACCEPTED_UNUSED, lambda k: f"`{k}`")
    lines += ["Every key under these prefixes:", ""]
    lines += _sorted_table(
        ("prefix", "why it changes nothing here"), confluent_keys.NO_EFFECT_PREFIXES, lambda k: f"`{k}*`"
    )
    lines += [
        "The converters' options that only serializers or Java's typed records read, under `value.converter.` and "
        "`key.converter.`:",
        "",
    ]
    lines += _sorted_table(
        ("option", "why it changes nothing here"), confluent_keys.CONVERTER_NO_EFFECT, lambda k: f"`{k}`"
    )
    lines += [
        "## Keys accepted at one value only",
        "",
        "Another value asks for something the engine does not do and is refused, naming the key (exit 2).",
        "",
    ]
    accepted = [
        (f"`{key}`", ", ".join(f"`{v}`" for v in values), markdown(why))
        for key, (values, why) in sorted(key_policy.ACCEPTED_VALUES.items())
    ]
    default_only = _role_options(confluent_keys.DEFAULT_ONLY)
    accepted += [
        (
            f"`{name}`",
            f"`{confluent_keys.DEFAULT_ONLY[keys[0]][0]}` (Confluent's default)",
            markdown("another value would ask for " + confluent_keys.DEFAULT_ONLY[keys[0]][1]),
        )
        for name, keys in sorted(default_only.items())
    ]
    lines += _table(("key", "accepted", "why"), accepted)
    off = ", ".join(f"`{v}`" if v else "empty" for v in sorted(OFF_VALUES))
    lines += [
        "## Keys refused",
        "",
        f"Each turns on a behaviour the engine does not have: set, it is refused naming the key (exit 2), unless its "
        f"value is an off value ({off}).",
        "",
    ]
    refused = {**NOT_BUILT_YET, **key_policy.REFUSED_UNLESS_OFF}
    lines += _table(
        ("key", "what it would turn on"),
        ((f"`{name}`", markdown(refused[keys[0]])) for name, keys in sorted(_role_options(refused).items())),
    )
    lines += [
        "## Look-alike keys",
        "",
        "Keys people write for a key that exists. Unknown to the connector, they are ignored and reported "
        "(`validate`'s `ignored keys`, the `CONFIG_KEY_IGNORED` event, a `cdk synth` warning) with the key meant:",
        "",
    ]
    lines += _table(
        ("key written", "did you mean"),
        ((f"`{k}`", f"`{v}`") for k, v in sorted(confluent_keys.LOOK_ALIKES.items())),
    )
    return lines


def _cloud_tables() -> list[str]:
    lines = [
        "## Confluent Cloud values",
        "",
        f"With `connector.class` `{cloud.CLOUD_CLASS}`, each Cloud key stands for self-managed keys. Cloud's "
        f"`flush.size` default is {cloud.CLOUD_FLUSH_SIZE:,}.",
        "",
        "`input.data.format` (and `input.key.format`):",
        "",
    ]
    lines += _table(("value", "converter"), ((f"`{k}`", f"`{v}`") for k, v in cloud.INPUT_FORMATS.items()))
    lines += ["`output.data.format` (and `output.keys.format`, `output.headers.format`):", ""]
    lines += _table(("value", "format.class"), ((f"`{k}`", f"`{v}`") for k, v in cloud.OUTPUT_FORMATS.items()))
    lines += ["`compression.codec`:", ""]
    lines += _table(
        ("value", "means"),
        ((f"`{fmt} - {codec}`", f"`{key}={value}`") for (fmt, codec), (key, value) in cloud.CODECS.items()),
    )
    lines += ["`time.interval`:", ""]
    lines += _table(
        ("value", "partition.duration.ms", "path.format"),
        ((f"`{k}`", f"`{ms}`", f"`{path}`") for k, (ms, path) in cloud.INTERVALS.items()),
    )
    return lines


def render() -> str:
    """The reference page, as the tables give it."""
    lines = [
        "<!-- Generated by `python -m devtools.config_reference` from sink_engine/config (keys.py, key_policy.py,",
        "     confluent_keys.py, cloud.py): edit the tables there, not this page; `make docs` writes it anew. -->",
        "",
        "# Configuration reference",
        "",
        "Every key of a connector file, from the tables the engine reads its config with. How a file is read, and "
        "what happens to a key not listed here: [Configuration](../configuration/index.md). "
        "`sink-engine validate --config FILE` prints each key's effective value and where it comes from.",
        "",
        "Integer keys take Java's ranges, as Confluent declares them (`INT` up to 2,147,483,647, `LONG` up to "
        f"{JAVA_LONG_MAX:,}); durations are in milliseconds.",
        "",
        *_key_tables(),
        *_policy_tables(),
        *_cloud_tables(),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is not what the tables render")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    text = render()
    current = args.page.read_text() if args.page.exists() else None
    if args.check:
        if current != text:
            print(f"{args.page} is not what the key tables render: run `make docs` and commit it", file=sys.stderr)
            return 1
        return 0
    if current != text:
        args.page.parent.mkdir(parents=True, exist_ok=True)
        args.page.write_text(text)
        print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
