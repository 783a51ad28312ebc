"""Java's value conversions that Kafka's Cast and MaskField results depend on, for Python values.

- `narrow(value, type)`: a Java `Number.byteValue()`..`longValue()` (integers wrap to the width, floats
  truncate and saturate (NaN is 0), decimals truncate and wrap).
- `parse_integer(text, type)`: `Byte.parseByte`..`Long.parseLong` (decimal digits, a sign, range-checked).
- `parse_float(text, type)`: `Float.parseFloat` / `Double.parseDouble` (decimal forms, `NaN`, `Infinity`, an
  `f`/`d` suffix; hexadecimal floats are not read).
- `big_decimal(text)`: `new BigDecimal(text)` (no NaN, infinities or underscores).
- `float32(x)`: the nearest float32, as a Java `(float)` cast.
- `to_string(value, type)`: `toString()` of the Java value (`Float.toString` / `Double.toString` by their
  shortest round-trip digits, as JDK 19+ prints them).
- `date_text(millis)`: `Values.dateFormatFor(date).format(date)` in UTC (a time before the second day of 1970,
  a date at a midnight, otherwise a timestamp).
ValueError when a text does not parse or an integer is out of range.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import struct

BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
MILLIS_PER_DAY = 86_400_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)")
_BIG_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def wrap(number: int, bits: int) -> int:
    """The low `bits` bits of an integer as a two's-complement value (Java's narrowing of integers)."""
    mask = 1 << bits
    number &= mask - 1
    return number - mask if number >= mask >> 1 else number


def narrow(value: int | float | decimal.Decimal, type_: str) -> int:
    """Java's `Number.<type>Value()` of an integral, floating or decimal number."""
    bits = BITS[type_]
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        saturate = 64 if bits == 64 else 32  # (byte)/(short) of a double go through (int)
        low, high = -(1 << (saturate - 1)), (1 << (saturate - 1)) - 1
        whole = high if value >= high else low if value <= low else int(value)
        return wrap(whole, bits)
    return wrap(int(value), bits)


def parse_integer(text: str, type_: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"for input string: {text!r}")
    number, bits = int(text), BITS[type_]
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise ValueError(f"value out of range: {text!r} for {type_}")
    return number


def parse_float(text: str, type_: str) -> float:
    trimmed = text.strip(" \t\n\r\x0b\x0c\x00")
    if not _FLOAT.fullmatch(trimmed):
        raise ValueError(f"for input string: {text!r}")
    number = float(trimmed.rstrip("fFdD").replace("Infinity", "inf"))
    return float32(number) if type_ == "float32" else number


def big_decimal(text: str) -> decimal.Decimal:
    if not _BIG_DECIMAL.fullmatch(text):
        raise ValueError(f"{text!r} is not a decimal number")
    number = decimal.Decimal(text)
    if abs(number.adjusted()) > 9999:
        raise ValueError(f"{text!r} is out of this engine's range")
    return number


def float32(number: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", number))[0]
    except OverflowError:
        return math.copysign(math.inf, number)


def to_string(value: object, type_: str) -> str:
    """Java's toString of a value of Connect type `type_` (`boolean`, `float32`, `float64`, integers, decimals)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_float(value, type_ == "float32")
    if isinstance(value, decimal.Decimal):
        return str(abs(value)) if value == 0 else str(value)  # Java has no negative zero decimal
    return str(value)


def date_text(millis: int) -> str:
    """Connect's `Values.dateFormatFor` format of a java.util.Date of `millis`, in UTC."""
    moment = _EPOCH + datetime.timedelta(milliseconds=millis)
    time = f"{moment:%H:%M:%S}.{moment.microsecond // 1000:03d}Z"
    if millis < MILLIS_PER_DAY:
        return time
    date = f"{moment.year:04d}-{moment:%m-%d}"
    return date if millis % MILLIS_PER_DAY == 0 else f"{date}T{time}"


def _java_float(number: float, single: bool) -> str:
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "-0.0" if math.copysign(1, number) < 0 else "0.0"
    digits, exponent = _shortest_digits(abs(number), single)
    sign = "-" if number < 0 else ""
    if 1e-3 <= abs(number) < 1e7:
        point = exponent + 1
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole, fraction = digits[:point].ljust(point, "0"), digits[point:]
        return f"{sign}{whole}.{fraction or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _shortest_digits(number: float, single: bool) -> tuple[str, int]:
    """The shortest significant digits that read back as `number` (as a float32 when `single`) and the decimal
    exponent of the first one."""
    if single:
        for precision in range(1, 10):
            text = f"{number:.{precision - 1}e}"
            if float32(float(text)) == number:
                break
    else:
        text = f"{decimal.Decimal(repr(number)):e}"
    mantissa, exponent = text.split("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    return digits, int(exponent)
