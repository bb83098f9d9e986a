"""Verification: float reference execution and golden comparisons (csim/cocotb runners later)."""
