"""The practical read floor: the fastest plain streaming-read kernel over a
given number of bytes, in the same CUDA graphs and rotation as the kernels it
is compared with (python/gatejit/graph_timing.py). A Triton kernel reads the bytes as
16-byte vectors and writes one int32 per program (so nothing is elided);
several block shapes are timed and the fastest is the floor.
"""
from __future__ import annotations

import math

# (elements of int32 per load block, blocks per program, warps)
SHAPES = ((1024, 4, 4), (2048, 2, 4), (2048, 4, 8), (4096, 2, 8), (4096, 4, 8), (8192, 1, 8))


def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def stream_read(src, out, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
        pid = tl.program_id(0)
        base = pid.to(tl.int64) * (BLOCK * ITERS)
        acc = tl.zeros([BLOCK], dtype=tl.int32)
        for i in tl.static_range(ITERS):
            offs = base + i * BLOCK + tl.arange(0, BLOCK)
            acc += tl.load(src + offs, mask=offs < n, other=0)
        tl.store(out + pid, tl.sum(acc, axis=0))

    return stream_read


_STREAM_READ = None


def stream_read_launcher(torch, buffers, block, iters, warps):
    """call(i) reads buffers[i] (int32 tensors) once."""
    global _STREAM_READ
    if _STREAM_READ is None:
        _STREAM_READ = _kernel()
    n = buffers[0].numel()
    programs = math.ceil(n / (block * iters))
    outs = [torch.empty(programs, dtype=torch.int32, device=b.device) for b in buffers]

    def call(i):
        _STREAM_READ[(programs,)](buffers[i], outs[i], n, BLOCK=block, ITERS=iters, num_warps=warps)

    return call


def read_floor(torch, measure, nbytes: int, device, rotate_bytes: int, min_sets: int):
    """(best µs per call, its timing, its shape, every shape's µs) for a
    streaming read of `nbytes`, rotating over enough buffers to pass the L2."""
    n = max(4, (nbytes + 15) // 16 * 4)  # int32 elements, whole 16-byte vectors
    sets = max(min_sets, math.ceil(rotate_bytes / (4 * n)))
    buffers = [torch.ones(n, dtype=torch.int32, device=device) for _ in range(sets)]
    best = None
    every = {}
    for block, iters, warps in SHAPES:
        us, timing = measure(stream_read_launcher(torch, buffers, block, iters, warps), sets)
        every[f"{block}x{iters}/{warps}w"] = us
        if best is None or us < best[0]:
            best = (us, timing, {"block": block, "iters": iters, "warps": warps})
    del buffers
    return best[0], best[1], best[2], every
