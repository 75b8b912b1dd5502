"""The live catalog of a memory tree: :mod:`.source` (``CatalogSource``), its change feed
(:mod:`.watch`, inotify) and its cache file (:mod:`.store`)."""
