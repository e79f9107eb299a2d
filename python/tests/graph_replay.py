"""What a CUDA graph replay ran, for the tests that check which path a captured call took."""

import torch
from torch.profiler import ProfilerActivity, profile


def replay_kernels(graph):
    """Replays `graph` under the profiler; returns the GPU kernels it recorded."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if str(e.device_type).endswith("CUDA")]
