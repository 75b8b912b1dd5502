"""Shared test configuration: Hypothesis profiles.

``CI`` selects Hypothesis's built-in ``ci`` profile automatically. ``dev`` is the
default here; ``nightly`` (``HYPOTHESIS_PROFILE=nightly``) runs many more examples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile(
    "nightly",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
if not os.environ.get("CI"):
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
