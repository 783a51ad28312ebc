"""Compile .proto text with protoc (grpcio-tools), for the test registry and for test producers.

Confluent's registry parses .proto text itself (Java); the Python client registers and asks for schemas as
base64 FileDescriptorProtos (`format=serialized`). This turns one into the other the way protoc does, and
builds message classes from the result, so tests serialize with real generated-style classes.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import grpc_tools
from confluent_kafka.schema_registry.common import protobuf as common
from confluent_kafka.schema_registry.protobuf import _init_pool
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message_factory import GetMessageClass
from grpc_tools import protoc

_INCLUDE = str(Path(grpc_tools.__file__).parent / "_proto")


class ProtoCompileError(ValueError):
    pass


def builtin_files() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The files confluent-kafka puts in every pool (google/protobuf/*, google/type/*, confluent/*), by name."""
    pool = DescriptorPool()
    _init_pool(pool)
    found = {}
    for name in _builtin_names():
        proto = descriptor_pb2.FileDescriptorProto()
        pool.FindFileByName(name).CopyToProto(proto)
        found[name] = proto
    return found


def _builtin_names() -> list[str]:
    return sorted(
        {
            module.DESCRIPTOR.name
            for module in vars(common).values()
            if getattr(getattr(module, "DESCRIPTOR", None), "serialized_pb", None)
            and hasattr(module.DESCRIPTOR, "message_types_by_name")
        }
    )


def compile_files(
    sources: dict[str, str],
    known: dict[str, descriptor_pb2.FileDescriptorProto] | None = None,
) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Every file of `sources` (name -> .proto text) compiled, with the files they import: among `sources`,
    in `known` (name -> FileDescriptorProto) or the builtins. Returns name -> FileDescriptorProto."""
    known = {**builtin_files(), **(known or {})}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in sources.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        given = descriptor_pb2.FileDescriptorSet(file=[p for n, p in known.items() if n not in sources])
        (root / "known.pb").write_bytes(given.SerializeToString())
        args = [
            "protoc",
            f"-I{root}",
            f"--descriptor_set_in={root / 'known.pb'}",
            "--include_imports",
            f"--descriptor_set_out={root / 'out.pb'}",
            *sources,
        ]
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            status = protoc.main(args)
        if status != 0:
            raise ProtoCompileError(f"protoc failed ({status}) on {sorted(sources)}: {errors.getvalue()}")
        compiled = descriptor_pb2.FileDescriptorSet.FromString((root / "out.pb").read_bytes())
    return {f.name: f for f in compiled.file}


def message_classes(sources: dict[str, str]) -> dict[str, type]:
    """Message classes (by full name) of every message of `sources`, from one pool."""
    files = compile_files(sources)
    pool = DescriptorPool()
    _init_pool(pool)
    added = set(builtin_files())
    for name, proto in files.items():
        if name not in added:
            pool.Add(proto)
    classes = {}
    for name in sources:
        for message in pool.FindFileByName(name).message_types_by_name.values():
            _collect(message, classes)
    return classes


def _collect(descriptor, classes: dict) -> None:
    classes[descriptor.full_name] = GetMessageClass(descriptor)
    for nested in descriptor.nested_types:
        if not nested.GetOptions().map_entry:
            _collect(nested, classes)
