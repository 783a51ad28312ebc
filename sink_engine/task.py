"""One Spark task's work for one planned range: read, convert, partition, rotate, encode, upload."""
from __future__ import annotations

from sink_engine.config import SinkConfig
from sink_engine.convert import converter_for
from sink_engine.errors import RecordError, SinkError
from sink_engine.format import format_for
from sink_engine.model import PartitionRange, TaskResult
from sink_engine.partition import partitioner_for
from sink_engine.records import RecordChunk
from sink_engine.rotation import RotationPolicy
from sink_engine.rotation.schema_gate import SchemaGate
from sink_engine.source.reader import read_range
from sink_engine.storage.naming import ObjectNaming
from sink_engine.storage.s3 import s3_client
from sink_engine.storage.uploader import Uploader
from sink_engine.writer import TopicPartitionWriter


def run_range(config: SinkConfig, planned: PartitionRange, client=None) -> TaskResult:
    """Write the closed files of a range and report them. Never raises a SinkError: it is returned in
    the result, with the files closed and uploaded before it, so the driver can commit that much."""
    uploader = Uploader(client or s3_client(config), config["s3.bucket.name"])
    writer = TopicPartitionWriter(planned.topic, planned.partition, planned.start_offset, format_for(config),
                                  ObjectNaming.from_config(config), RotationPolicy.from_config(config), uploader,
                                  SchemaGate(config["schema.compatibility"], planned.topic, planned.partition))
    result = TaskResult(range=planned, next_offset=planned.start_offset)
    steps = (config["behavior.on.null.values"], converter_for(config, "value", planned.topic), partitioner_for(config))
    try:
        try:
            for chunk in read_range(config, planned):
                result.records_read += len(chunk)
                _write(writer, steps, chunk)
        except SinkError as e:
            result.error, result.error_class = str(e), type(e).__name__
        uploader.drain()
    except SinkError as e:  # an upload failed: nothing of this range may be committed
        result.error, result.error_class = str(e), type(e).__name__
        return result
    finally:
        uploader.close()
    result.files, result.next_offset = writer.closed, writer.next_offset
    return result


def _write(writer: TopicPartitionWriter, steps: tuple, chunk: RecordChunk) -> None:
    """Filter nulls, convert, partition and write a chunk. On a bad record, the records before it are
    written first, so that everything up to it can still be committed; then the RecordError propagates."""
    null_behavior, converter, partitioner = steps
    try:
        kept = _handle_nulls(chunk, null_behavior)
        if not len(kept):
            return
        values = converter.convert(kept)
        partitions = partitioner.encode(kept, values)
    except RecordError as e:
        _write(writer, steps, chunk.slice(0, chunk.offsets.index(e.offset)))
        raise
    writer.write(kept, values, partitions)


def _handle_nulls(chunk: RecordChunk, behavior: str) -> RecordChunk:
    """Apply `behavior.on.null.values` to records with a null value (tombstones)."""
    nulls = [i for i, value in enumerate(chunk.values) if value is None]
    if not nulls:
        return chunk
    if behavior == "fail":
        raise RecordError(chunk.topic, chunk.partition, chunk.offsets[nulls[0]],
                          "null value (tombstone) with behavior.on.null.values=fail")
    nulls_set = set(nulls)
    return chunk.select([i for i in range(len(chunk)) if i not in nulls_set])
