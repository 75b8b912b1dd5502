"""Agent-facing memory tools (seed 003): remember, recall, expand and prune.

The contract lives in :mod:`memrecall.tools.contract` as pure functions over an
in-memory snapshot of records; a store integration feeds it and carries out
what it returns.
"""
