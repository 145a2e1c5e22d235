"""Reads a memory snapshot (pickle) without running anything from it, for plot_memory.py.

A pickle can name any Python callable and have the unpickler call it (os.system, say): pickle.load on a file
someone sent runs their code. A memory snapshot holds only plain data — PyTorch's torch.cuda.memory._snapshot()
and dlsim's experiment/snapshot/pickle_writer.cc both write dicts, lists, str, int, float, bool and None, which
unpickle by opcodes of their own without naming any class — so the unpickler here admits no name at all: a
pickle that names one (a class, a function, a reducer) is refused before anything is built from it. Protocols
0-5 are read as Python reads them.
"""
import io
import pickle

from script_main import InputError


class _DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise InputError(f"names the Python object {module}.{name}: a memory snapshot holds only dicts, lists, "
                         "strings and numbers, and dlsim runs nothing from an input file; refused")

    def persistent_load(self, pid):
        raise InputError("holds a persistent reference (an object stored outside the file): refused")


def load_snapshot_pickle(path):
    """The unpickled value of the file at `path`; InputError naming the file for anything but plain data."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return _DataOnlyUnpickler(io.BytesIO(data)).load()
    except InputError as e:
        raise InputError(f"{path}: {e}")
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to be a memory snapshot")
    except MemoryError:
        raise InputError(f"{path}: too large to read as a memory snapshot")
    except Exception as e:  # pickle's own errors on a file that is not a pickle (UnpicklingError, EOFError, ...)
        raise InputError(f"{path}: not a pickled memory snapshot ({type(e).__name__}: {e})")
