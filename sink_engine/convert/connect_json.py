"""Kafka Connect's JSON schema language (the `schema` half of a JsonConverter envelope) and its values.

`parse_schema` reads a schema document into a `Schema`, with JsonConverter's type names (`float` and `double`
for Connect's float32 and float64, see JSON_TYPE_NAMES). `compile_decoder` returns a function that turns a
payload into the Python values of that schema, as Connect's JsonConverter does: bytes are base64 text,
Decimal is base64 of the unscaled two's-complement integer (or a number), Date is days since the epoch,
Time milliseconds of the day, Timestamp epoch milliseconds; a missing or null field takes the field's
default, is null when optional, and is an error otherwise. Errors are ValueError naming the field path.
For JSON Schema payloads (json_schema_mapping.py) the decoder also reads ISO_TIMESTAMP / ISO_DATE strings
(kept as `IsoText`) and fills a `ONE_OF` struct's field of the first branch that reads the value.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import math
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from sink_engine.convert.iso_values import parse_date, parse_date_time
from sink_engine.convert.schema import (
    DATE,
    DECIMAL,
    FLOAT_TYPES,
    INTEGER_TYPES,
    ISO_DATE,
    ISO_TIMESTAMP,
    TIME,
    TIMESTAMP,
    Field,
    Schema,
)

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
# JsonConverter's names of Connect's FLOAT32 and FLOAT64 (JsonSchema.FLOAT_TYPE_NAME, DOUBLE_TYPE_NAME in
# apache/kafka connect/json; asConnectSchema reads them, asJsonSchema writes them); its other type names are
# Connect's own. Connect's enum names, float32 and float64, are read too (JsonConverter itself refuses them).
JSON_TYPE_NAMES = {"float": "float32", "double": "float64"}
ONE_OF = "io.confluent.connect.json.OneOf"  # JsonSchemaData's struct for a oneOf: one optional field per branch
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}

Decoder = Callable[[Any, str], Any]


def parse_schema(document: Any) -> Schema:
    """A Connect schema from its JSON form; ValueError names what is wrong."""
    if not isinstance(document, dict) or "type" not in document:
        raise ValueError(f"a schema must be an object with a 'type', got {document!r:.80}")
    kind = document["type"]
    kind = JSON_TYPE_NAMES.get(kind, kind) if isinstance(kind, str) else kind
    parts: dict[str, Any] = {}
    if kind == "struct":
        parts["fields"] = tuple(Field(f["field"], parse_schema(f)) for f in document.get("fields", ()))
    elif kind == "array":
        parts["items"] = parse_schema(document.get("items"))
    elif kind == "map":
        parts["keys"], parts["values"] = parse_schema(document.get("keys")), parse_schema(document.get("values"))
    parameters = tuple(sorted((str(k), str(v)) for k, v in (document.get("parameters") or {}).items()))
    schema = Schema(
        kind,
        bool(document.get("optional", False)),
        None,
        document.get("name"),
        document.get("version"),
        parameters,
        **parts,
    )
    if document.get("default") is not None:
        schema = Schema(**{**schema.__dict__, "default": compile_decoder(schema)(document["default"], "default")})
    return schema


_Moment = TypeVar("_Moment", datetime.date, datetime.datetime)  # what _after_epoch counts from


def compile_decoder(schema: Schema) -> Decoder:
    """A function (payload, path) -> Python value for this schema, applying defaults and optionality."""
    decode = _logical(schema) or _structured(schema) or _primitive(schema)
    default, optional, label = schema.default_value(), schema.optional, schema.describe()

    def decode_nullable(value: Any, path: str) -> Any:
        if value is None:
            if default is not None:
                return default
            if optional:
                return None
            raise ValueError(f"{path or 'value'}: null for a required {label} field")
        return decode(value, path)

    return _kept_as_is(schema, decode_nullable) if schema.name is None else decode_nullable


def _kept_as_is(schema: Schema, decode: Decoder) -> Decoder:
    """For a string, boolean or integer, `decode` with the common case in one call: a value of the right type
    (and range) is the value itself; anything else (null, a wrong type) goes through `decode`."""
    if schema.type in INTEGER_TYPES:
        low, high = _int_range(schema.type)
        return lambda value, path: value if type(value) is int and low <= value <= high else decode(value, path)
    python_type = {"string": str, "boolean": bool}.get(schema.type)
    if python_type is None:
        return decode
    return lambda value, path: value if type(value) is python_type else decode(value, path)


def _structured(schema: Schema) -> Decoder | None:
    if schema.name == ONE_OF:
        return _one_of(schema)
    if schema.type == "struct":
        fields = [(f.name, compile_decoder(f.schema)) for f in schema.fields]

        def struct(value: Any, path: str) -> dict:
            _expect(isinstance(value, dict), value, "an object", path)
            return {name: decode(value.get(name), f"{path}.{name}" if path else name) for name, decode in fields}

        return struct
    if schema.type == "array":
        assert schema.items is not None
        item = compile_decoder(schema.items)

        def array(value: Any, path: str) -> list:
            _expect(isinstance(value, list), value, "an array", path)
            return [item(v, f"{path}[{i}]") for i, v in enumerate(value)]

        return array
    if schema.type == "map":
        assert schema.keys is not None and schema.values is not None
        key, val = compile_decoder(schema.keys), compile_decoder(schema.values)

        def mapping(value: Any, path: str) -> dict:
            _expect(isinstance(value, (dict, list)), value, "an object or an array of pairs", path)
            pairs = value.items() if isinstance(value, dict) else value  # non-string keys: [[k, v], ...]
            return {key(k, path): val(v, f"{path}[{k}]") for k, v in pairs}

        return mapping
    return None


def _one_of(schema: Schema) -> Decoder:
    branches = [(f.name, compile_decoder(f.schema)) for f in schema.fields]
    empty = dict.fromkeys(name for name, _ in branches)

    def one_of(value: Any, path: str) -> dict:
        for name, decode in branches:
            try:
                return {**empty, name: decode(value, path)}
            except ValueError:
                continue
        raise ValueError(f"{path or 'value'}: {value!r:.60} matches no branch of the oneOf")

    return one_of


def _primitive(schema: Schema) -> Decoder:
    kind = schema.type
    if kind in INTEGER_TYPES:
        low, high = _int_range(kind)

        def integer(value: Any, path: str) -> int:
            _expect(type(value) is int and low <= value <= high, value, f"an {kind}", path)
            return value

        return integer
    if kind in FLOAT_TYPES:

        def number(value: Any, path: str) -> float:
            _expect(type(value) in (int, float), value, "a number", path)
            return float(value)

        return number
    if kind == "bytes":
        return lambda value, path: _base64(value, path)
    expected = {"boolean": bool, "string": str}[kind]

    def plain(value: Any, path: str) -> Any:
        _expect(type(value) is expected, value, f"a {kind}", path)
        return value

    return plain


def _logical(schema: Schema) -> Decoder | None:
    if schema.name == DECIMAL:
        scale = int(schema.parameter("scale", "0"))

        def to_decimal(value: Any, path: str) -> decimal.Decimal:
            if type(value) in (int, float):
                return decimal.Decimal(str(value)).quantize(decimal.Decimal(1).scaleb(-scale))
            unscaled = int.from_bytes(_base64(value, path), "big", signed=True)
            return decimal.Decimal(unscaled).scaleb(-scale)

        return to_decimal
    if schema.name == DATE:
        return lambda value, path: _after_epoch(EPOCH.date(), "days", value, path)
    if schema.name == TIME:
        return lambda value, path: _after_epoch(EPOCH, "milliseconds", value, path).time()
    if schema.name == TIMESTAMP:
        return lambda value, path: _after_epoch(EPOCH, "milliseconds", value, path)
    if schema.name in (ISO_TIMESTAMP, ISO_DATE):
        parse = parse_date_time if schema.name == ISO_TIMESTAMP else parse_date

        def iso(value: Any, path: str) -> object:
            _expect(isinstance(value, str), value, "a string", path)
            try:
                return parse(value)
            except ValueError as e:
                raise ValueError(f"{path or 'value'}: {e}") from None

        return iso
    return None


def _int_range(kind: str) -> tuple[int, int]:
    """The values of a Connect integer type (int8 ... int64), both ends included."""
    bits = _INT_BITS[kind]
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _int(value: Any, path: str) -> int:
    _expect(type(value) is int, value, "an integer", path)
    return value


def _after_epoch(epoch: _Moment, unit: str, value: Any, path: str) -> _Moment:
    """`epoch` plus `value` `unit`s; ValueError past what Python's date and datetime hold (years 1 to 9999)."""
    try:
        return epoch + datetime.timedelta(**{unit: _int(value, path)})
    except OverflowError:
        raise ValueError(
            f"{path or 'value'}: {value} {unit} from the epoch is past year 9999 or before year 1"
        ) from None


def _base64(value: Any, path: str) -> bytes:
    _expect(isinstance(value, str), value, "base64 text", path)
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise ValueError(f"{path or 'value'}: {value!r:.40} is not valid base64") from None


def _expect(ok: bool, value: Any, what: str, path: str) -> None:
    if not ok:
        raise ValueError(f"{path or 'value'}: expected {what}, got {value!r:.60}")


def to_json(value: Any, numeric_decimals: bool = False) -> bytes:
    """Compact JSON of a value of a schema, as Connect's JsonConverter writes it without a schema
    (bytes as base64, Decimal as base64 of its unscaled value or, with `numeric_decimals`
    (`json.decimal.format=NUMERIC`), as a number with its scale, Date as days, Time as milliseconds of the
    day, Timestamp as epoch ms; a map whose keys are not all strings as an array of `[key, value]` pairs, as
    JsonConverter.convertToJson writes a map outside its object mode)."""
    default = _encode_numeric if numeric_decimals else _encode_logical

    def dumps(value: Any) -> bytes:
        try:
            return orjson.dumps(value, default=default, option=orjson.OPT_PASSTHROUGH_DATETIME)
        except TypeError:  # a map with keys that are not strings (else the same error again below)
            return orjson.dumps(_pairs(value), default=default, option=orjson.OPT_PASSTHROUGH_DATETIME)

    return dumps_non_finite_as_text(dumps, value)


def dumps_non_finite_as_text(dumps: Callable[[Any], bytes], value: Any) -> bytes:
    """`dumps(value)`, a NaN or infinite float written as JsonConverter writes it: Jackson's ObjectMapper quotes a
    non-finite number by default ("NaN", "Infinity", "-Infinity"), where orjson writes null. Only a text holding a
    null is looked at again (a float32 Cast past 3.4e38 gives infinity; Avro doubles may be NaN)."""
    text = dumps(value)
    if b"null" not in text:
        return text
    quoted = _non_finite_as_text(value)
    return text if quoted is value else dumps(quoted)


def _non_finite_as_text(value: Any) -> Any:
    """`value` with each non-finite float as Java's text of it; `value` itself when it holds none."""
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (math.inf, -math.inf):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, dict):
        items = {key: _non_finite_as_text(item) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    if isinstance(value, list):
        quoted = [_non_finite_as_text(item) for item in value]
        return value if all(new is old for new, old in zip(quoted, value, strict=True)) else quoted
    return value


def _pairs(value: Any) -> Any:
    """`value` with each map whose keys are not all strings turned into a list of [key, value] pairs."""
    if isinstance(value, dict):
        if all(type(key) is str for key in value):
            return {key: _pairs(item) for key, item in value.items()}
        return [[_pairs(key), _pairs(item)] for key, item in value.items()]
    if isinstance(value, list):
        return [_pairs(item) for item in value]
    return value


def _encode_numeric(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(format(value, "f").encode("ascii"))
    return _encode_logical(value)


def _encode_logical(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        if not isinstance(exponent, int):  # NaN or infinity
            raise TypeError(f"{value} is not a Connect decimal")
        unscaled = int(value.scaleb(-exponent))
        return base64.b64encode(unscaled.to_bytes(_signed_length(unscaled), "big", signed=True)).decode("ascii")
    if isinstance(value, datetime.datetime):
        return (value - EPOCH) // datetime.timedelta(milliseconds=1)
    if isinstance(value, datetime.date):
        return (value - EPOCH.date()).days
    if isinstance(value, datetime.time):
        return (value.hour * 3600 + value.minute * 60 + value.second) * 1000 + value.microsecond // 1000
    raise TypeError(f"{type(value).__name__} is not a Connect value")


def _signed_length(number: int) -> int:
    """Bytes of the shortest two's-complement form (Java's BigInteger.toByteArray)."""
    return (number if number >= 0 else ~number).bit_length() // 8 + 1
