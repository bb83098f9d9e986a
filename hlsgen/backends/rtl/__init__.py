"""SystemVerilog backend (issue 6): parameters and memory images of the hand-written modules
in templates/rtl/, computed from IR tasks (Python decides every number, as in the HLS backend)."""
