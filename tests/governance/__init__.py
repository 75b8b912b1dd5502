"""Tests of the governance rules (issue 14)."""
