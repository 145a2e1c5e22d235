"""Records one training step on fake tensors: every aten op in issue order, every storage's life, what autograd saved.

The method is the one PyTorch's own memory tracker (torch.distributed._tools.mem_tracker) uses: a TorchDispatchMode
above a FakeTensorMode sees each aten op after autograd, with the tensors it reads and writes; a storage's memory is
the unit (views and in-place ops share it). No tensor holds data, so a step of any size records on a laptop.

How a storage's end is found without a device allocator: every tensor object the recorder sees (op outputs, the
model's parameters and buffers, the optimizer's state, the inputs, what autograd saves) gets a weakref.finalize.
PyTorch keeps a tensor's Python object alive as long as its C++ tensor lives (PyObject preservation), so the
finalizer runs when the C++ tensor dies, in program order (the garbage collector is off while recording: only
reference counts free). A storage dies when the last tensor seen on it dies. Autograd's saved tensors are seen
through saved_tensors_hooks: the pack hook stores a detached view of the saved tensor, which autograd then holds
instead of the tensor itself, so the view dies exactly when autograd releases what it saved.

Two checks make a missed holder visible instead of silently wrong (both are written to the trace and should be 0):
  premature_frees   a storage the recorder thought free was read again (a holder it never saw kept it alive);
  unseen_frees      a fresh output landed on the address of a storage the recorder thought alive.
"""
import contextlib
import weakref

import torch

from torch_compat import (DATA_DEPENDENT_OPS, DataDependentOutputException, TorchDispatchMode, dtype_name, is_fake,
                          op_name, storage_key, storage_nbytes)


# The dtype PyTorch gives a Python number it wraps as a 0-dim tensor (c10's scalar_to_tensor).
_WRAPPED_DTYPE = {bool: torch.bool, int: torch.int64, float: torch.float64}


def _jsonable(v):
    """A non-tensor argument as JSON can hold it (dtypes, devices and layouts by name, symbolic ints as ints)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else repr(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (torch.dtype,)):
        return dtype_name(v)
    if type(v).__name__ in ("SymInt", "SymFloat", "SymBool"):
        return _jsonable(v.node.hint if hasattr(v, "node") else int(v))
    return str(v)


def _is_tensor_list(v):
    return isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v)


class StepRecorder(TorchDispatchMode):
    """Enter it above a FakeTensorMode (`with fake_mode, recorder:`) and call register_existing for every tensor
    that lives before the step. Set `phase` as the step goes on; ops are recorded while `recording` is true."""

    def __init__(self, module_names, block_of_module):
        super().__init__()
        self.ops = []
        self.storages = []  # the trace's storage records, by id
        self.saved = []  # what autograd saved, in pack order
        self.phase = "forward"
        self.recording = False
        self.premature_frees = 0
        self.unseen_frees = 0
        self._module_names = module_names  # id(module) -> qualified name
        self._block_of_module = block_of_module  # id(module) -> index in the trace's blocks
        self._module_stack = []
        # One entry per saved-tensor hooks context of torch.utils.checkpoint open now: the module stack's depth when
        # it opened in backward (a recomputation), None when it opened in forward (a checkpointed region).
        self._checkpoint_hooks = []
        self._bookkeeping = 0  # > 0 while the recorder's own hooks run: their ops are not the model's
        self._live = {}  # storage key -> storage id, while alive
        self._freed = {}  # storage key -> storage id freed at that address (until the address is reused)
        self._key_of = {}  # storage id -> key
        self._holders = {}  # storage id -> tensor objects seen on it that are alive
        self._seen = {}  # id(tensor object) -> storage id, while the object lives
        self._finished = False

    # ----- storages and their holders -----

    def _new_storage(self, t, key, kind, name):
        sid = len(self.storages)
        self.storages.append({"id": sid, "bytes": storage_nbytes(t), "device": str(t.device.type), "kind": kind,
                              "name": name, "allocated_at": len(self.ops) if self.recording else None,
                              "freed_at": None})
        self._live[key] = sid
        self._freed.pop(key, None)
        self._key_of[sid] = key
        self._holders[sid] = 0
        return sid

    def _hold(self, t, sid):
        """Counts the tensor object `t` as a holder of storage `sid` until it dies."""
        if id(t) in self._seen:
            return
        self._seen[id(t)] = sid
        self._holders[sid] += 1
        f = weakref.finalize(t, self._release, id(t), sid)
        f.atexit = False

    def _release(self, obj_id, sid):
        if self._finished:  # the recorder's own teardown (the optimizer going away), not the step's
            return
        self._seen.pop(obj_id, None)
        self._holders[sid] -= 1
        if self._holders[sid] == 0:
            key = self._key_of[sid]
            if self._live.get(key) == sid:
                del self._live[key]
                self._freed[key] = sid
            self.storages[sid]["freed_at"] = len(self.ops)

    def storage_of(self, t, fresh=False, kind="activation", name=None):
        """The id of t's storage, creating its record when unknown; t becomes one of its holders. `fresh`: t is
        an op's output on a storage none of the op's inputs has (a new allocation)."""
        key = storage_key(t)
        sid = self._live.get(key)
        if fresh:
            if sid is not None:
                # A new allocation at the address of a storage thought alive: that one died unseen.
                self.unseen_frees += 1
                self.storages[sid]["freed_at"] = len(self.ops)
                del self._live[key]
            sid = self._new_storage(t, key, kind, name)
        elif sid is None:
            if self.recording and is_fake(t) and key in self._freed and \
                    storage_nbytes(t) == self.storages[self._freed[key]]["bytes"]:
                # A fake tensor on a storage the recorder saw freed is read again: a holder was missed, and the
                # storage was alive all along.
                sid = self._freed.pop(key)
                self.premature_frees += 1
                self.storages[sid]["freed_at"] = None
                self._live[key] = sid
            else:
                # Never seen before and not registered (a storage of another size on a freed address is a new
                # one: a storage never changes its size here): a constant the model keeps outside its parameters and
                # buffers, which existed before the step as a parameter does; or a real (not fake) tensor that
                # PyTorch made from a Python number, which a GPU run keeps on the host.
                sid = self._new_storage(t, key, kind if not self.recording else "constant", name)
                self.storages[sid]["allocated_at"] = None
                if not is_fake(t):
                    self.storages[sid]["host"] = True
        self._hold(t, sid)
        return sid

    def register_existing(self, t, kind, name, grad_of=None):
        """A tensor alive before the step (parameter, buffer, gradient, optimizer state, input batch)."""
        sid = self.storage_of(t, kind=kind, name=name)
        rec = self.storages[sid]
        if rec["kind"] in ("activation", "constant") or rec["name"] is None:
            rec["kind"], rec["name"] = kind, name
        if grad_of is not None:
            rec["grad_of"] = grad_of
        return sid

    def mark(self, t, kind, name, grad_of=None):
        """Names the storage of a tensor made during the step (a gradient made by backward, say)."""
        sid = self._live.get(storage_key(t))
        if sid is None:
            return None
        self.storages[sid]["kind"], self.storages[sid]["name"] = kind, name
        if grad_of is not None:
            self.storages[sid]["grad_of"] = grad_of
        return sid

    def _ref(self, t, sid, arg):
        return {"arg": arg, "storage": sid, "dtype": dtype_name(t.dtype), "shape": [int(d) for d in t.shape],
                "stride": [int(s) for s in t.stride()], "offset": int(t.storage_offset())}

    # ----- the model's modules -----

    def module_pre_hook(self, module, _inputs):
        self._module_stack.append(id(module))

    def module_post_hook(self, module, _inputs, _output):
        if self._module_stack and self._module_stack[-1] == id(module):
            self._module_stack.pop()

    # ----- checkpoint's recomputation -----

    def checkpoint_hooks_entered(self):
        """torch.utils.checkpoint opened its saved-tensor hooks (torch_compat.checkpoint_hooks_seen): in backward,
        around its recomputation of a checkpointed region."""
        self._checkpoint_hooks.append(len(self._module_stack) if self.phase == "backward" else None)

    def checkpoint_hooks_exited(self):
        depth = self._checkpoint_hooks.pop()
        if depth is not None:
            # An early stop raised out of the replayed modules before their forward hooks ran: they are done.
            del self._module_stack[depth:]

    def recomputing(self):
        return any(d is not None for d in self._checkpoint_hooks)

    def _where(self):
        """(innermost module path, outermost block index) of the op being recorded."""
        name, block = None, -1
        for mid in self._module_stack:
            if block < 0 and mid in self._block_of_module:
                block = self._block_of_module[mid]
        for mid in reversed(self._module_stack):
            if mid in self._module_names:
                name = self._module_names[mid]
                break
        return name, block

    # ----- autograd's saved tensors -----

    @contextlib.contextmanager
    def bookkeeping(self):
        self._bookkeeping += 1
        try:
            yield
        finally:
            self._bookkeeping -= 1

    def pack(self, t):
        with self.bookkeeping():
            held = t.detach()
        index = len(self.saved)
        sid = self.storage_of(held)
        rec = self._ref(held, sid, None)
        del rec["arg"]
        rec.update({"phase": self.phase, "packed_at": len(self.ops), "unpacked_at": [], "released_at": None})
        self.saved.append(rec)
        f = weakref.finalize(held, self._saved_released, index)
        f.atexit = False
        return (held, index)

    def unpack(self, packed):
        held, index = packed
        self.saved[index]["unpacked_at"].append(len(self.ops))
        return held

    def _saved_released(self, index):
        self.saved[index]["released_at"] = len(self.ops)

    # ----- the ops -----

    def _tensor_args(self, func, args, kwargs):
        """[(argument name, tensor)] in schema order (a list argument's elements as name[i]), and the other
        arguments by name."""
        tensors, others = [], {}
        for i, a in enumerate(func._schema.arguments):
            if i < len(args) and not a.kwarg_only:
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            else:
                continue
            if isinstance(v, torch.Tensor):
                tensors.append((a.name, v))
            elif _is_tensor_list(v):
                tensors.extend((f"{a.name}[{j}]", x) for j, x in enumerate(v) if isinstance(x, torch.Tensor))
            else:
                others[a.name] = _jsonable(v)
        return tensors, others

    def _check_value_read(self, func, args, kwargs):
        """Refuses an op that reads a value a fake tensor does not have (1.13's fake mode would read a zero-filled
        stand-in and go on as if the model had computed it). A constant (a fake tensor made from a Python number)
        has its value; so has a 0-dim tensor in the optimizer phase (a step count read on the host)."""
        if func._schema.name not in DATA_DEPENDENT_OPS:
            return
        for t in [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]:
            if not is_fake(t) or getattr(t, "constant", None) is not None:
                continue
            if self.phase == "optimizer" and t.dim() == 0:
                continue
            raise DataDependentOutputException(func)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten.detach.default and isinstance(args[0], (bool, int, float)):
            # torch 1.13 hands a wrapped number (the scalar of `q / math.sqrt(E)`, which autograd saves) to a
            # dispatch mode as a Python number, and detach of a number fails; its detached self is the number.
            return torch.tensor(args[0], dtype=_WRAPPED_DTYPE[type(args[0])])
        self._check_value_read(func, args, kwargs)
        if self._bookkeeping or not self.recording:
            out = func(*args, **kwargs)
            if self.recording:
                for t in (out if isinstance(out, (list, tuple)) else [out]):
                    if isinstance(t, torch.Tensor):
                        self.storage_of(t)
            return out
        schema = func._schema
        writes = any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)
        if schema.name.startswith("prim::") or (not writes and not any(
                "Tensor" in str(r.type) for r in schema.returns)):
            return func(*args, **kwargs)  # a query (prim::device, sym_size, is_nonzero): no kernel, no memory
        inputs, others = self._tensor_args(func, args, kwargs)
        in_refs = [self._ref(t, self.storage_of(t), arg) for arg, t in inputs]
        out = func(*args, **kwargs)
        aliasing = any(r.alias_info is not None for r in schema.returns)
        # (position in the flattened result, tensor): a result that is None (convolution_backward's grad_input
        # of the first layer) keeps its position empty, so that a reader knows which result each tensor is.
        results = out if isinstance(out, (list, tuple)) else [out]
        outs = [(i, t) for i, t in enumerate(results) if isinstance(t, torch.Tensor)]
        input_keys = {storage_key(t) for _, t in inputs}
        out_refs = []
        for i, t in outs:
            # A storage none of the inputs has is a new allocation, whatever the schema says: lift_fresh, which
            # aliases by its schema, returns a fake copy of a real constant.
            fresh = storage_key(t) not in input_keys
            ref = self._ref(t, self.storage_of(t, fresh=fresh), None)
            del ref["arg"]
            ref["result"] = i
            out_refs.append(ref)
        outs = [t for _, t in outs]
        module, block = self._where()
        rec = {"id": len(self.ops), "name": op_name(func), "overload": func._overloadname, "phase": self.phase,
               "inputs": in_refs, "outputs": out_refs, "args": others}
        if writes:
            rec["inplace"] = True
        if aliasing and not writes and all(storage_key(t) in input_keys for t in outs):
            rec["view"] = True  # no data moves: a view of an input's storage
        if module is not None:
            rec["module"] = module
        if block >= 0:
            rec["block"] = block
        if self.recomputing():
            rec["recompute"] = True  # run by checkpoint's recomputation, not by a backward node
        self.ops.append(rec)
        return out

    def finish(self):
        """Stops recording; the storages still alive stay so (freed_at null). Last uses are filled in."""
        self.recording = False
        self._finished = True
        last = {}
        for op in self.ops:
            if op.get("view"):
                continue  # a view reads no data
            for r in op["inputs"] + op["outputs"]:
                last[r["storage"]] = op["id"]
        for s in self.storages:
            s["last_use"] = last.get(s["id"])
        for r in self.saved:
            r["saved_by"] = self._op_touching(r["storage"], (r["packed_at"], r["packed_at"] - 1), "forward")
            r["used_by"] = None
            if r["unpacked_at"]:
                r["used_by"] = self._next_op_reading(r["storage"], r["unpacked_at"][0])

    def _op_touching(self, storage, candidates, phase):
        """The first of the candidate ops (by id) of `phase` that reads or writes `storage`: the op whose autograd
        node packed a saved tensor (a saved input is packed before its op is recorded, a saved output after)."""
        for k in candidates:
            if 0 <= k < len(self.ops) and self.ops[k]["phase"] == phase:
                op = self.ops[k]
                if any(r["storage"] == storage for r in op["inputs"] + op["outputs"]):
                    return k
        return None

    def _next_op_reading(self, storage, start):
        """The first op from `start` on that is not a view and reads `storage`, else the first op that is not a
        view: the backward kernel of the node that unpacked a saved tensor."""
        first = None
        for op in self.ops[start:]:
            if op.get("view"):
                continue
            if first is None:
                first = op["id"]
            if any(r["storage"] == storage for r in op["inputs"]):
                return op["id"]
            if op["id"] > first + 8:
                break  # a node's kernels follow its unpacking at once; further on is another node's
        return first
