import sys

import pytest

import onyx_rapids  # noqa: F401  (chooses the backend before any test module imports numba.cuda)

# The CUDA simulator runs each GPU thread as a Python thread, and the warp-intrinsic emulation
# hands values between them: a short GIL switch interval makes those hand-offs cheaper.
sys.setswitchinterval(0.0005)


@pytest.fixture(autouse=True)
def _gpu_marker_needs_gpu(request):
    """A test marked ``gpu`` fails (never skips) when no GPU backend is active."""
    if request.node.get_closest_marker("gpu") is not None:
        from onyx_rapids import device

        if device.BACKEND != "gpu":
            pytest.fail("this test is marked gpu and needs a CUDA GPU (backend is %s)" % device.BACKEND)
    if request.node.get_closest_marker("simulator") is not None:
        from onyx_rapids import device

        if device.BACKEND != "simulator":
            pytest.fail("this test is marked simulator (its budget accounting); deselect it on a "
                        "GPU with -m 'not simulator'")
