"""Seeded simulations of the real actors on a virtual clock, the delivery evaluation, and the
event log's record/replay with its safety checks (``memrecall simulate``/``replay``)."""
