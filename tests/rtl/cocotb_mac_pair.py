"""cocotb test of hlsgen_mac_pair: both products equal NumPy's for EVERY int8 activation and
pair of int4 weights (65,536 x 16 combinations, driven one per cycle)."""
import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge


@cocotb.test()
async def every_product_is_exact(dut):
    a_w, w_w = int(dut.A_W.value), int(dut.W_W.value)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst_n.value = 0
    dut.in_valid.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst_n.value = 1
    a_vals = range(-(1 << (a_w - 1)), 1 << (a_w - 1))
    w_vals = range(-(1 << (w_w - 1)), 1 << (w_w - 1))
    cases = [(a, w0, w1) for a in a_vals for w0 in w_vals for w1 in w_vals]
    pending = []
    bad = []
    checked = 0
    mask_a, mask_w = (1 << a_w) - 1, (1 << w_w) - 1
    for k in range(len(cases) + 2):
        if k < len(cases):
            a, w0, w1 = cases[k]
            dut.a.value = a & mask_a
            dut.w0.value = w0 & mask_w
            dut.w1.value = w1 & mask_w
            dut.in_valid.value = 1
            pending.append(cases[k])
        else:
            dut.in_valid.value = 0
        await RisingEdge(dut.clk)
        if int(dut.out_valid.value):
            a, w0, w1 = pending.pop(0)
            got = (dut.p0.value.to_signed(), dut.p1.value.to_signed())
            checked += 1
            if got != (w0 * a, w1 * a) and len(bad) < 5:
                bad.append(((a, w0, w1), (w0 * a, w1 * a), got))
    assert checked == len(cases), f"{checked} of {len(cases)} results came out"
    assert not bad, f"first wrong (a, w0, w1), expected, got: {bad}"
