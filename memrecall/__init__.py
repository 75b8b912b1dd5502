"""memrecall: recall long-term memory into an agent's prompt, on time and exactly once."""

__version__ = "0.1.0"
