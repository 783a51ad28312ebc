"""`sink-engine restore`: a connector's backup back into a Kafka topic, each selected record exactly once.

What exactly once rests on:
- Each produced record carries the header `sink.restore.origin` with its original topic, partition and offset
  (stored.py), after its own headers.
- One restore into a target topic at a time: the restore lease (lease.py), which a rerun after a kill waits out;
  by then the killed restore's produce requests are settled.
- A checkpoint per source topic and target (`RESTORED#<topic>`, lease.py), written under the lease: what is known
  present in the target (the original offsets confirmed, as intervals per source partition, present.py) and the
  target offsets from which the rest must be scanned. The first restore of the topic into the target records the
  target's end offsets (nothing present); every confirm (each CONFIRM_EVERY records acknowledged, and the end)
  records what is known present then: the intervals so far, plus every record produced, all acknowledged, and as
  scan start the offset after the last acknowledged record per target partition (the scan ends at start where
  nothing was produced). Every restore takes the intervals as present without reading them, scans the target from
  the checkpoint's offsets to its end for the origins there (target.py `present`: what a killed restore wrote after
  its last confirm, or what was produced before the checkpoint existed), and produces only the selected records not
  among them. A rerun after a kill thus scans the records of one confirm window at most (and what other producers
  put into the target), and a rerun of a finished restore scans nothing, as long as the checkpoint fits its bound
  (lease.py MAX_CHECKPOINT_BYTES; past it the last one recorded stands). This holds for reruns of the same range,
  for overlapping ranges, for two restores of one range one after the other (all under the lease), and through the
  partitioner (a source partition spread over several target partitions): the intervals are by source partition and
  all target partitions are scanned. A target partition that now ends before the checkpoint's offset (the topic was
  recreated or truncated) voids the intervals: the whole target is scanned.
- An idempotent producer: within one restore no record is written twice or out of order by retries.
A non-transactional producer needs no read_committed reader of the target to be right, so no transaction is used.
Without a producer fence, the lease alone keeps a restore that stalled past it from appending records after another
took over: a record is produced only while the lease is surely still this restore's for longer than its delivery can
take (engine.py `_HeldLease`).
"""

from sink_engine.restore.engine import RestoreSummary, restore
from sink_engine.restore.request import RestoreRequest

__all__ = ["RestoreRequest", "RestoreSummary", "restore"]
