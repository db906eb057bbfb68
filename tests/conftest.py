"""Hypothesis profiles: ``ci`` (the default) keeps the fuzz tests to a few minutes."""

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=200, print_blob=True)
settings.register_profile("thorough", max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
