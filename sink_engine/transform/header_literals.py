"""A literal header value typed as Connect's `Values.parseString` types it (InsertHeader's `value.literal`).

Built: empty text is a string; `null` is no value and no schema; `true`/`false` booleans; a number (starting
with a digit, `+` or `-`) the smallest of int8/int16/int32/int64 that holds a whole value, else float32 when
finite there, else float64, else a Decimal; ISO-8601 `yyyy-MM-dd` a Date, `HH:mm:ss.SSS'Z'` a Time and
`yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` a Timestamp; anything else the text as a string. Not built: Connect's arrays
(`[...]`) and maps (`{...}`) stay strings (their text is what a header converter writes for them anyway), and
the text is read whole, where Connect's tokenizer may read only the part before a `,`, `:` or bracket.
"""

from __future__ import annotations

import datetime
import decimal
import re
from typing import Any

from sink_engine.convert.schema import DATE, DECIMAL, TIME, TIMESTAMP, Schema
from sink_engine.transform.date_format import DateFormat

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGERS = (("int8", 7), ("int16", 15), ("int32", 31), ("int64", 63))
_FLOAT32_MAX = 3.4028234663852886e38
_UTC = datetime.UTC
_TEMPORAL = {
    10: (DateFormat("yyyy-MM-dd"), Schema("int32", name=DATE, version=1)),
    13: (DateFormat("HH:mm:ss.SSS'Z'"), Schema("int32", name=TIME, version=1)),
    24: (DateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"), Schema("int64", name=TIMESTAMP, version=1)),
}


def parse_literal(text: str) -> tuple[Any, Schema | None]:
    """(value, schema) of the text, in this engine's value model."""
    if text == "":
        return "", Schema("string")
    if text == "null":
        return None, None
    if text in ("true", "false"):
        return text == "true", Schema("boolean")
    if text[0].isdigit():
        temporal = _temporal(text)
        if temporal is not None:
            return temporal
    if (text[0].isdigit() or text[0] in "+-") and _NUMBER.fullmatch(text):
        return _number(decimal.Decimal(text))
    return text, Schema("string")


def _temporal(text: str) -> tuple[Any, Schema] | None:
    entry = _TEMPORAL.get(len(text))
    if entry is None:
        return None
    date_format, schema = entry
    try:
        moment = datetime.datetime(1970, 1, 1, tzinfo=_UTC) + datetime.timedelta(milliseconds=date_format.parse(text))
    except (ValueError, OverflowError):
        return None
    if schema.name == DATE:
        return moment.date(), schema
    return (moment.time(), schema) if schema.name == TIME else (moment, schema)


def _number(number: decimal.Decimal) -> tuple[Any, Schema]:
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)  # _NUMBER's text: a finite number
    scale = -exponent
    if number == number.to_integral_value():
        integral = int(number)
        for kind, bits in _INTEGERS:
            if -(1 << bits) <= integral < (1 << bits):
                return integral, Schema(kind)
    if scale != 0 and abs(float(number)) <= _FLOAT32_MAX:
        return float(number), Schema("float32")
    if scale != 0 and abs(float(number)) != float("inf"):
        return float(number), Schema("float64")
    return number, Schema("bytes", name=DECIMAL, version=1, parameters=(("scale", str(scale)),))
