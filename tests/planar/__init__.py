"""Tests of the planar multibody builder (jaxcontact.planar)."""
