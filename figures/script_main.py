"""How every script in figures/ ends: a mistake in its input is one line on stderr and exit 2, never a traceback.

Imported by plot_runs.py, plot_memory.py and sweep_report.py (what the dlsim binary runs). InputError is a
mistake in what the user gave (a file, a column, an option); OSError names the file the system refused (a folder
that does not exist, no permission, a full disk). Anything else is a defect of the script: one line naming
where it happened, exit 1, as the C++ side's "internal error". Exit codes as docs/cli.md: 0 done, 1 a failure,
2 bad input, 3 matplotlib missing (plot_style.py).
"""
import io
import os
import sys
import traceback


class InputError(Exception):
    """A mistake in the user's input; its text names the file (and line, column or option)."""


def os_error_text(e):
    """'PATH: reason' for an OSError (the path the system refused and its words for why)."""
    where = e.filename if e.filename is not None else "<a file>"
    if e.filename2 is not None:
        where = f"{where} -> {e.filename2}"
    return f"{where}: {e.strerror or e}"


def run_main(prog, main, argv):
    """Runs main(argv) and exits with its status, or with 2 (bad input) or 1 (a defect) after one line."""
    # What main prints is held until it returns, then written at once: a full or closed stdout is then one
    # failed write, reported here (as the C++ side does) rather than an OSError in the middle of main.
    real_stdout, sys.stdout = sys.stdout, io.StringIO()
    try:
        rc = main(argv)
    except InputError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        rc = 2
    except OSError as e:
        sys.stderr.write(f"{prog}: {os_error_text(e)}\n")
        rc = 2
    except KeyboardInterrupt:
        rc = 130
    except SystemExit as e:  # argparse's usage errors (2), --help (0)
        rc = e.code if isinstance(e.code, int) else 2
    except Exception as e:  # a defect: one line with where it happened, not a traceback
        frame = traceback.extract_tb(e.__traceback__)[-1]
        sys.stderr.write(f"{prog}: internal error: {type(e).__name__}: {e} ({os.path.basename(frame.filename)} "
                         f"line {frame.lineno})\n")
        rc = 1
    held, sys.stdout = sys.stdout.getvalue(), real_stdout
    try:
        sys.stdout.write(held)
        sys.stdout.flush()
    except OSError as e:
        sys.stderr.write(f"{prog}: <standard output>: cannot write: {e.strerror or e}\n")
        sys.stderr.flush()
        # Exit now: the interpreter would try the unwritten buffer again at exit, print its own message and
        # exit 120.
        os._exit(2)
    sys.exit(rc or 0)
