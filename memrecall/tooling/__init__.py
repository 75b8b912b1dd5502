"""Measurement tools beside the product: ``memrecall eval``/``calibrate``/``bench`` and friends.

Nothing in the product imports this package; only the command line does.
"""
