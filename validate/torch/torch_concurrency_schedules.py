"""The concurrent schedules of torch_concurrency_reference.py: how a PyTorch user would put independent work of
one training step on separate CUDA streams, written as rewrites of torchvision models' forward functions (same
modules, same parameters, so the weights stay identical to the plain model's).

  branch-streams  every inception block (GoogLeNet's Inception, Inception-v3's InceptionA..E) runs each branch on
                  its own side stream and joins them before the channel concatenation. Autograd runs each
                  backward op on the stream of its forward op, so the backward is branch-parallel too.
  dgrad-wgrad     every nn.Conv2d's backward computes the input gradient on the current stream and the weight
                  gradient on a side stream at the same time.

On the CPU there are no streams: StreamKit turns every stream operation into a no-op, the branches run one after
another, and the rewrite must then give exactly the plain model's loss and gradients (what --dry-run checks).
"""
import contextlib
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


class StreamKit:
    """Stream operations that do nothing on the CPU, so one rewrite serves both the GPU run and the CPU check."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.streams_created = 0

    def new_stream(self):
        self.streams_created += 1
        return torch.cuda.Stream() if self.cuda else None

    def current(self):
        return torch.cuda.current_stream() if self.cuda else None

    def on(self, stream):
        return torch.cuda.stream(stream) if self.cuda else contextlib.nullcontext()

    def wait(self, waiter, waited):
        if self.cuda:
            waiter.wait_stream(waited)

    def record(self, tensor, stream):
        # A tensor allocated on one stream and used on another: without record_stream the caching allocator could
        # hand its memory to the allocating stream again while the other stream still reads it.
        if self.cuda and tensor is not None:
            tensor.record_stream(stream)


def _chain(block, names):
    """The branch that applies block's submodules `names` in order."""
    mods = [getattr(block, n) for n in names]
    return lambda x: functools.reduce(lambda t, m: m(t), mods, x)


def _pool_then(pool, block, name):
    conv = getattr(block, name)
    return lambda x: conv(pool(x))


def _split_tail(block, head, tail_a, tail_b):
    """Inception-v3's InceptionE branches end in two parallel convs whose outputs are concatenated; the split stays
    inside the branch (one stream per branch, as the brief of issue 30 asks)."""
    run_head = _chain(block, head)
    a, b = getattr(block, tail_a), getattr(block, tail_b)

    def branch(x):
        h = run_head(x)
        return torch.cat([a(h), b(h)], 1)
    return branch


def _avg3(x):
    return F.avg_pool2d(x, kernel_size=3, stride=1, padding=1)


def _max3s2(x):
    return F.max_pool2d(x, kernel_size=3, stride=2)


# The branches of each torchvision inception block, by class name, in the order the block concatenates them.
# Read from torchvision's googlenet.py / inception.py (0.14 and 0.26 agree); --dry-run proves each description
# computes the same function as the block's own forward.
_BRANCHES = {
    "Inception": lambda b: [b.branch1, b.branch2, b.branch3, b.branch4],  # GoogLeNet
    "InceptionA": lambda b: [_chain(b, ["branch1x1"]),
                             _chain(b, ["branch5x5_1", "branch5x5_2"]),
                             _chain(b, ["branch3x3dbl_1", "branch3x3dbl_2", "branch3x3dbl_3"]),
                             _pool_then(_avg3, b, "branch_pool")],
    "InceptionB": lambda b: [_chain(b, ["branch3x3"]),
                             _chain(b, ["branch3x3dbl_1", "branch3x3dbl_2", "branch3x3dbl_3"]),
                             _max3s2],
    "InceptionC": lambda b: [_chain(b, ["branch1x1"]),
                             _chain(b, ["branch7x7_1", "branch7x7_2", "branch7x7_3"]),
                             _chain(b, ["branch7x7dbl_%d" % i for i in range(1, 6)]),
                             _pool_then(_avg3, b, "branch_pool")],
    "InceptionD": lambda b: [_chain(b, ["branch3x3_1", "branch3x3_2"]),
                             _chain(b, ["branch7x7x3_%d" % i for i in range(1, 5)]),
                             _max3s2],
    "InceptionE": lambda b: [_chain(b, ["branch1x1"]),
                             _split_tail(b, ["branch3x3_1"], "branch3x3_2a", "branch3x3_2b"),
                             _split_tail(b, ["branch3x3dbl_1", "branch3x3dbl_2"], "branch3x3dbl_3a",
                                         "branch3x3dbl_3b"),
                             _pool_then(_avg3, b, "branch_pool")],
}


def _branches_on_streams(kit, side_streams, branches, x):
    main = kit.current()
    outputs = []
    for branch, side in zip(branches, side_streams):
        kit.wait(side, main)  # x was produced on main
        with kit.on(side):
            kit.record(x, side)
            y = branch(x)
        kit.record(y, main)  # allocated on side, read by the concatenation on main
        outputs.append(y)
    for side in side_streams[:len(branches)]:
        kit.wait(main, side)
    return torch.cat(outputs, 1)


def apply_branch_streams(model, kit):
    """Rewrites every inception block of model to run its branches on side streams shared by all blocks (a user
    makes a few streams once, not a few per block). Returns the number of streams the schedule uses."""
    blocks = [m for m in model.modules() if type(m).__name__ in _BRANCHES
              and type(m).__module__.startswith("torchvision.")]
    if not blocks:
        raise ValueError("branch-streams: %s has no torchvision inception blocks" % type(model).__name__)
    per_block = [(_BRANCHES[type(m).__name__](m), m) for m in blocks]
    sides = [kit.new_stream() for _ in range(max(len(br) for br, _ in per_block))]
    for branches, block in per_block:
        # An instance attribute shadows the class's forward; nn.Module.__call__ looks up self.forward.
        block.forward = functools.partial(_branches_on_streams, kit, sides, branches)
    return 1 + len(sides)


class _ConvConcurrentWgrad(torch.autograd.Function):
    """F.conv2d whose backward splits the input gradient (current stream) from the weight gradient (side stream)."""

    @staticmethod
    def forward(ctx, x, weight, bias, conv, kit, side):
        ctx.save_for_backward(x, weight)
        ctx.conv, ctx.kit, ctx.side, ctx.has_bias = conv, kit, side, bias is not None
        return F.conv2d(x, weight, bias, conv.stride, conv.padding, conv.dilation, conv.groups)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        conv, kit, side = ctx.conv, ctx.kit, ctx.side
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        geometry = (list(conv.stride), list(conv.padding), list(conv.dilation), False,
                    [0] * len(conv.stride), conv.groups)
        bias_sizes = [weight.shape[0]] if ctx.has_bias else None
        aten_backward = torch.ops.aten.convolution_backward
        main = kit.current()
        kit.wait(side, main)  # grad_out was produced on main
        grad_x = grad_w = grad_b = None
        if need_x:
            grad_x = aten_backward(grad_out, x, weight, bias_sizes, *geometry, [True, False, False])[0]
        if need_w or need_b:
            with kit.on(side):
                kit.record(grad_out, side)
                kit.record(x, side)
                _, grad_w, grad_b = aten_backward(grad_out, x, weight, bias_sizes, *geometry,
                                                  [False, bool(need_w), bool(need_b)])
            kit.record(grad_w, main)  # the engine accumulates them into .grad on main
            kit.record(grad_b, main)
            kit.wait(main, side)
        return grad_x, grad_w, grad_b, None, None, None


def _conv_forward(conv, kit, side, x):
    return _ConvConcurrentWgrad.apply(x, conv.weight, conv.bias, conv, kit, side)


def apply_dgrad_wgrad(model, kit):
    """Rewrites every nn.Conv2d of model so its backward runs dgrad and wgrad concurrently. Returns the number of
    streams the schedule uses."""
    if not hasattr(torch.ops.aten, "convolution_backward"):
        raise RuntimeError("dgrad-wgrad needs torch.ops.aten.convolution_backward (PyTorch >= 1.11); this is "
                           "PyTorch %s" % torch.__version__)
    side = kit.new_stream()
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    for conv in convs:
        if conv.padding_mode != "zeros" or isinstance(conv.padding, str):
            raise ValueError("dgrad-wgrad: a Conv2d with padding %r / padding_mode %r is not handled"
                             % (conv.padding, conv.padding_mode))
        conv.forward = functools.partial(_conv_forward, conv, kit, side)
    if not convs:
        raise ValueError("dgrad-wgrad: %s has no nn.Conv2d" % type(model).__name__)
    return 2


SCHEDULES = {"branch-streams": apply_branch_streams, "dgrad-wgrad": apply_dgrad_wgrad}


def apply_schedule(model, schedule, kit):
    """Applies a named schedule to model in place; returns the number of streams it uses (serial: 1)."""
    if schedule == "serial":
        return 1
    if schedule not in SCHEDULES:
        raise ValueError("unknown schedule %r (known: serial, %s)" % (schedule, ", ".join(SCHEDULES)))
    return SCHEDULES[schedule](model, kit)
