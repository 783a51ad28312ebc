"""The JAAS login of a Java Kafka client (`sasl.jaas.config`): its login module, control flag and options.

Parsed as Kafka's JaasConfig reads it: `<LoginModule class> <flag> [<name>=<value> ...];`, one login module,
values bare words or double-quoted strings (with backslash escapes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<eq>=)|(?P<semi>;)|(?P<word>[^\s=;"]+))')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


@dataclass(frozen=True)
class JaasLogin:
    module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def module_name(self) -> str:
        """The class name without its package (`ScramLoginModule`)."""
        return self.module.rsplit(".", 1)[-1]


def parse_jaas(text: str) -> JaasLogin:
    """The one login module of `text`; ValueError says what is malformed."""
    tokens = _tokens(text)
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise ValueError("expected '<LoginModule class> <flag> [name=value ...];'")
    module, flag = tokens[0][1], tokens[1][1].lower()
    if flag not in FLAGS:
        raise ValueError(f"{tokens[1][1]!r} is not a JAAS control flag ({', '.join(FLAGS)})")
    options, i = {}, 2
    while i < len(tokens) and tokens[i][0] != "semi":
        if (
            i + 2 >= len(tokens)
            or tokens[i][0] != "word"
            or tokens[i + 1][0] != "eq"
            or tokens[i + 2][0] not in ("word", "quoted")
        ):
            raise ValueError(f"option {i - 1} of {module} is not name=value")
        options[tokens[i][1]] = tokens[i + 2][1]
        i += 3
    if i >= len(tokens):
        raise ValueError("the login module entry does not end with ';'")
    if i + 1 < len(tokens):
        raise ValueError("holds more than one login module; Kafka clients take exactly one")
    return JaasLogin(module, flag, options)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position, text = [], 0, text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot read it from position {position}")
        kind = match.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        value = match.group(kind)
        tokens.append((kind, _unquote(value) if kind == "quoted" else value))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return tokens


def _unquote(quoted: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), quoted[1:-1])
