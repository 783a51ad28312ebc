"""`sink-engine restore`: a connector's backup back into a Kafka topic, each selected record exactly once.

What exactly once rests on:
- Each produced record carries the header `sink.restore.origin` with its original topic, partition and offset
  (stored.py), after its own headers.
- One restore into a target topic at a time: the restore lease (lease.py), which a rerun after a kill waits out;
  by then the killed restore's produce requests are settled.
- The first restore of a source topic into a target records the target's end offsets (`RESTORED#<topic>`, under
  the lease). Every restore then reads the target from there to its end and collects the origins present
  (target.py `present`), and produces only the selected records not among them. This holds for reruns of the
  same range, for overlapping ranges, for two restores of one range one after the other, and through the
  partitioner (a source partition spread over several target partitions): all target partitions are scanned.
  The price: each restore reads back what earlier restores of the topic put into the target.
- An idempotent producer: within one restore no record is written twice or out of order by retries.
Tansu (the local broker) shows aborted transactional records to read_committed readers, and a non-transactional
producer needs no read_committed to be right, so no transaction is used. A restore that stalls past its lease
while another has taken over could still append records (no fencing of a non-transactional producer): the lease
keeper stops producing once a renewal finds the lease taken, and the producer gives up unsent records after half
the lease.
"""
from sink_engine.restore.engine import RestoreSummary, restore
from sink_engine.restore.request import RestoreRequest

__all__ = ["RestoreRequest", "RestoreSummary", "restore"]
