"""Tests of the memory store (memrecall.store)."""
