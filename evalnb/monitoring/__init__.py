"""Ongoing monitoring: a calibration bundle applied to live traffic (``evalnb.monitor``).

A floor above the calibration it applies and beside ``team``: it reads traffic, scores it
with the evaluation engine, keeps everything in a DuckDB file of its own and estimates pass
rates with human labels; the monitor view (``widgets``) and the facade sit above it.
"""
