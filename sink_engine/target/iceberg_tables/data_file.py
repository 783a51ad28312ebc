"""One data file of an unpartitioned table, written a row group at a time as its rows arrive.

pyiceberg writes a data file from rows held whole (`_dataframe_to_data_files`); here each `write` encodes one row
group into the file's S3 stream, whose parts upload while the task reads on, and `close` describes the file as
pyiceberg's `write_file` does (the same file schema, field ids, name, location, statistics and metrics), through
pyiceberg's own parts: its Parquet writer (the table's `write.parquet.*` properties), its location provider and its
conversion of the rows to the file schema.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
from pyiceberg.io.fileformat import FileFormatFactory
from pyiceberg.io.pyarrow import _to_requested_schema, pyarrow_to_schema
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import sanitize_column_names
from pyiceberg.table import DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE, Table, TableProperties, WriteTask
from pyiceberg.table.locations import load_location_provider
from pyiceberg.typedef import Record
from pyiceberg.utils.config import Config


class StreamedDataFile:
    """`write` adds rows in the table's Arrow schema (`schema_to_pyarrow`, as fitted) as row groups; `close`
    finishes the file and returns its DataFile. `bytes` counts the Arrow bytes written (pyiceberg measures the
    target file size so)."""

    def __init__(self, table: Table, write_id: uuid.UUID, task_id: int):
        metadata = table.metadata
        table_schema = metadata.schema()
        self._file_schema = sanitize_column_names(table_schema)
        self._format = FileFormat(
            metadata.properties.get(TableProperties.WRITE_FILE_FORMAT, TableProperties.WRITE_FILE_FORMAT_DEFAULT)
        )
        self._model = FileFormatFactory.get(self._format)
        self._downcast = Config().get_bool(DOWNCAST_NS_TIMESTAMP_TO_US_ON_WRITE) or False
        self._format_version, self._name_mapping = metadata.format_version, table_schema.name_mapping
        self._spec_id = metadata.default_spec_id
        name = WriteTask(
            write_uuid=write_id, task_id=task_id, schema=table_schema, record_batches=[]
        ).generate_data_file_filename(self._model.file_extension())
        self.path = load_location_provider(
            table_location=metadata.location, table_properties=metadata.properties
        ).new_data_location(data_file_name=name)
        self._output = table.io.new_output(self.path)
        self._writer = self._model.create_writer(self._output, self._file_schema, metadata.properties)
        self.records, self.bytes = 0, 0

    def write(self, rows: pa.Table) -> None:
        """One row group (or more, past `write.parquet.row-group-limit` rows)."""
        rows_schema = pyarrow_to_schema(
            rows.schema,
            name_mapping=self._name_mapping,
            downcast_ns_timestamp_to_us=self._downcast,
            format_version=self._format_version,
        )
        batches = [
            _to_requested_schema(
                requested_schema=self._file_schema,
                file_schema=rows_schema,
                batch=batch,
                downcast_ns_timestamp_to_us=self._downcast,
                include_field_ids=True,
                format_model=self._model,
            )
            for batch in rows.to_batches()
        ]
        self._writer.write(pa.Table.from_batches(batches))
        self.records, self.bytes = self.records + rows.num_rows, self.bytes + rows.nbytes

    def close(self) -> DataFile:
        with self._writer:
            pass  # closing the writer finishes the file and keeps its statistics
        return DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=self.path,
            file_format=self._format,
            partition=Record(),
            file_size_in_bytes=len(self._output),
            sort_order_id=None,
            spec_id=self._spec_id,
            equality_ids=None,
            key_metadata=None,
            **self._writer.result().to_serialized_dict(),
        )
