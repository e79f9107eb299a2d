"""What every GPU test module needs, or it is skipped with the reason."""

import os

import pytest


def require(what: str):
    """Skips the calling test module unless PyTorch, a CUDA device,
    libgatejit.so and a kernel source (a bundle or the JIT) are there.
    Returns the modules (torch, gatejit)."""
    torch = pytest.importorskip("torch", reason=f"{what} need PyTorch")
    if not torch.cuda.is_available():
        pytest.skip(f"{what} need a CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)
    import gatejit
    try:
        gatejit.library_path()
    except gatejit.GatejitError as e:
        pytest.skip(f"libgatejit.so is not available: {e}", allow_module_level=True)
    if not os.environ.get("GATEJIT_BUNDLE_PATH") and not gatejit.default_runtime().jit_attached:
        pytest.skip("no kernel source: set GATEJIT_BUNDLE_PATH=/path/kernels.gjb (this libgatejit.so has no JIT)",
                    allow_module_level=True)
    return torch, gatejit
