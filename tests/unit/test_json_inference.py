"""Schema inference of schemaless JSON files: the documented rules, on both the columnar and the Python path."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pytest

from sink_engine.format.base import FileContext
from sink_engine.format.json_inference import _inferred_in_python, json_text_table
from sink_engine.format.json_spool import JsonSpool


def table(documents: list) -> pa.Table:
    return json_text_table(b"\n".join(orjson.dumps(d) for d in documents), _no_error)[0]


def _no_error(position, cause):
    return AssertionError(f"unexpected record error at {position}: {cause}")


def test_integers_widen_to_double_and_missing_keys_are_null():
    result = table([{"a": 1}, {"a": 2.5, "b": "x"}, {"b": None}])
    assert result.schema == pa.schema([("a", pa.float64()), ("b", pa.string())])
    assert result.to_pylist() == [{"a": 1.0, "b": None}, {"a": 2.5, "b": "x"}, {"a": None, "b": None}]


def test_nested_objects_become_structs_with_keys_in_first_seen_order():
    result = table([{"o": {"z": 1}, "l": [1]}, {"o": {"a": True, "z": 2}, "l": [2.5, None]}])
    assert result.schema == pa.schema(
        [("o", pa.struct([("z", pa.int64()), ("a", pa.bool_())])), ("l", pa.list_(pa.float64()))]
    )


def test_timestamp_like_strings_stay_strings():
    result = table([{"ts": "2024-01-01T00:00:00", "n": [{"at": "2024-01-01 10:00:00"}]}])
    assert result.schema == pa.schema([("ts", pa.string()), ("n", pa.list_(pa.struct([("at", pa.string())])))])


def test_conflicting_types_become_json_text():
    result = table([{"a": 1, "b": {"x": 1}}, {"a": "one", "b": [1]}, {"a": None, "b": None}])
    assert result.schema == pa.schema([("a", pa.string()), ("b", pa.string())])
    assert result.to_pylist() == [{"a": "1", "b": '{"x":1}'}, {"a": '"one"', "b": "[1]"}, {"a": None, "b": None}]


def test_objects_empty_everywhere_become_json_text_and_only_nulls_stay_null():
    result = table([{"e": {}, "n": None}, {"e": None, "n": None}])
    assert result.schema == pa.schema([("e", pa.string()), ("n", pa.null())])
    assert result.to_pylist() == [{"e": "{}", "n": None}, {"e": None, "n": None}]


def test_integers_beyond_int64_are_doubles():
    assert table([{"big": 2**63}, {"big": 1}]).schema == pa.schema([("big", pa.float64())])


@pytest.mark.parametrize(
    "documents",
    [
        [{"a": 1, "s": "x", "l": [[1, 2], []], "o": {"p": None}}, {"a": 2.5, "o": {"p": {"q": [True]}}, "z": None}],
        [{"k": [{"a": 1}, {"b": "x"}]}, {"k": None, "m": False}],
    ],
)
def test_columnar_path_agrees_with_the_python_rules(documents):
    columnar = table(documents)
    in_python = _inferred_in_python(documents, _no_error)[0]
    assert columnar.schema == in_python.schema
    assert columnar.to_pylist() == in_python.to_pylist()


BLOCKWISE_CASES = {
    "widening across blocks": [{"a": 1, "b": None}] * 30 + [{"a": 2.5, "b": "x"}] + [{"c": [1]}] * 30,
    "nested keys first seen late": [{"o": {"z": 1}}] * 30
    + [{"o": {"a": True, "z": 2}, "l": [None]}]
    + [{"l": [1.5], "t": "2024-01-01T00:00:00"}] * 30,
    "null-only field filled later": [{"n": None}] * 40 + [{"n": {"k": "v"}}] * 5,
    "conflict in a late block": [{"a": 1}] * 40 + [{"a": "one"}],
    "always-empty object": [{"e": {}, "x": i} for i in range(50)],
}


@pytest.mark.parametrize("name", BLOCKWISE_CASES)
def test_block_by_block_inference_gives_the_whole_file_schema_and_rows(name):
    documents = BLOCKWISE_CASES[name]
    lines = [orjson.dumps(d) for d in documents]
    whole_table, whole_rows = json_text_table(b"\n".join(lines), _no_error)
    spool = JsonSpool(FileContext("t", 0, 0), 64)  # blocks of about 64 bytes: many blocks
    spool.write(lines)
    batches = list(spool.batches())
    assert len(batches) > 1 or name in ("conflict in a late block", "always-empty object")
    assert pa.concat_tables([table for table, _ in batches]) == whole_table
    assert [row for _, rows in batches for row in rows()] == whole_rows()
