"""The differential transform test: Kafka Connect's own transforms (connect-transforms 3.9.1), its JsonConverter
(connect-json 3.9.1) and Debezium's ExtractNewRecordState (3.6.1.Final), run in one JVM beside the engine
(tests/connect_transforms_oracle.py), against the engine's transforms on the same generated records (hypothesis:
structs of every Connect type, nulls, defaults, nested structs, schemaless maps, primitives with and without a
schema, tombstones, keys of each shape, headers; oracle_records.py) with every option each transform takes
(oracle_options.py). Given the same connector config and records, when both run them, then every record out (topic,
partition, offset, timestamp, key, value, headers: each schema and payload as JsonConverter writes them) is the same,
or both drop it, or both fail it, or both refuse the config; or the pair is one of DIFFERENCES, each asserted as it is
(docs/transforms.md, "Where the engine differs from Kafka Connect").

Examples per transform: ORACLE_EXAMPLES (default 100; `ORACLE_EXAMPLES=500` for a long run). The configs covered
are counted (`combination` in oracle_options.py) and printed by the last test."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sink_engine.transform.java_values import float32
from sink_engine.transform.registry import TRANSFORMS
from tests.connect_transforms_oracle import TransformsOracle, WireRecord
from tests.transform_outcomes import comparable, engine_outcomes
from tests.unit.transform.oracle_options import OPTIONS, PREDICATES, TAKES, change_events, combination
from tests.unit.transform.oracle_records import records, values

EXAMPLES = int(os.environ.get("ORACLE_EXAMPLES", "100"))
ORACLE = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
# The engine's transforms that Kafka's and Debezium's jars do not hold: Confluent's own (confluentinc's
# connect-transforms is published on Confluent's repository, not on Maven Central).
NOT_IN_ORACLE = {"io.confluent.connect.transforms.TombstoneHandler", "io.confluent.connect.transforms.Drop"}
COVERED: set[frozenset] = set()


@dataclass(frozen=True)
class Difference:
    """A deliberate difference: `applies(config, record, java, engine)` says that a pair of outcomes is this one
    (`record` None for a config's outcome)."""

    name: str
    applies: Callable[[dict, WireRecord | None, dict, dict], bool]


def _record(outcome: dict) -> bool:
    return "topic" in outcome


def _conflicting_deprecated_names(config: dict, wire: WireRecord | None, java: dict, engine: dict) -> bool:
    options = {k.split(".", 2)[2]: v for k, v in config.items() if k.startswith("transforms.") and k.count(".") >= 2}
    conflict = any(
        new in options and old in options and options[new] != options[old]
        for new, old in (("exclude", "blacklist"), ("include", "whitelist"))
    )
    return conflict and "ReplaceField" in str(config) and "config_error" in engine and "results" in java


def _rename_onto_a_kept_field(config: dict, wire: WireRecord | None, java: dict, engine: dict) -> bool:
    renames = next((v for k, v in config.items() if k.endswith(".renames")), "")
    missing = {pair.split(":")[0] for pair in renames.split(",") if ":" in pair}
    return (
        "ReplaceField" in str(config)
        and "is not a valid field name" in java.get("error", "")
        and _record(engine)
        and any(java["error"].startswith(f"DataException: {name} is not") for name in missing)
    )


def _schemaless_rename_collision(config: dict, wire: WireRecord | None, java: dict, engine: dict) -> bool:
    renames = next((v for k, v in config.items() if k.endswith(".renames")), "")
    targets = {pair.split(":")[1] for pair in renames.split(",") if ":" in pair}
    part = getattr(wire, "key" if "ReplaceField$Key" in str(config) else "value", None) if wire is not None else None
    document = orjson.loads(part.data) if part is not None and not part.schemas else None
    return isinstance(document, dict) and bool(targets & set(document)) and _record(java) and _record(engine)


def _as_float32(value):
    """`value` with every float rounded to float32 (containers walked)."""
    if isinstance(value, float):
        return float32(value)
    if isinstance(value, dict):
        return {k: _as_float32(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_float32(v) for v in value]
    return value


def _whole_logical_cast(config: dict, wire: WireRecord | None, java: dict, engine: dict) -> bool:
    spec = next((v for k, v in config.items() if k.endswith(".spec")), "")
    role = "key" if "Cast$Key" in str(config) else "value"
    part = getattr(wire, role, None) if wire is not None else None
    schema = orjson.loads(part.data)["schema"] if part is not None and part.schemas else None
    logical = schema is not None and (schema.get("name") or "").startswith("org.apache.kafka.connect.data.")
    return ":" not in spec and logical and "error" in java and _record(engine)


DIFFERENCES = (
    # ReplaceField with `exclude` and `blacklist` (or `include` and `whitelist`) set to different lists: Kafka 3.9 uses
    # the new name and logs an error; the engine refuses the config, naming the deprecated key.
    Difference("ReplaceField: a deprecated and a new option name set apart", _conflicting_deprecated_names),
    # MaskField of a Decimal field: Kafka masks with BigDecimal.ZERO (scale 0), which its JsonConverter (any
    # converter) then refuses under a Decimal schema of another scale; the engine masks at the field's scale.
    Difference(
        "MaskField: a Decimal masked at its schema's scale",
        lambda config, wire, java, engine: (
            "MaskField" in str(config) and "mismatching scale" in java.get("error", "") and _record(engine)
        ),
    ),
    # SetSchemaMetadata of a key or value whose schema is not a struct: Kafka 3.9 fails (it copies the schema's
    # fields, and a non-struct schema has none); the engine sets its name and version.
    # ExtractNewRecordState with Debezium 1.x/2.x's `drop.tombstones` / `delete.handling.mode` and no
    # `delete.tombstone.handling.mode`: Debezium 3 no longer reads them (its default, tombstone, applies); the engine
    # still does, so that a connector configured for the Debezium of its source keeps its meaning.
    Difference(
        "ExtractNewRecordState: Debezium 2's delete keys",
        lambda config, wire, java, engine: (
            "ExtractNewRecordState" in str(config)
            and any(k.endswith((".drop.tombstones", ".delete.handling.mode")) for k in config)
            and not any(k.endswith(".delete.tombstone.handling.mode") for k in config)
        ),
    ),
    # ReplaceField renaming a field the struct lacks to the name of one it has (`renames=amount:name` on a struct with
    # `name` and no `amount`): Kafka 3.9 reads each new field under its old name through the reverse of `renames`, so it
    # looks for `amount` and fails the record; the engine keeps `name` as it is (the rename has nothing to rename).
    Difference("ReplaceField: a rename of a missing field onto a present one", _rename_onto_a_kept_field),
    # ReplaceField renaming a schemaless map's key onto another key the map has (`renames=id:name` on {"id": ..,
    # "name": ..}): in Kafka the value that wins is the one its HashMap iterates last (JsonConverter reads a map into a
    # HashMap); in the engine, the later key of the map as written.
    Difference("ReplaceField: a schemaless rename onto a key the map has", _schemaless_rename_collision),
    # A schemaless float32 (Cast to float32 without a schema): Kafka's Float is written by Float.toString's digits,
    # which the engine prints as JDK 19+ does (the shortest that read back); the oracle's JDK 17 prints more digits
    # for some floats (6.2103398E8 where JDK 21 prints 6.21034E8): the same float32, another double.
    Difference(
        "Cast: a schemaless float32 printed by JDK 17",
        lambda config, wire, java, engine: (
            "float32" in str(config) and _record(java) and _record(engine) and _as_float32(java) == _as_float32(engine)
        ),
    ),
    # Cast of a whole key or value of a logical type (a Timestamp, a Date) to a type: Kafka keeps the logical name on
    # the new type (an int8 named Timestamp, which its converters cannot write, or refuse with a default); the engine
    # drops the name and parameters, so the result is a plain number or string.
    Difference("Cast: a whole value of a logical type", _whole_logical_cast),
    Difference(
        "SetSchemaMetadata: a schema that is not a struct",
        lambda config, wire, java, engine: (
            "SetSchemaMetadata" in str(config) and "non-struct type" in java.get("error", "") and _record(engine)
        ),
    ),
)


@pytest.fixture(scope="module")
def oracle():
    running = TransformsOracle()
    yield running
    running.close()


def agree(oracle: TransformsOracle, config: dict[str, str], batch: list[WireRecord]) -> None:
    """Then: the engine's outcome of each record is the oracle's, or a listed Difference."""
    java, engine = oracle.run(config, batch), engine_outcomes(config, batch)
    if comparable(java) == comparable(engine):
        return
    listed = [d.name for d in DIFFERENCES if d.applies(config, None, java, engine)]
    if "config_error" in java or "config_error" in engine:
        assert listed, f"config {config}: the oracle {java} but the engine {engine}"
        return
    for wire, one, other in zip(batch, java["results"], engine["results"]):
        if comparable(one) != comparable(other):
            listed = [d.name for d in DIFFERENCES if d.applies(config, wire, one, other)]
            assert listed, f"config {config}\nrecord {wire}\nKafka:  {one}\nengine: {other}"


def _config(steps: list[tuple[str, dict[str, str]]], predicate: tuple[str, dict, bool] | None) -> dict[str, str]:
    config = {"transforms": ",".join(f"t{i}" for i in range(len(steps)))}
    for i, (type_name, options) in enumerate(steps):
        config[f"transforms.t{i}.type"] = type_name
        config.update({f"transforms.t{i}.{name}": value for name, value in options.items()})
    if predicate is not None:
        predicate_type, options, negate = predicate
        config.update(
            {
                "predicates": "p",
                "predicates.p.type": predicate_type,
                "transforms.t0.predicate": "p",
                "transforms.t0.negate": str(negate).lower(),
            }
        )
        config.update({f"predicates.p.{name}": value for name, value in options.items()})
    return config


@st.composite
def a_step(draw, family: str) -> tuple[str, dict[str, str]]:
    type_name = draw(st.sampled_from([name for name in TRANSFORMS if name.split("$")[0] == family]))
    options = draw(OPTIONS[family])
    COVERED.add(combination(type_name, options))
    return type_name, options


@st.composite
def a_predicate(draw) -> tuple[str, dict, bool] | None:
    if draw(st.integers(0, 3)) != 0:
        return None
    predicate_type = draw(st.sampled_from(sorted(PREDICATES)))
    options, negate = draw(PREDICATES[predicate_type]), draw(st.booleans())
    COVERED.add(frozenset({("type", predicate_type), ("negate", str(negate))} | set(options.items())))
    return predicate_type, options, negate


def test_every_transform_the_engine_implements_is_compared():
    assert {name.split("$")[0] for name in TRANSFORMS} == set(OPTIONS) | NOT_IN_ORACLE


@pytest.mark.parametrize("family", sorted(OPTIONS))
@ORACLE
@given(data=st.data())
def test_real_and_python_transforms_agree_on_generated_records(oracle, family, data):
    step, predicate = data.draw(a_step(family)), data.draw(a_predicate())
    events = change_events() if family.startswith("io.debezium") else values
    batch = data.draw(st.lists(records(events), min_size=1, max_size=5))
    agree(oracle, _config([step], predicate), batch)


@ORACLE
@given(batch=st.lists(records(), min_size=1, max_size=8))
def test_the_engines_converters_read_what_kafkas_json_converter_reads(oracle, batch):
    """A JsonConverter round trip: without transforms, each record as Kafka's JsonConverter reads it (key and value,
    with schemas.enable true or false) and as the engine's converters read it is written alike."""
    agree(oracle, {}, batch)


@ORACLE
@given(data=st.data())
def test_real_and_python_chains_agree_on_generated_records(oracle, data):
    unwrap = data.draw(st.booleans())  # ExtractNewRecordState first, on change events, then Kafka's transforms
    kafkas = sorted(f for f in OPTIONS if not f.startswith("io.debezium"))
    families = data.draw(st.lists(st.sampled_from(kafkas), min_size=1 if unwrap else 2, max_size=3))
    steps = [
        data.draw(a_step(family))
        for family in (["io.debezium.transforms.ExtractNewRecordState"] if unwrap else []) + families
    ]
    batch = data.draw(st.lists(records(change_events() if unwrap else values), min_size=1, max_size=5))
    agree(oracle, _config(steps, data.draw(a_predicate())), batch)


def test_the_generated_configs_cover_every_option_of_every_transform():
    """Then (after the tests above): every option each transform takes was set in some generated config."""
    if not COVERED:
        pytest.skip("the differential tests did not run in this session")
    for family, names in TAKES.items():
        seen = {
            name
            for combo in COVERED
            if ("type", family) in {(k, v.split("$")[0]) for k, v in combo}
            for name, _ in combo
        }
        assert seen >= {"type", *names}, f"{family}: never set {sorted({*names} - seen)}"
    print(f"\ntransform/option combinations covered: {len(COVERED)}")
