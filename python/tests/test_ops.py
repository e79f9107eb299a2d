"""The torch custom ops (gatejit.ops) on a CUDA device: schemas, opcheck, eager,
torch.compile(fullgraph=True) with static and dynamic shapes, CUDA graph
capture, the first-use-in-capture error, supports/prepare_for, launch_count.

Run on the GPU machine (scripts/device_run.sh python); skipped with the reason
elsewhere. Results are judged by gate_reference.py on fresh random inputs with
poisoned outputs, every element checked.
"""

from __future__ import annotations

import warnings

import pytest

from gpu_prerequisites import require

torch, gatejit = require("the gatejit op tests")
import torch._dynamo  # noqa: E402

from gatejit import GatejitArgumentError, GatejitError  # noqa: E402
from gate_reference import (FP8, assert_fp8_out_matches, assert_matches, make_fp8_inputs, make_inputs,  # noqa: E402
                            poisoned_like)

N, K = 1536, 7168  # the seed shape; the test bundle has its kernels for bf16/f16 and its dynamic-M buckets
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
OPS = {name: getattr(torch.ops.gatejit, name).default for name in gatejit.ops.OP_NAMES}
SCALE_LAYOUTS = ["per_channel", "block128"]
needs_fp8 = pytest.mark.skipif(FP8 is None, reason=f"torch {torch.__version__} has no float8_e4m3fn")


# --- registration ---------------------------------------------------------------------------


def test_ops_are_registered_with_exact_mutation():
    """Each op mutates exactly what it says: nothing, `out`, `attn`."""
    expected = {"gate_epilogue": set(), "gate_epilogue_out": {"out", "out_scale"}, "gate_epilogue_inplace": {"attn"}}
    for name, mutated in expected.items():
        schema = OPS[name]._schema
        written = {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}
        assert written == mutated, f"{name}: {schema}"
        assert torch.Tag.pt2_compliant_tag in OPS[name].tags, name
    assert [r.type.kind() for r in OPS["gate_epilogue"]._schema.returns] == ["TensorType"]
    assert not OPS["gate_epilogue_out"]._schema.returns and not OPS["gate_epilogue_inplace"]._schema.returns


def test_schemas_take_an_optional_weight_scale():
    """Every op takes `Tensor? weight_scale=None` right after act and rounding
    (so calls without it keep their positions), the out op then `Tensor(b!)?
    out_scale=None` (written: an fp8 out's scales), and the registered schema
    is the one written in gatejit.ops.SCHEMAS."""
    for name in gatejit.ops.OP_NAMES:
        schema = OPS[name]._schema
        arguments = list(schema.arguments)
        if name == "gate_epilogue_out":
            out_scale = arguments.pop()
            assert out_scale.name == "out_scale" and out_scale.default_value is None, str(schema)
            assert out_scale.alias_info is not None and out_scale.alias_info.is_write, str(schema)
        last = arguments[-1]
        assert last.name == "weight_scale", f"{name}: {schema}"
        assert last.type.kind() == "OptionalType" and last.type.getElementType().kind() == "TensorType", str(schema)
        assert last.default_value is None and last.alias_info is None, f"{name}: {schema}"
        assert [a.name for a in arguments[-3:-1]] == ["act", "rounding"], f"{name}: {schema}"
        written = torch._C.parse_schema(f"gatejit::{name}{gatejit.ops.SCHEMAS[name]}")
        assert str(schema) == str(written), f"{schema} vs {written}"


# --- opcheck ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("op_name", gatejit.ops.OP_NAMES)
def test_opcheck(gen, op_name, dtype_name):
    """torch.library.opcheck: schema (mutations as declared), fake tensor
    agreement, AOT dispatch with static and dynamic shapes."""
    hidden, weight, attn = make_inputs(gen, 4, N, K, DTYPES[dtype_name])
    gatejit.prepare(hidden, weight, attn)
    if op_name == "gate_epilogue_out":
        args = (hidden, weight, attn, poisoned_like(attn), "sigmoid", "boundary")
    else:
        args = (hidden, weight, attn, "sigmoid", "boundary")
    result = torch.library.opcheck(OPS[op_name], args)
    failed = {test: outcome for test, outcome in result.items() if outcome != "SUCCESS"}
    assert not failed, f"{op_name} {dtype_name}: {failed}"
    assert set(result) >= {"test_schema", "test_faketensor", "test_aot_dispatch_dynamic"}, result


@needs_fp8
@pytest.mark.parametrize("layout", SCALE_LAYOUTS)
@pytest.mark.parametrize("op_name", gatejit.ops.OP_NAMES)
def test_opcheck_fp8(gen, op_name, layout):
    """opcheck with an fp8 weight and its scales (the optional tensor argument
    given): fake tensors and AOT dispatch with static and dynamic shapes.
    opcheck's test_schema cannot run on float8 inputs (its SchemaCheckMode
    compares inputs with torch.allclose, which float8 lacks), so the mutation
    half of it is done here: every input but the one the schema writes is
    bit-identical after the call."""
    hidden, weight, scale, attn = make_fp8_inputs(gen, 4, N, K, torch.bfloat16, layout)
    gatejit.prepare(hidden, weight, attn, weight_scale=scale)
    if op_name == "gate_epilogue_out":
        args = (hidden, weight, attn, poisoned_like(attn), "sigmoid", "boundary", scale)
    else:
        args = (hidden, weight, attn, "sigmoid", "boundary", scale)
    utils = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    result = torch.library.opcheck(OPS[op_name], args, test_utils=utils)
    failed = {test: outcome for test, outcome in result.items() if outcome != "SUCCESS"}
    assert not failed, f"{op_name} fp8 {layout}: {failed}"
    assert set(result) == set(utils), result
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    before = [t.clone() for t in tensors]
    written = {"gate_epilogue_out": 3, "gate_epilogue_inplace": 2}.get(op_name)
    OPS[op_name](*args)
    torch.cuda.synchronize()
    for index, (t, b) in enumerate(zip(tensors, before)):
        same = torch.equal(t.view(torch.uint8), b.view(torch.uint8))
        assert same != (index == written), f"{op_name}: argument {index} {'unchanged' if same else 'changed'}"


# --- eager -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("form", ["functional", "out", "inplace"])
def test_eager_forms(gen, form, dtype_name):
    dtype = DTYPES[dtype_name]
    hidden, weight, attn = make_inputs(gen, 8, N, K, dtype)
    before = gatejit.launch_count()
    if form == "functional":
        got = OPS["gate_epilogue"](hidden, weight, attn, "silu", "boundary")
        reference_attn = attn
    elif form == "out":
        got = poisoned_like(attn)
        assert OPS["gate_epilogue_out"](hidden, weight, attn, got, "silu", "boundary") is None
        reference_attn = attn
    else:
        reference_attn = attn.clone()
        got = attn
        assert OPS["gate_epilogue_inplace"](hidden, weight, attn, "silu", "boundary") is None
    torch.cuda.synchronize()
    assert gatejit.launch_count() == before + 1
    assert_matches(got, hidden, weight, reference_attn, "silu", gen, f"op {form} {dtype_name}")


@needs_fp8
@pytest.mark.parametrize("layout", SCALE_LAYOUTS)
@pytest.mark.parametrize("form", ["functional", "out", "inplace"])
def test_eager_forms_fp8(gen, form, layout):
    hidden, weight, scale, attn = make_fp8_inputs(gen, 4, N, K, torch.bfloat16, layout)
    before = gatejit.launch_count()
    if form == "functional":
        got = OPS["gate_epilogue"](hidden, weight, attn, "sigmoid", "boundary", scale)
        reference_attn = attn
    elif form == "out":
        got = poisoned_like(attn)
        assert OPS["gate_epilogue_out"](hidden, weight, attn, got, "sigmoid", "boundary", scale) is None
        reference_attn = attn
    else:
        reference_attn = attn.clone()
        got = attn
        assert OPS["gate_epilogue_inplace"](hidden, weight, attn, weight_scale=scale) is None
    torch.cuda.synchronize()
    assert gatejit.launch_count() == before + 1
    assert_matches(got, hidden, weight, reference_attn, "sigmoid", gen, f"op {form} fp8 {layout}",
                   weight_scale=scale)


def test_entry_point_picks_the_op(gen):
    """gatejit.gate_epilogue goes through the ops: their dispatcher records them."""
    hidden, weight, attn = make_inputs(gen, 4, N, K, torch.bfloat16)
    out = poisoned_like(attn)
    seen = []

    class Record(torch.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Record():
        fresh = gatejit.gate_epilogue(hidden, weight, attn)
        assert gatejit.gate_epilogue(hidden, weight, attn, out=out) is out
        in_place = attn.clone()
        assert gatejit.gate_epilogue(hidden, weight, in_place, out=in_place) is in_place
    torch.cuda.synchronize()
    assert [s for s in seen if s.startswith("gatejit.")] == [
        "gatejit.gate_epilogue.default", "gatejit.gate_epilogue_out.default", "gatejit.gate_epilogue_inplace.default"]
    for got in (fresh, out, in_place):
        assert_matches(got, hidden, weight, attn, "sigmoid", gen, "entry point")


def test_op_errors_name_the_argument(gen):
    hidden, weight, attn = make_inputs(gen, 4, N, K, torch.bfloat16)
    cases = [
        ("hidden", lambda: OPS["gate_epilogue"](hidden.cpu(), weight, attn, "sigmoid", "boundary")),
        ("weight", lambda: OPS["gate_epilogue_out"](hidden, weight.half(), attn, attn.clone(), "sigmoid", "boundary")),
        ("attn", lambda: OPS["gate_epilogue_inplace"](hidden, weight, attn[:, :-8], "sigmoid", "boundary")),
        ("act", lambda: OPS["gate_epilogue"](hidden, weight, attn, "relu", "boundary")),
        ("rounding", lambda: gatejit.gate_epilogue(hidden, weight, attn, rounding="nearest")),
        ("out", lambda: gatejit.gate_epilogue(hidden, weight, attn, out=[1, 2])),
    ]
    for argument, call in cases:
        with pytest.raises(GatejitArgumentError) as info:
            call()
        assert info.value.argument == argument, str(info.value)


@needs_fp8
def test_op_errors_fp8(gen):
    """The ops and their fake implementations name weight_scale (or weight)."""
    hidden, weight, scale, attn = make_fp8_inputs(gen, 4, N, K, torch.bfloat16, "block128")
    bf16_weight = weight.to(torch.bfloat16)
    cases = [
        ("weight_scale", lambda: OPS["gate_epilogue"](hidden, weight, attn, "sigmoid", "boundary")),
        ("weight_scale", lambda: OPS["gate_epilogue_out"](hidden, bf16_weight, attn, attn.clone(), "sigmoid",
                                                          "boundary", scale)),
        ("weight_scale", lambda: OPS["gate_epilogue_inplace"](hidden, weight, attn, "sigmoid", "boundary",
                                                              scale.half())),
        ("weight_scale", lambda: gatejit.gate_epilogue(hidden, weight, attn, weight_scale=[1.0])),
        ("weight", lambda: gatejit.gate_epilogue(hidden.float(), weight, attn.float(), weight_scale=scale)),
    ]
    for argument, call in cases:
        with pytest.raises(GatejitArgumentError) as info:
            call()
        assert info.value.argument == argument, str(info.value)
    # The fake implementations (tracing) check the same without sizes.
    with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
        h, w, s, a = (mode.from_tensor(t) for t in (hidden, weight, scale, attn))
        assert OPS["gate_epilogue"](h, w, a, "sigmoid", "boundary", s).shape == attn.shape
        for argument, call in [
                ("weight_scale", lambda: OPS["gate_epilogue"](h, w, a, "sigmoid", "boundary")),
                ("weight_scale", lambda: OPS["gate_epilogue_inplace"](h, w.to(torch.bfloat16), a, "sigmoid",
                                                                      "boundary", s)),
                ("weight_scale", lambda: OPS["gate_epilogue"](h, w, a, "sigmoid", "boundary", s.half())),
                ("weight", lambda: OPS["gate_epilogue"](h.float(), w, a.float(), "sigmoid", "boundary", s))]:
            with pytest.raises(GatejitArgumentError) as info:
                call()
            assert info.value.argument == argument, str(info.value)


# --- torch.compile ---------------------------------------------------------------------------


def _compiled_forms(dynamic):
    def functional(h, w, a):
        return gatejit.gate_epilogue(h, w, a)

    def out_form(h, w, a, o):
        gatejit.gate_epilogue(h, w, a, out=o)
        return o

    def inplace(h, w, a):
        return gatejit.gate_epilogue(h, w, a, out=a)

    return {name: torch.compile(fn, fullgraph=True, dynamic=dynamic)
            for name, fn in (("functional", functional), ("out", out_form), ("inplace", inplace))}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_fullgraph(gen, dynamic):
    """fullgraph=True compiles each form into one graph; with dynamic=True the
    first graph serves every later M (a recompile is an error)."""
    torch._dynamo.reset()
    forms = _compiled_forms(dynamic)
    ms = [4, 32, 100] if dynamic else [1, 32]
    for index, m in enumerate(ms):
        hidden, weight, attn = make_inputs(gen, m, N, K, torch.bfloat16)
        with torch._dynamo.config.patch(error_on_recompile=dynamic and index > 0):
            got_functional = forms["functional"](hidden, weight, attn)
            out = poisoned_like(attn)
            got_out = forms["out"](hidden, weight, attn, out)
            in_place = attn.clone()
            got_inplace = forms["inplace"](hidden, weight, in_place)
        torch.cuda.synchronize()
        what = f"compiled dynamic={dynamic} m={m}"
        assert_matches(got_functional, hidden, weight, attn, "sigmoid", gen, what + " functional")
        assert_matches(got_out, hidden, weight, attn, "sigmoid", gen, what + " out")
        assert_matches(out, hidden, weight, attn, "sigmoid", gen, what + " out buffer")
        assert_matches(got_inplace, hidden, weight, attn, "sigmoid", gen, what + " in place (returned)")
        assert_matches(in_place, hidden, weight, attn, "sigmoid", gen, what + " in place (attn)")


@needs_fp8
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compile_fullgraph_fp8(gen, dynamic):
    """The three forms with an fp8 weight and its scales under torch.compile(fullgraph=True)."""
    torch._dynamo.reset()

    def functional(h, w, a, s):
        return gatejit.gate_epilogue(h, w, a, weight_scale=s)

    def out_form(h, w, a, o, s):
        gatejit.gate_epilogue(h, w, a, out=o, weight_scale=s)
        return o

    def inplace(h, w, a, s):
        return gatejit.gate_epilogue(h, w, a, out=a, weight_scale=s)

    forms = {name: torch.compile(fn, fullgraph=True, dynamic=dynamic)
             for name, fn in (("functional", functional), ("out", out_form), ("inplace", inplace))}
    ms = [4, 16] if dynamic else [1]
    layout = "block128" if dynamic else "per_channel"  # one layout per compile: [N, 1] would specialise to 1
    for index, m in enumerate(ms):
        hidden, weight, scale, attn = make_fp8_inputs(gen, m, N, K, torch.bfloat16, layout)
        with torch._dynamo.config.patch(error_on_recompile=dynamic and index > 0):
            got_functional = forms["functional"](hidden, weight, attn, scale)
            out = poisoned_like(attn)
            forms["out"](hidden, weight, attn, out, scale)
            in_place = attn.clone()
            forms["inplace"](hidden, weight, in_place, scale)
        torch.cuda.synchronize()
        what = f"compiled fp8 {layout} dynamic={dynamic} m={m}"
        for name, got in (("functional", got_functional), ("out", out), ("in place", in_place)):
            assert_matches(got, hidden, weight, attn, "sigmoid", gen, f"{what} {name}", weight_scale=scale)


def _fp8_out_buffers(m, n):
    q = torch.full((m, n), float("nan"), device="cuda").to(FP8)  # e4m3 NaN (0x7f): the poison
    s = torch.full((m, n // 128), float("nan"), device="cuda")
    return q, s


@needs_fp8
@pytest.mark.parametrize("m", [1, 4, 16], ids=lambda m: f"m{m}")
def test_fp8_out_eager_and_compiled(gen, m):
    """An fp8 out with its scales (bf16 and e4m3 weights), eager and under
    torch.compile(fullgraph=True): every byte and scale within the contract."""
    torch._dynamo.reset()

    def out_form(h, w, a, o, s):
        gatejit.gate_epilogue(h, w, a, out=o, out_scale=s)
        return o, s

    compiled = torch.compile(out_form, fullgraph=True, dynamic=False)
    hidden, weight, attn = make_inputs(gen, m, N, K, torch.bfloat16)
    for form, fn in (("eager", out_form), ("compiled", compiled)):
        q, s = _fp8_out_buffers(m, N)
        fn(hidden, weight, attn, q, s)
        torch.cuda.synchronize()
        assert_fp8_out_matches(q, s, hidden, weight, attn, "sigmoid", gen, f"fp8 out {form} m={m}")
    hidden, w8, scale, attn = make_fp8_inputs(gen, m, N, K, torch.bfloat16, "block128")
    q, s = _fp8_out_buffers(m, N)
    gatejit.gate_epilogue(hidden, w8, attn, out=q, weight_scale=scale, out_scale=s)
    torch.cuda.synchronize()
    assert_fp8_out_matches(q, s, hidden, w8, attn, "sigmoid", gen, f"fp8 weight and out m={m}", weight_scale=scale)


@needs_fp8
def test_fp8_out_errors_name_the_argument(gen):
    hidden, weight, attn = make_inputs(gen, 2, N, K, torch.bfloat16)
    q, s = _fp8_out_buffers(2, N)
    cases = [
        (dict(out=q), "out_scale", "required"),
        (dict(out=torch.empty_like(attn), out_scale=s), "out_scale", "fp8 out only"),
        (dict(out=q, out_scale=s[:, :5]), "out_scale", "[2, 12]"),
        (dict(out=q, out_scale=s.double()), "out_scale", "float32"),
    ]
    for kwargs, name, says in cases:
        with pytest.raises(GatejitArgumentError) as e:
            gatejit.gate_epilogue(hidden, weight, attn, **kwargs)
        assert e.value.argument == name and says in str(e.value), str(e.value)


def test_compile_graph_holds_the_ops():
    """The compiled graph calls the gatejit ops (no graph break, no decomposition)."""
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def fn(h, w, a, o):
        x = gatejit.gate_epilogue(h, w, a)
        gatejit.gate_epilogue(h, w, x, out=o)
        return gatejit.gate_epilogue(h, w, o, out=o)

    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    h, w, a = make_inputs(g, 4, N, K, torch.bfloat16)
    torch.compile(fn, fullgraph=True, backend=backend)(h, w, a, torch.empty_like(a))
    assert len(graphs) == 1
    targets = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert [t for t in targets if t.startswith("gatejit.")] == [
        "gatejit.gate_epilogue.default", "gatejit.gate_epilogue_out.default", "gatejit.gate_epilogue_inplace.default"], targets


# --- CUDA graphs -----------------------------------------------------------------------------


def _replays(graph, make_new, captured, in_place, outputs, steps=2):
    """Each step: fresh inputs copied into the captured tensors (the last one,
    attn, also into the in-place buffer), the outputs poisoned, the graph
    replayed; yields (step, fresh inputs) for the caller's checks."""
    for step in range(steps):
        new = make_new()
        for dst, src in zip(captured, new):
            dst.copy_(src)
        in_place.copy_(new[-1])
        for o in outputs:
            o.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        yield step, new


def _capture(fn, stream):
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        result = fn()
    return graph, result


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("m", [1, 4, 32], ids=lambda m: f"m{m}")
def test_cuda_graph_capture(gen, m, compiled):
    """prepare_for before capture (on the capture stream), capture every form,
    replay on new inputs: the outputs follow. Capture runs in the default
    ("global") mode, so an allocation outside torch's graph pool or a
    synchronisation during it would fail the capture."""
    torch._dynamo.reset()
    hidden, weight, attn = make_inputs(gen, m, N, K, torch.bfloat16)
    out = poisoned_like(attn)
    in_place = attn.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())

    def body(h, w, a, o, ip):
        fresh = gatejit.gate_epilogue(h, w, a)
        gatejit.gate_epilogue(h, w, a, out=o)
        gatejit.gate_epilogue(h, w, ip, out=ip)
        return fresh

    run = torch.compile(body, fullgraph=True) if compiled else body
    with torch.cuda.stream(stream):
        explained = gatejit.prepare_for([m], N, K, torch.bfloat16)
        assert set(explained) == {m}
        for _ in range(2):  # warm-up: compile, and torch's own lazy work
            in_place.copy_(attn)
            run(hidden, weight, attn, out, in_place)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    count = gatejit.launch_count()
    graph, fresh = _capture(lambda: run(hidden, weight, attn, out, in_place), stream)
    assert gatejit.launch_count() == count + 3, "capture did not go through gatejit's launch path"
    for step, (new_hidden, new_weight, new_attn) in _replays(
            graph, lambda: make_inputs(gen, m, N, K, torch.bfloat16), (hidden, weight, attn), in_place, (out, fresh)):
        what = f"graph replay {step} m={m} compiled={compiled}"
        for name, got in (("functional", fresh), ("out", out), ("in place", in_place)):
            assert_matches(got, new_hidden, new_weight, new_attn, "sigmoid", gen, f"{what} {name}")


@needs_fp8
@pytest.mark.parametrize("layout", SCALE_LAYOUTS)
def test_cuda_graph_capture_fp8(gen, layout):
    """prepare_for with weight_dtype/weight_scale, capture the three forms, replay
    on new inputs, new fp8 weights and new scales copied into the captured ones."""
    m = 4
    hidden, weight, scale, attn = make_fp8_inputs(gen, m, N, K, torch.bfloat16, layout)
    out = poisoned_like(attn)
    in_place = attn.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())

    def body():
        fresh = gatejit.gate_epilogue(hidden, weight, attn, weight_scale=scale)
        gatejit.gate_epilogue(hidden, weight, attn, out=out, weight_scale=scale)
        gatejit.gate_epilogue(hidden, weight, in_place, out=in_place, weight_scale=scale)
        return fresh

    with torch.cuda.stream(stream):
        explained = gatejit.prepare_for([m], N, K, torch.bfloat16, weight_dtype=FP8, weight_scale=layout)
        assert set(explained) == {m}, explained
        in_place.copy_(attn)
        body()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    count = gatejit.launch_count()
    graph, fresh = _capture(body, stream)
    assert gatejit.launch_count() == count + 3
    for step, (new_hidden, new_weight, new_scale, new_attn) in _replays(
            graph, lambda: make_fp8_inputs(gen, m, N, K, torch.bfloat16, layout), (hidden, weight, scale, attn),
            in_place, (out, fresh)):
        what = f"fp8 {layout} graph replay {step}"
        for name, got in (("functional", fresh), ("out", out), ("in place", in_place)):
            assert_matches(got, new_hidden, new_weight, new_attn, "sigmoid", gen, f"{what} {name}",
                           weight_scale=new_scale)


def test_capture_as_first_use_is_a_clear_error(gen):
    """A contract never resolved in this process must not be resolved inside a
    capture: the call raises GatejitError saying what to do, the capture
    ends cleanly, and the same call works once made eagerly."""
    m, n, k = 13, 4096, 2048  # M = 13 at this shape is used by no other test
    hidden, weight, attn = make_inputs(gen, m, n, k, torch.float16)
    out = poisoned_like(attn)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(GatejitError, match="inside a CUDA graph capture") as info:
        with torch.cuda.graph(graph):
            gatejit.gate_epilogue(hidden, weight, attn, out=out, act="silu")
    assert "prepare_for" in str(info.value) and "M=13" in str(info.value), str(info.value)
    gatejit.gate_epilogue(hidden, weight, attn, out=out, act="silu")
    torch.cuda.synchronize()
    assert_matches(out, hidden, weight, attn, "silu", gen, "after the refused capture")


# --- supports / prepare_for / launch_count ---------------------------------------------------


def test_supports_answers_without_raising(gen, monkeypatch):
    hidden, weight, attn = make_inputs(gen, 4, N, K, torch.bfloat16)
    assert gatejit.supports(hidden, weight, attn) is True
    assert gatejit.supports(hidden, weight, attn, out=attn, act="silu") is True
    rejected = {
        "cpu": (hidden.cpu(), weight, attn),
        "float64": (hidden.double(), weight, attn),
        "mixed dtype": (hidden, weight.half(), attn),
        "k mismatch": (hidden, weight[:, :-8], attn),
        "not a tensor": ([1.0], weight, attn),
        "inner stride": (hidden, weight.T.contiguous().T, attn),
    }
    for what, args in rejected.items():
        assert gatejit.supports(*args) is False, what
    assert gatejit.supports(hidden, weight, attn, act="relu") is False
    with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in (hidden, weight, attn)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert gatejit.supports(*fakes) is False  # no storage: cannot be judged while tracing
        assert not [w for w in caught if "data pointer" in str(w.message)], [str(w.message) for w in caught]
    assert gatejit.supports(*(t.to("meta") for t in (hidden, weight, attn))) is False
    assert gatejit.supports_shape(4, N, K, torch.bfloat16) is True
    assert gatejit.supports_shape(4, N, K, "f16", "silu") is True
    assert gatejit.supports_shape(0, N, K, torch.bfloat16) is False
    assert gatejit.supports_shape(4, N, K, torch.int8) is False
    contract = {"m": 1, "n": N, "k": K, "dtype": "bf16", "act": "sigmoid", "target": "sm_90"}
    assert gatejit.supports_contract(contract) is True
    assert gatejit.supports_contract({"m": 1, "n": N, "k": K, "colour": "red"}) is False
    assert gatejit.supports_contract("{not json") is False
    # A runtime with no kernel source serves nothing, and says so with False.
    monkeypatch.delenv("GATEJIT_BUNDLE_PATH", raising=False)
    with gatejit.Runtime(disable_jit=True, disable_cache=True, shipped_bundle=False) as empty:
        assert gatejit.supports(hidden, weight, attn, runtime=empty) is False
        assert gatejit.supports_shape(4, N, K, torch.bfloat16, runtime=empty) is False
        assert gatejit.supports_contract(contract, runtime=empty) is False
        with pytest.raises(GatejitError, match="M = 3"):
            gatejit.prepare_for([3], N, K, torch.bfloat16, runtime=empty)


def test_prepare_for_arguments():
    explained = gatejit.prepare_for([1, 16, 16, 64], N, K, torch.bfloat16)
    assert sorted(explained) == [1, 16, 64]
    assert all(("gemv" in t or "mma" in t or "generic" in t) for t in explained.values()), explained
    bad = [("m_values", lambda: gatejit.prepare_for([], N, K, "bf16")),
           ("m_values", lambda: gatejit.prepare_for([0], N, K, "bf16")),
           ("m_values", lambda: gatejit.prepare_for(["x"], N, K, "bf16")),
           ("dtype", lambda: gatejit.prepare_for([1], N, K, "fp8")),
           ("act", lambda: gatejit.prepare_for([1], N, K, "bf16", "relu")),
           ("k", lambda: gatejit.prepare_for([1], N, 0, "bf16"))]
    for argument, call in bad:
        with pytest.raises(GatejitArgumentError) as info:
            call()
        assert info.value.argument == argument, str(info.value)


@needs_fp8
def test_supports_and_prepare_for_fp8(gen):
    hidden, weight, scale, attn = make_fp8_inputs(gen, 4, N, K, torch.bfloat16, "per_channel")
    assert gatejit.supports(hidden, weight, attn, weight_scale=scale) is True
    assert gatejit.supports(hidden, weight, attn) is False  # no scales
    assert gatejit.supports(hidden, weight.to(torch.bfloat16), attn, weight_scale=scale) is False
    for layout in SCALE_LAYOUTS:
        assert gatejit.supports_shape(4, N, K, torch.bfloat16, weight_dtype=FP8, weight_scale=layout) is True
    assert gatejit.supports_shape(4, N, K, "bf16", weight_dtype="fp8_e4m3", weight_scale=scale) is True
    assert gatejit.supports_shape(4, N, K, torch.bfloat16, weight_dtype=FP8) is False
    text = gatejit.explain(hidden, weight, attn, weight_scale=scale)
    assert "gemv" in text or "mma" in text or "generic" in text, text
    explained = gatejit.prepare_for([1, 16], N, K, torch.bfloat16, weight_dtype=FP8, weight_scale="block128")
    assert sorted(explained) == [1, 16], explained
    bad = [("weight_scale", lambda: gatejit.prepare_for([1], N, K, "bf16", weight_dtype=FP8)),
           ("weight_scale", lambda: gatejit.prepare_for([1], N, K, "bf16", weight_dtype=FP8, weight_scale="rows")),
           ("weight_scale", lambda: gatejit.prepare_for([1], N, K, "bf16", weight_scale="per_channel")),
           ("weight_scale", lambda: gatejit.prepare_for([1], N, K, "bf16", weight_dtype=FP8,
                                                        weight_scale=scale[:-1])),
           ("weight_dtype", lambda: gatejit.prepare_for([1], N, K, "bf16", weight_dtype="int4",
                                                        weight_scale="per_channel")),
           ("weight_dtype", lambda: gatejit.prepare_for([1], N, K, "f32", weight_dtype=FP8,
                                                        weight_scale="per_channel")),
           ("dtype", lambda: gatejit.prepare_for([1], N, K, FP8, weight_dtype=FP8, weight_scale="per_channel"))]
    for argument, call in bad:
        with pytest.raises(GatejitArgumentError) as info:
            call()
        assert info.value.argument == argument, str(info.value)


def test_launch_count_counts_launches(gen):
    hidden, weight, attn = make_inputs(gen, 2, N, K, torch.bfloat16)
    out = torch.empty_like(attn)
    before = gatejit.launch_count()
    for _ in range(5):
        gatejit.gate_epilogue(hidden, weight, attn, out=out)
    gatejit.gate_epilogue(hidden[:0], weight, attn[:0], out=out[:0])  # M = 0: nothing to launch
    assert gatejit.launch_count() == before + 5
