"""The HLS requantizer (templates/hls/hlsgen_requant.h) compiled with g++ against Xilinx's
ap_types headers (from the hls4ml package) equals the golden's apply_requant on every element:
random multi-term, per-channel, half-even and floor, 64-bit-and-wider products."""
import subprocess

import jinja2
import numpy as np
import pytest

from hlsgen.backends.vitis.cpp import TEMPLATE_DIR, ap_types_dir, int_literal, requant_width
from hlsgen.numerics import apply_requant, make_requant

HARNESS = jinja2.Template(r"""
#include <cstdio>
#include "hlsgen_requant.h"

{% for c in cases %}
static void case{{ loop.index0 }}() {
    const int W = {{ c.width }};
    const long long acc[{{ c.terms }}][{{ c.n }}] = {
    {% for t in c.acc %}{ {% for v in t %}{{ v }}LL, {% endfor %} },
    {% endfor %}};
    for (int i = 0; i < {{ c.n }}; i++) {
        const int ch = i % {{ c.channels }};
        ap_int<W> p = 0;
        {% for t in range(c.terms) %}
        {
            static const long long m[{{ c.channels }}] = { {% for v in c.mult[t] %}{{ v }}LL, {% endfor %} };
            p += ap_int<W>(acc[{{ t }}][i]) * ap_int<W>(m[ch]);
        }
        {% endfor %}
        static const ap_int<W> bias[{{ c.channels }}] = { {% for v in c.bias %}{{ v }}, {% endfor %} };
        static const int shift[{{ c.channels }}] = { {% for v in c.shift %}{{ v }}, {% endfor %} };
        static const long long lo[{{ c.channels }}] = { {% for v in c.lo %}{{ v }}LL, {% endfor %} };
        static const long long hi[{{ c.channels }}] = { {% for v in c.hi %}{{ v }}LL, {% endfor %} };
        p += bias[ch];
        ap_int<W> q = hlsgen::round_shift<W>(p, shift[ch], hlsgen::{{ c.rounding }});
        q += ap_int<W>({{ c.zp }});
        long long out = hlsgen::clamp_to<ap_int<W>, W>(q, lo[ch], hi[ch]).to_int64();
        std::printf("%lld\n", out);
    }
}
{% endfor %}

int main() {
{% for c in cases %}    case{{ loop.index0 }}();
{% endfor %}    return 0;
}
""")


def _cases(seed):
    rng = np.random.default_rng(seed)
    cases, expected = [], []
    for k in range(12):
        terms = 1 + (k % 3 == 2)
        channels = [1, 3, 5][k % 3]
        wide = k % 4 == 3                                   # accumulators that push products past 64 bits
        acc_bits = 40 if wide else int(rng.integers(8, 24))
        ranges = [(-(1 << (acc_bits - 1)), (1 << (acc_bits - 1)) - 1) for _ in range(terms)]
        scales = [rng.uniform(1e-6, 1e-2, size=channels) for _ in range(terms)]
        out_scale = float(rng.uniform(0.01, 0.2))
        zp = int(rng.integers(-5, 6)) if k % 2 else 0
        rounding = "floor" if k % 5 == 4 else "half_even"
        rq = make_requant(scales, ranges, rng.normal(0, 0.5, size=channels), out_scale, zp, -128, 127,
                          np.array(-np.inf), np.array(np.inf), channels, 1, rounding)
        n = 64
        acc = [rng.integers(lo, hi, size=n, endpoint=True) for lo, hi in ranges]
        # exact ties and extremes: the values where rounding decides
        acc[0][:4] = [ranges[0][0], ranges[0][1], 0, 1]
        def per(a):
            return np.broadcast_to(np.asarray(a).reshape(-1), (channels,))
        # the golden, element by element: element i belongs to channel i % channels (axis 1)
        gold = []
        for i in range(n):
            ch = i % channels
            terms_i = [np.array([[int(a[i]) if c == ch else 0 for c in range(channels)]]) for a in acc]
            gold.append(int(apply_requant(terms_i, rq)[0, ch]))
        width = requant_width(rq)
        cases.append(dict(
            width=width, terms=terms, n=n, channels=channels, acc=[list(map(int, a)) for a in acc],
            mult=[list(map(int, per(m))) for m in rq.multipliers],
            bias=[int_literal(int(b), width) for b in per(rq.bias)],
            shift=list(map(int, per(rq.shift))), lo=list(map(int, per(rq.lo))), hi=list(map(int, per(rq.hi))),
            zp=rq.zero_point, rounding="HALF_EVEN" if rounding == "half_even" else "FLOOR"))
        expected += gold
    return cases, expected


@pytest.mark.parametrize("seed", [0, 1])
def test_cpp_requant_is_bit_exact(tmp_path, seed):
    cases, expected = _cases(seed)
    src = tmp_path / "harness.cpp"
    src.write_text(HARNESS.render(cases=cases))
    exe = tmp_path / "harness"
    cmd = ["g++", "-std=c++14", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-isystem", str(ap_types_dir()),
           "-I", str(TEMPLATE_DIR), str(src), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    got = [int(v) for v in out]
    assert len(got) == len(expected)
    bad = [(i, e, g) for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    assert not bad, f"{len(bad)} mismatches, first (index, golden, C++): {bad[:5]}"


ROUND_HARNESS = jinja2.Template(r"""
#include <cstdio>
#include "hlsgen_requant.h"
int main() {
    const int W = {{ width }};
{% for p, s in values %}    std::printf("%lld %lld\n", hlsgen::round_shift<W>(ap_int<W>({{ p }}), {{ s }}, hlsgen::HALF_EVEN).to_int64(),
                hlsgen::round_shift<W>(ap_int<W>({{ p }}), {{ s }}, hlsgen::FLOOR).to_int64());
{% endfor %}    return 0;
}
""")


def test_cpp_round_shift_ties_and_signs(tmp_path):
    """Exact ties k*2^n + 2^(n-1) (both parities of k, both signs), their neighbours and shift 0."""
    from hlsgen.numerics import round_shift

    values = []
    for n in (0, 1, 2, 5, 17, 31):
        for k in (-3, -2, -1, 0, 1, 2, 3, 1000, -1001):
            base = k * (1 << n) + ((1 << (n - 1)) if n else 0)
            for d in (-1, 0, 1):
                values.append((base + d, n))
    src = tmp_path / "round.cpp"
    src.write_text(ROUND_HARNESS.render(width=48, values=[(f"{p}LL", s) for p, s in values]))
    exe = tmp_path / "round"
    r = subprocess.run(["g++", "-std=c++14", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-isystem",
                        str(ap_types_dir()), "-I", str(TEMPLATE_DIR), str(src), "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    for (p, s), line in zip(values, lines):
        he, fl = (int(v) for v in line.split())
        assert he == int(round_shift(np.array([p]), np.array(s), "half_even")[0]), (p, s)
        assert fl == int(round_shift(np.array([p]), np.array(s), "floor")[0]), (p, s)
