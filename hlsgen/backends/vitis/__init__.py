"""Vitis HLS backend (issue 5). So far: the C++ numerics the emitted kernels share, proven
bit-exact against the golden by compiling them with g++ and Xilinx's ap_types headers."""
