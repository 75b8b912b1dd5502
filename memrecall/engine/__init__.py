"""The pure, sans-IO core: the plan state machine, rendering, and :mod:`~memrecall.engine.scoring`.

Nothing here reads files, clocks or threads (``tests/test_architecture.py`` checks the imports);
time, documents and pacing come in as arguments.
"""
