"""The timing method every GPU benchmark here shares (gpu_bench.py, mma_sweep.py).

A call is captured R times over R rotating tensor sets in one CUDA graph (so that
weights come from HBM, not the L2), the graph repeats the R calls until a replay
takes at least TARGET_REPLAY_US, and replays are timed one by one with CUDA
events. The per-call time is the median replay time divided by the calls in it.
"""
from __future__ import annotations

import math
import statistics

TARGET_REPLAY_US = 300.0  # a replay should take at least this long (amortises launch)
MAX_LOOPS = 64
ROTATE_BYTES = 256 << 20  # the operands of one graph span at least this much (past any L2)
MIN_SETS = 4


def rotating_sets(bytes_per_set: int) -> int:
    """How many operand sets one graph rotates over so that each call reads from HBM."""
    return max(MIN_SETS, math.ceil(ROTATE_BYTES / max(1, bytes_per_set)))


class GraphTimer:
    def __init__(self, torch, device, budget_s: float = 0.5, max_reps: int = 50):
        self.torch = torch
        self.device = device
        self.budget_s = budget_s  # timed replays per measurement
        self.max_reps = max_reps

    def sleep_gpu(self, ms: float):
        """Keeps the GPU busy while the host queues the timed work (when torch offers it)."""
        if hasattr(self.torch.cuda, "_sleep"):
            self.torch.cuda._sleep(int(ms * 2.0e6))  # cycles at ~2 GHz

    def warm_clocks(self):
        """Raises the clocks before the first timing."""
        x = self.torch.empty(2**28, dtype=self.torch.uint8, device=self.device)
        for _ in range(200):
            x.add_(1)
        self.torch.cuda.synchronize()

    def capture(self, call, sets: int, loops: int):
        """A CUDA graph making `loops` passes of call(i) over every set i."""
        torch = self.torch
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):  # warm-up off the default stream, as torch advises before capture
            for i in range(sets):
                call(i)
        torch.cuda.current_stream(self.device).wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        # Captured on the warm-up's stream: a kernel with one instance per
        # stream (gatejit's K splits) was loaded there, never inside the capture.
        with torch.cuda.graph(graph, stream=side):
            for _ in range(loops):
                for i in range(sets):
                    call(i)
        return graph

    def time_replays(self, graph, reps: int):
        """µs per replay, `reps` replays timed one by one."""
        torch = self.torch
        graph.replay()
        torch.cuda.synchronize()
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        self.sleep_gpu(2)
        for a, b in pairs:
            a.record()
            graph.replay()
            b.record()
        torch.cuda.synchronize()
        return [a.elapsed_time(b) * 1e3 for a, b in pairs]

    def measure(self, call, sets: int):
        """Median µs per call, and the samples and how they were taken."""
        graph = self.capture(call, sets, 1)
        probe = statistics.median(self.time_replays(graph, 3))
        loops = 1
        if probe < TARGET_REPLAY_US:
            loops = min(MAX_LOOPS, math.ceil(TARGET_REPLAY_US / max(probe, 1e-3)))
            del graph
            graph = self.capture(call, sets, loops)
        calls = sets * loops
        replay_us = probe * loops
        reps = max(3, min(self.max_reps, int(self.budget_s * 1e6 / max(replay_us, 1e-3))))
        samples = [t / calls for t in self.time_replays(graph, reps)]
        del graph
        return statistics.median(samples), {"calls_per_replay": calls, "replays": reps,
                                            "samples_us": [round(s, 4) for s in samples]}
