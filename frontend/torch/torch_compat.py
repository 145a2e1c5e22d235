"""What differs between the PyTorch versions the tracer runs on (Debian's 1.13, PyPI's 2.x), in one place.

Everything here is a small accessor over an API that moved between versions; the rest of the tracer calls these
and never tests a version itself.
"""
import contextlib

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: F401  (re-exported for step_recorder.py)

try:  # 2.x names the data-dependent failures of fake tensors with several classes; 1.13 with one
    from torch._subclasses.fake_tensor import DataDependentOutputException
except ImportError:  # pragma: no cover - every supported version has it
    DataDependentOutputException = RuntimeError
try:
    from torch._subclasses.fake_tensor import DynamicOutputShapeException
except ImportError:  # pragma: no cover
    DynamicOutputShapeException = DataDependentOutputException
try:  # 2.x: a Python `if` on a fake tensor's value becomes a guard on an unbacked symbol
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
except ImportError:
    GuardOnDataDependentSymNode = DataDependentOutputException

# The ops whose result depends on tensor values (not only shapes): .item(), bool(tensor), nonzero, masked_select, ...
DATA_DEPENDENT_OPS = frozenset({"aten::_local_scalar_dense", "aten::item", "aten::is_nonzero", "aten::equal",
                                "aten::nonzero", "aten::masked_select", "aten::_unique2", "aten::unique_dim",
                                "aten::unique_consecutive", "aten::repeat_interleave", "aten::allclose"})

# What a model does that a fake tensor cannot answer: its values (.item(), `if tensor:`, nonzero's size).
DATA_DEPENDENT_ERRORS = (DataDependentOutputException, DynamicOutputShapeException, GuardOnDataDependentSymNode)


def make_fake_mode():
    """A FakeTensorMode that refuses data-dependent ops instead of guessing. Ops without a meta kernel run on
    zero-filled real tensors (1.13 lacks meta kernels for some backward ops); their shapes are what matter."""
    try:
        return FakeTensorMode(allow_fallback_kernels=True)
    except TypeError:  # pragma: no cover - a 2.x without the argument
        return FakeTensorMode()


@contextlib.contextmanager
def no_profiler_annotations():
    """torch.autograd.profiler.record_function made inert while recording. 1.13's optimizers wrap step() in it, and
    its handle is a tensor that 1.13's FakeTensorMode fails to make; it annotates a profile and changes no memory."""
    cls = torch.autograd.profiler.record_function
    saved = cls.__init__, cls.__enter__, cls.__exit__

    def init(self, name, args=None):  # 1.13's allocates its handle here, a tensor op of its own
        self.name, self.args = name, args

    cls.__init__, cls.__enter__, cls.__exit__ = init, lambda self: self, lambda self, *exc: None
    try:
        yield
    finally:
        cls.__init__, cls.__enter__, cls.__exit__ = saved


@contextlib.contextmanager
def checkpoint_hooks_seen(entered, exited):
    """Calls entered() and exited() around every saved-tensor hooks context that torch.utils.checkpoint opens (its
    hooks' pack function is defined there), exited() also when the context ends by an exception.

    Non-reentrant checkpoint opens one such context around the checkpointed forward and, in backward, one around its
    recomputation: 2.x's `_recomputation_hook`, which early stop leaves by raising `_StopRecomputationError` out of
    the replayed function once the saved tensors backward needs are made again (the replayed modules' forward hooks
    never run then); 1.13's `inner_pack`/`inner_unpack` pair, around a replay run to its end. Both are instances of
    torch.autograd.graph.saved_tensors_hooks, whose __enter__/__exit__ are wrapped here while recording."""
    cls = torch.autograd.graph.saved_tensors_hooks
    enter, exit_ = cls.__enter__, cls.__exit__

    def from_checkpoint(hooks):
        return getattr(getattr(hooks, "pack_hook", None), "__module__", None) == "torch.utils.checkpoint"

    def wrapped_enter(self):
        result = enter(self)
        if from_checkpoint(self):
            entered()
        return result

    def wrapped_exit(self, *exc):
        try:
            return exit_(self, *exc)
        finally:
            if from_checkpoint(self):
                exited()

    cls.__enter__, cls.__exit__ = wrapped_enter, wrapped_exit
    try:
        yield
    finally:
        cls.__enter__, cls.__exit__ = enter, exit_


def cast_floating(model, dtype):
    """model.to(dtype) for its floating-point parameters and buffers, by new Parameter objects (a tied parameter
    stays tied: one new object for each old one). 2.x's module.to changes a fake parameter in place by
    swap_tensors, which refuses one that two modules share (Qwen2's tied embedding and lm_head)."""
    new = {}
    for module in model.modules():
        for key, p in list(module._parameters.items()):
            if p is None or not p.is_floating_point():
                continue
            if id(p) not in new:
                with torch.no_grad():
                    new[id(p)] = torch.nn.Parameter(p.to(dtype), requires_grad=p.requires_grad)
            module._parameters[key] = new[id(p)]
        for key, b in list(module._buffers.items()):
            if b is not None and b.is_floating_point():
                module._buffers[key] = b.to(dtype)
    return model


def untyped_storage(t):
    """The storage a tensor views (2.x: untyped_storage(); 1.13: storage(), a TypedStorage over it)."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage()
    return t.storage()


def is_fake(t):
    return isinstance(t, FakeTensor)


def storage_key(t):
    """An identity of the tensor's storage while it lives: the address of its StorageImpl. Two tensors share a
    storage exactly when their keys are equal; an address is reused only after its storage was freed."""
    s = untyped_storage(t)
    return s._cdata


def storage_nbytes(t):
    s = untyped_storage(t)
    return int(s.nbytes())


def dtype_name(dtype):
    """'float32', 'bfloat16', 'int64', ...: torch's name without its module."""
    return str(dtype).replace("torch.", "")


def op_name(func):
    """'aten::convolution' (the operator, without its overload)."""
    return func._schema.name


def versions():
    """The versions of the packages a recorded step depends on, as the trace file records them."""
    import platform
    found = {"python": platform.python_version(), "torch": torch.__version__}
    for package in ("torchvision", "transformers"):
        try:
            module = __import__(package)
            found[package] = module.__version__
        except ImportError:
            found[package] = None
    return found
