"""Backends: render a Schedule into files (Vitis HLS project now; SystemVerilog with issue 6)."""
