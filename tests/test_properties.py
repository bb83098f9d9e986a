"""Property tests of single ops and of the numerics against plain references."""
from fractions import Fraction

import numpy as np
from hypothesis import given, settings, strategies as st

from hlsgen.ir import Graph, IntType, Quant, Task, Tensor
from hlsgen.numerics import EXACT_FLOAT, apply_requant, int_matmul, make_requant, round_shift
from hlsgen.ops import OPS


def _round_half_even(fr: Fraction) -> int:
    fl = fr.numerator // fr.denominator
    rem = fr - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1):
        return fl + 1
    return fl


@given(st.integers(-(2**62), 2**62 - 1), st.integers(0, 61))
def test_round_shift_matches_exact_rational(p, shift):
    exact = Fraction(p, 2**shift)
    got = round_shift(np.array([p], dtype=np.int64), np.int64(shift), "half_even")[0]
    assert got == _round_half_even(exact)
    assert round_shift(np.array([p], dtype=np.int64), np.int64(shift), "floor")[0] == p >> shift
    # the Python-int path used for wide products gives the same answer
    assert round_shift(np.array([p * 2**20], dtype=object), 20 + shift, "half_even")[0] == got


@given(st.integers(-(2**20), 2**20), st.integers(0, 2**20))
def test_for_range_is_the_narrowest_type(lo, span):
    hi = lo + span
    t = IntType.for_range(lo, hi)
    assert t.min <= lo and hi <= t.max
    if t.bits > 1:
        for narrower in (IntType(t.bits - 1, True), IntType(t.bits - 1, False)):
            assert not (narrower.min <= lo and hi <= narrower.max)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1e-6, 1e3), st.floats(1e-4, 10), st.floats(-50, 50), st.integers(-8, 8),
    st.lists(st.integers(-(2**20), 2**20), min_size=1, max_size=64),
)
def test_requant_matches_real_rounding(term_scale, out_scale, bias_lsb, zp, accs):
    """q = clamp(round_half_even(acc * S/s_out + b/s_out) + zp): exact except within 2^-20
    LSB of a rounding tie, where the fixed-point multiplier's 2^-31 relative error may decide."""
    acc = np.array(accs, dtype=np.int64)
    rq = make_requant([term_scale], [(-(2**20), 2**20)], bias_lsb * out_scale, out_scale, zp, -128, 127,
                      -np.inf, np.inf, 1, 0)
    got = apply_requant([acc], rq)
    real = acc.astype(np.float64) * (term_scale / out_scale) + bias_lsb
    ref = np.clip(np.rint(real) + zp, -128, 127)
    frac = np.abs(real - np.floor(real) - 0.5)
    decided = frac > 2**-20 * np.maximum(1, np.abs(real))
    assert np.array_equal(got[decided], ref[decided])
    assert np.all(np.abs(got - ref) <= 1)


def _exact_matmul(a, b):
    """a @ b in Python integers (object arrays): no rounding, no overflow."""
    return np.matmul(a.astype(object), b.astype(object))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.integers(1, 6), st.integers(1, 6), st.integers(0, 31), st.integers(0, 31),
       st.integers(0, 2**32 - 1))
def test_int_matmul_is_exact_at_every_magnitude(k, rows, cols, abits, bbits, seed):
    """Operands from 1 to 32 bits: the products' sums straddle float32's 2^24 and float64's 2^53
    (and the int64 path above), with every value at its extremes as likely as between them."""
    rng = np.random.default_rng(seed)

    def draw(shape, bits):
        lim = 1 << bits
        v = rng.integers(-lim, lim, size=shape, endpoint=True)
        ends = rng.integers(0, 3, size=shape)
        return np.where(ends == 0, lim, np.where(ends == 1, -lim, v)).astype(np.int64)
    a, b = draw((rows, k), abits), draw((k, cols), bbits)
    assert np.array_equal(int_matmul(a, b).astype(object), _exact_matmul(a, b))


def test_int_matmul_takes_the_narrowest_float_that_is_exact():
    """A float path is taken only where its sums cannot round: 2^24 + 1 rounds to 2^24 in
    float32 and 2^53 + 1 to 2^53 in float64, and int64 wraps at 2^63; int_matmul returns
    each exactly. Below 2^24, float32 is exact on the largest magnitudes it is given."""
    one = np.array([[1], [1]], dtype=np.int64)
    for big in (1 << 24, 1 << 53):
        a = np.array([[big, 1]], dtype=np.int64)
        assert int_matmul(a, one)[0, 0] == big + 1
    a = np.array([[1 << 24, 1]], dtype=np.int64)
    assert (a.astype(np.float32) @ one.astype(np.float32))[0, 0] == 1 << 24     # what float32 alone would give
    assert int_matmul(np.array([[1 << 62, 1 << 62]], dtype=np.int64), one)[0, 0] == 1 << 63   # beyond int64
    k, m = 64, (1 << 9) - 1                           # 64 x 511 x 511 < 2^24: float32, every term at its extreme
    a, b = np.full((2, k), -m, dtype=np.int64), np.full((k, 3), m, dtype=np.int64)
    assert k * m * m < EXACT_FLOAT[0][1] and (int_matmul(a, b) == -k * m * m).all()
    # broadcasting of stacked operands, as np.matmul: (2, 3, 4) @ (4, 5) and (1, 3, 4) @ (2, 4, 5)
    rng = np.random.default_rng(0)
    a, b = rng.integers(-128, 128, (2, 3, 4)), rng.integers(-8, 8, (4, 5))
    assert np.array_equal(int_matmul(a, b), a @ b)
    a, b = rng.integers(-128, 128, (1, 3, 4)), rng.integers(-8, 8, (2, 4, 5))
    assert np.array_equal(int_matmul(a, b), a @ b)


def _graph_with(op, attrs, x_shape, x_type, w=None, zx=0):
    g = Graph()
    g.add_tensor(Tensor("x", x_shape, x_type, Quant(0.1, zx)))
    inputs = ["x"]
    if w is not None:
        g.add_tensor(Tensor("w", w.shape, IntType(4, True), Quant(np.ones(w.shape[0]), np.zeros(w.shape[0]), 0), data=w))
        inputs.append("w")
    shapes = OPS[op].output_shapes(attrs, [g.tensors[i].shape for i in inputs])
    g.add_tensor(Tensor("y", shapes[0], IntType(32, True), Quant(0.1, 0)))
    g.tasks.append(Task("t", op, inputs, ["y"], attrs))
    g.inputs, g.outputs = ["x"], ["y"]
    return g


def _identity_requant(channels=1):
    """A requant with multiplier exactly 1 (2^30 >> 30) and a wide output: exposes the accumulator."""
    return make_requant([1.0], [(-(2**24), 2**24)], 0.0, 1.0, 0, -(2**31), 2**31 - 1, -np.inf, np.inf, channels, 1)


conv_cases = st.fixed_dictionaries({
    "groups": st.sampled_from([1, 2]), "cg": st.integers(1, 3), "og": st.integers(1, 3), "k": st.sampled_from([1, 2, 3]),
    "stride": st.integers(1, 3), "dil": st.integers(1, 2), "pad": st.lists(st.integers(0, 2), min_size=4, max_size=4),
    "h": st.integers(4, 8), "w": st.integers(4, 8), "zx": st.integers(-3, 3), "seed": st.integers(0, 10**6),
})


@settings(max_examples=60, deadline=None)
@given(conv_cases)
def test_conv_golden_matches_loops(c):
    rs = np.random.RandomState(c["seed"])
    C, O = c["cg"] * c["groups"], c["og"] * c["groups"]
    x = rs.randint(-128, 128, (1, C, c["h"], c["w"]))
    w = rs.randint(-8, 8, (O, c["cg"], c["k"], c["k"]))
    attrs = {"strides": (c["stride"],) * 2, "dilations": (c["dil"],) * 2, "pads": tuple(c["pad"]), "groups": c["groups"], "requant": _identity_requant()}
    if (c["h"] + c["pad"][0] + c["pad"][2] - c["dil"] * (c["k"] - 1) - 1) < 0 or (c["w"] + c["pad"][1] + c["pad"][3] - c["dil"] * (c["k"] - 1) - 1) < 0:
        return
    g = _graph_with("conv", attrs, x.shape, IntType(8, True), w, c["zx"])
    got = OPS["conv"].golden(g.tasks[0], g, [x])[0]
    # plain reference: explicit loops over the zero-point-padded input
    pt, pl, pb, pr = c["pad"]
    xp = np.full((1, C, c["h"] + pt + pb, c["w"] + pl + pr), c["zx"])
    xp[:, :, pt:pt + c["h"], pl:pl + c["w"]] = x
    _, _, OH, OW = got.shape
    ref = np.zeros_like(got)
    for o in range(O):
        gi = o // c["og"]
        for y in range(OH):
            for xx in range(OW):
                s = 0
                for ci in range(c["cg"]):
                    for i in range(c["k"]):
                        for j in range(c["k"]):
                            s += int(w[o, ci, i, j]) * (int(xp[0, gi * c["cg"] + ci, y * c["stride"] + i * c["dil"], xx * c["stride"] + j * c["dil"]]) - c["zx"])
                ref[0, o, y, xx] = s
    np.testing.assert_array_equal(got, ref)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(3, 7), st.integers(0, 10**6))
def test_pool_goldens_match_loops(k, s, p, size, seed):
    if p >= k:  # ONNX requires pad < kernel
        return
    x = np.random.RandomState(seed).randint(0, 256, (1, 2, size, size))
    attrs = {"kernel": (k, k), "strides": (s, s), "pads": (p, p, p, p), "dilations": (1, 1), "ceil_mode": False}
    g = _graph_with("maxpool", attrs, x.shape, IntType(8, False))
    got = OPS["maxpool"].golden(g.tasks[0], g, [x])[0]
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-1)
    ref = np.zeros_like(got)
    for y in range(got.shape[2]):
        for xx in range(got.shape[3]):
            ref[0, :, y, xx] = xp[0, :, y * s:y * s + k, xx * s:xx * s + k].reshape(2, -1).max(axis=1)
    np.testing.assert_array_equal(got, ref)

    attrs = dict(attrs, requant=_identity_requant())
    g = _graph_with("avgpool", attrs, x.shape, IntType(8, False), zx=5)
    got = OPS["avgpool"].golden(g.tasks[0], g, [x])[0]
    xp = np.pad(x - 5, ((0, 0), (0, 0), (p, p), (p, p)))
    for y in range(got.shape[2]):
        for xx in range(got.shape[3]):
            assert np.array_equal(got[0, :, y, xx], xp[0, :, y * s:y * s + k, xx * s:xx * s + k].reshape(2, -1).sum(axis=1))
