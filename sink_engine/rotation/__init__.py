"""Scheduled rotation (schedule.py): the driver's decision, when it plans, to cut a range at its end."""
