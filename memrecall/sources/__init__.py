"""Where documents come from: frontmatter parsing, the tree scanner, the catalog, the cached
document features and the :class:`~memrecall.sources.source.DocumentSource` protocol.

This layer does the file I/O and the worker-thread pacing the pure engine must not do.
"""
