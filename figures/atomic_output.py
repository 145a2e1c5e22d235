"""Output files of the figures/ scripts written whole or not at all, as the C++ side's common/atomic_file.h.

The content goes to a new file beside the target, renamed over it only once complete: a full disk, a bad path or
a kill leaves the old file (or none), never a truncated figure or report. A failure is an OSError naming the
target (script_main.py turns it into one line and exit 2).
"""
import contextlib
import os


@contextlib.contextmanager
def replaced_atomically(path, mode="wb"):
    """with replaced_atomically(path) as f: write to f; `path` is replaced by what was written when the block ends
    without an exception, and left as it was otherwise."""
    target = os.path.realpath(path) if os.path.islink(path) else path  # a link is written through, not replaced
    if os.path.isdir(target):
        raise IsADirectoryError(21, "is a folder, not a file name to write", path)
    folder, name = os.path.split(target)
    temp = os.path.join(folder, f".{name[:160]}.tmp-{os.getpid()}")
    try:
        f = open(temp, mode)
    except OSError as e:
        raise OSError(e.errno, e.strerror, path) from None  # name the user's file, not the temporary one
    try:
        with f:
            yield f
        if os.path.exists(target):
            os.chmod(temp, os.stat(target).st_mode & 0o7777)
        os.replace(temp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(e, OSError) and (e.filename is None or e.filename in (temp, target)):
            raise OSError(e.errno, e.strerror, path) from None
        raise


def write_atomically(path, text):
    """Replaces `path` by the str `text` (UTF-8)."""
    with replaced_atomically(path) as f:
        f.write(text.encode("utf-8"))
