"""Background JIT on the GPU (needs the JIT library as $GATEJIT_LIBRARY and
the shipped generic bundle beside it; scripts/device_jit.sh runs it so).

A runtime with jit="background" and an empty cache serves the first call of
an unseen contract at once from the shipped generic kernel while the
specialised kernel compiles, and a call after it lands uses the specialised
kernel; a CUDA graph captured before it landed keeps replaying what it
captured. Every output element is checked against the reference each time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpu_prerequisites import require

torch, gatejit = require("the background JIT tests")
from gate_reference import assert_matches  # noqa: E402

N, K = 1536, 7168


@pytest.fixture
def background(tmp_path):
    rt = gatejit.Runtime(jit="background", cache_dir=tmp_path / "cache")
    if not rt.jit_attached:
        rt.close()
        pytest.skip("this libgatejit has no JIT (set GATEJIT_LIBRARY to libgatejit_jit.so)")
    if not (Path(gatejit.library_path()).parent / "gatejit-generic.gjb").is_file():
        rt.close()
        pytest.skip("no shipped generic bundle beside the library")
    yield rt
    rt.close()


def operands(m, gen):
    hidden = torch.randn(m, K, generator=gen, device="cuda").to(torch.bfloat16)
    weight = (torch.randn(N, K, generator=gen, device="cuda") / K ** 0.5).to(torch.bfloat16)
    attn = torch.randn(m, N, generator=gen, device="cuda").to(torch.bfloat16)
    return hidden, weight, attn


def wait_until(rt, hidden, weight, attn, done, seconds=120.0) -> str:
    """explain's text once done(text) holds (or the last one after `seconds`)."""
    deadline = time.time() + seconds
    while True:
        text = rt.explain(hidden, weight, attn)
        if done(text) or time.time() > deadline:
            return text
        time.sleep(0.05)


def compiled(text: str) -> bool:
    """The specialised kernel is compiled (explain: "... [now done; ...]"), not yet used."""
    return "[now done" in text


def swapped_in(text: str) -> bool:
    return text.startswith("specialised")


def wait_landed(rt, hidden, weight, attn) -> str:
    """Waits for the compile, makes the call that has its module loaded off the
    calling thread, and waits for the swap; explain's text then."""
    text = wait_until(rt, hidden, weight, attn, compiled)
    assert compiled(text), text
    rt.gate_epilogue(hidden, weight, attn)  # keeps the generic kernel; the loader loads the new one
    return wait_until(rt, hidden, weight, attn, swapped_in)


def test_first_call_is_served_at_once_then_the_specialised_kernel(background, gen):
    rt = background
    hidden, weight, attn = operands(11, gen)
    out = torch.full_like(attn, float("nan"))
    start = time.perf_counter()
    rt.gate_epilogue(hidden, weight, attn, out=out)
    host_ms = (time.perf_counter() - start) * 1e3
    first = rt.explain(hidden, weight, attn)
    torch.cuda.synchronize()
    print(f"first call: {host_ms:.2f} ms on the host; {first}")
    assert "generic" in first and "compiles in the background" in first, first
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, "first call, generic kernel")

    landed = wait_landed(rt, hidden, weight, attn)
    assert swapped_in(landed) and "generic" not in landed, landed
    out.fill_(float("nan"))
    before = rt.launch_count
    rt.gate_epilogue(hidden, weight, attn, out=out)
    torch.cuda.synchronize()
    assert rt.launch_count == before + 1
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, "after landing, specialised kernel")
    print(f"after landing: {landed}")


def test_a_graph_keeps_what_it_captured(background, gen):
    rt = background
    hidden, weight, attn = operands(13, gen)
    out = torch.full_like(attn, float("nan"))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        rt.gate_epilogue(hidden, weight, attn, out=out)  # eager: generic now, compile queued
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        rt.gate_epilogue(hidden, weight, attn, out=out)
    assert swapped_in(wait_landed(rt, hidden, weight, attn))
    hidden.copy_(torch.randn(13, K, generator=gen, device="cuda"))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert_matches(out, hidden, weight, attn, "sigmoid", gen, "replay of the graph captured before landing")
