"""Data files as a task hands them to the driver: pyiceberg `DataFile`s (path, partition, counts, column bounds),
pickled and base64-encoded into the task's JSON result. The driver and the executors run the same pyiceberg."""
from __future__ import annotations

import base64
import pickle


def pack(data_files: list) -> list[str]:
    return [base64.b64encode(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL)).decode("ascii") for f in data_files]


def unpack(packed: list[str]) -> list:
    return [pickle.loads(base64.b64decode(text)) for text in packed]
