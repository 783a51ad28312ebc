"""`sink-engine verify`: check, from what is stored, that every committed offset of a topic-partition is in
exactly one data object or one dead letter, or was settled without one and counted.

What is stored, and what it proves:
- A data object's name gives the offset of its first record (`<topic>+<partition>+<start>`), never its last.
  Its record count comes from the object's metadata where the format has it (Parquet footer, Avro block
  headers, Block-GZIP `.index.json`; `s3.object.tagging` tags `startOffset`/`endOffset`/`recordCount` for any
  format), else from its content (JSON and ByteArray lines). Tags and the Block-GZIP index also give the offset
  of its last record.
- The offsets item in DynamoDB gives the committed `next_offset`, the dead letters committed per error class,
  the offsets committed past without an object or a dead letter (`skipped.transforms`: dropped by transforms;
  `skipped.ignored`: ignored tombstones and offsets Kafka holds no record at, such as transaction markers), and
  `first_offset`, where the partition's first committed range began. All are written in the commit's
  transaction, so they describe exactly the committed range [first_offset, next_offset).
- Dead letters under `errors.deadletterqueue.s3.prefix` are JSON lines that carry their source offsets, and so
  do the records of a dead-letter topic (header `__sink_engine.dlq.source`), read with `--kafka`; without it a
  topic's letters are counted (the commits' counters), not placed.

Records skipped inside an object's range (dead letters, ignored tombstones, transforms' drops) mean that start
+ count does not give the end. Two cases:
- One file stream per topic-partition (DefaultPartitioner, tombstones not written to their own files): files
  follow each other, so object i owns the span [start_i, start_{i+1}) and holds count_i of its offsets; the
  rest of each span must be the dead letters found in it plus skipped offsets, and the unplaced ones must add
  up to the committed counters. An object copied under another start shows as a span shorter than its count
  (overlap); a deleted object or dead letter as a span with more unexplained offsets than the counters allow
  (gap). That is a proof per offset span ("proven"); where several spans hold unexplained offsets and the
  counters allow some, verify cannot tell which are legitimate and names them all.
- Several files open at once (field, time partitioners; tombstone files): one partition's files interleave.
  When every object's last offset is known (tags or the Block-GZIP index), objects that overlap in offsets
  form one generation of files closed together, and generations follow each other as files do above
  ("proven"). Otherwise only the totals can be checked ("counts only"): the records of all objects, the dead
  letters and the skipped offsets must add up to the committed range; an error names the range, not the offset.
In both cases a start offset is the first record of at most one object (two objects starting at one offset
overlap), and an object starting at or past the committed offset is not committed yet (a crashed run's upload,
rewritten with the same bytes by the next run): listed, not an error.
"""
