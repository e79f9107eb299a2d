"""pytest setup shared by the Python tests.

By default the tests import the package of this source tree (python/gatejit);
GATEJIT_TEST_INSTALLED=1 makes them import the installed one instead (what
`pip install .` put in the environment), so the same tests check a package.
"""

import os
import secrets
import sys
from pathlib import Path

import pytest

if os.environ.get("GATEJIT_TEST_INSTALLED") != "1":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture
def gen():
    """A CUDA generator with a fresh seed per test; the seed is printed on failure."""
    import torch
    g = torch.Generator(device=torch.device("cuda", torch.cuda.current_device()))
    g.manual_seed(secrets.randbits(62))  # g.initial_seed() gives it back for the failure messages
    return g
