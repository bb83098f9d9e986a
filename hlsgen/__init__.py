"""hlsgen: quantized ONNX -> integer IR -> schedule -> Vitis HLS / SystemVerilog."""
__version__ = "0.1.0"
