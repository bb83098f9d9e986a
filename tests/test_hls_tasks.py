"""Every task of every Foundation test net, rendered to C++ from templates/hls/tasks.cpp.j2,
compiled with g++ (-Wall -Wextra -Werror, ap_types from hls4ml) and run on the golden's own
inputs: every output element equals the golden's."""
import subprocess

import numpy as np
import pytest

from hlsgen import pipeline
from hlsgen.backends.vitis.cpp import TEMPLATE_DIR, ap_types_dir
from hlsgen.backends.vitis.tasks import graph_task_contexts, render_tasks

NETS = ["conv_bn_relu", "depthwise_s2", "pointwise", "maxpool", "residual", "gap_linear", "mlp_w4", "mlp_w8",
        "demo_cnn", "shuffle_block"]


def _array(name, ctype, values):
    body = ", ".join(str(int(v)) for v in values)
    return f"static {ctype} {name}[{len(values)}] = {{ {body} }};"


@pytest.mark.parametrize("fmt", ["qonnx", "qcdq"])
@pytest.mark.parametrize("net", NETS)
def test_task_functions_match_golden(exported, tmp_path, net, fmt):
    g = pipeline.load(str(exported(net, fmt)), {})
    ints = pipeline.quantize_inputs(g, pipeline.float_inputs(g, [], 0))
    values = pipeline.run_golden(g, ints)
    ctxs = graph_task_contexts(g)
    lines = ['#include <cstdio>', '#include "hlsgen_requant.h"', "", render_tasks(ctxs), "", "int main() {"]
    expected = []
    for k, (task, ctx) in enumerate(zip(g.tasks, ctxs)):
        acts = [n for n in task.inputs if not g.tensors[n].is_const]
        args = []
        for j, (n, spec) in enumerate(zip(acts, [i for i in ctx["inputs"] if i.get("const") is None])):
            lines.append("    " + _array(f"t{k}_in{j}", spec["ctype"], values[n].reshape(-1)))
            args.append(f"t{k}_in{j}")
        for j, (o, spec) in enumerate(zip(task.outputs, ctx["outputs"])):
            lines.append(f"    static {spec['ctype']} t{k}_out{j}[{spec['size']}];")
            args.append(f"t{k}_out{j}")
        lines.append(f"    {ctx['fn']}({', '.join(args)});")
        for j, o in enumerate(task.outputs):
            n = g.tensors[o].size
            lines.append(f'    for (int i = 0; i < {n}; i++) std::printf("%lld\\n", (long long)t{k}_out{j}[i].to_int64());')
            expected += [int(v) for v in values[o].reshape(-1)]
    lines += ["    return 0;", "}"]
    src = tmp_path / "tasks.cpp"
    src.write_text("\n".join(lines))
    exe = tmp_path / "tasks"
    r = subprocess.run(["g++", "-std=c++14", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas",
                        "-isystem", str(ap_types_dir()), "-I", str(TEMPLATE_DIR), str(src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    got = [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    assert len(got) == len(expected)
    bad = [(i, e, v) for i, (e, v) in enumerate(zip(expected, got)) if e != v]
    assert not bad, f"{len(bad)} of {len(got)} differ; first (index, golden, C++): {bad[:5]}"


def test_hostile_onnx_names_never_reach_the_cpp(tmp_path):
    """Quotes, $(...), newlines and #include in node/tensor names: the generated C++ uses only
    sanitized identifiers and comments, compiles, and contains none of the raw text."""
    import onnx
    from onnx_builders import relu_net

    m = relu_net(input_name='x"; $(touch pwned)\n#include <x>', node_name='act\n#include "evil.h"\n}; int y(')
    p = tmp_path / "hostile.onnx"
    onnx.save(m, p)
    g = pipeline.load(str(p), {})
    code = render_tasks(graph_task_contexts(g))
    for bad in ("$(", "#include <x>", '#include "evil.h"', "int y("):
        assert bad not in code, bad
    src = tmp_path / "t.cpp"
    src.write_text('#include "hlsgen_requant.h"\n' + code + "\nint main() { return 0; }\n")
    r = subprocess.run(["g++", "-std=c++14", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-function",
                        "-isystem", str(ap_types_dir()), "-I", str(TEMPLATE_DIR), "-c", str(src), "-o", str(tmp_path / "t.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert not (tmp_path / "pwned").exists()
