"""Test configuration: float64 is on for the whole suite (the accuracy default).

Tests that check float32 pass float32 arrays explicitly and state their tolerance.
"""

import jax

jax.config.update("jax_enable_x64", True)
