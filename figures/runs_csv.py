"""Reads a sweep's runs.csv as the C++ side does (experiment/sweep/resume.cc), for plot_runs.py and sweep_report.py.

One row per line. A last line without its line break is a row a killed sweep was writing (docs/using.md,
"Stopping and resuming"): it is left out with a warning, as `--resume` drops it. Any other row whose fields do
not match the header, a file that is not UTF-8 text, or one without a header, is an InputError naming the file
and line.
"""
import csv
import sys

from script_main import InputError


def read_runs_csv(path, prog):
    """(rows, columns): rows as dicts (column -> text) each with its line number under "__line__"."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x}): not a runs.csv")
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with its line break
    if torn:
        if not lines:
            raise InputError(f"{path}: no complete header line (a file cut short, or not a runs.csv)")
        sys.stderr.write(f"{prog}: warning: {path}:{len(lines) + 1}: the last line has no line break (a sweep killed "
                         "while writing it) and is left out; `dlsim sweep --resume` runs its point again\n")
    if not lines:
        raise InputError(f"{path}: empty file (expected a header line)")
    columns = None
    rows = []
    for n, line in enumerate(lines, start=1):
        line = line[:-1] if line.endswith("\r") else line
        try:
            fields = next(csv.reader([line], strict=True), []) if line else []
        except csv.Error as e:
            raise InputError(f"{path}:{n}: malformed row: {e}")
        if columns is None:
            if not any(fields):
                raise InputError(f"{path}:1: the header line is empty")
            columns = fields
            continue
        if len(fields) != len(columns):
            raise InputError(f"{path}:{n}: malformed row: {len(fields)} fields where the header has {len(columns)}")
        row = dict(zip(columns, fields))
        row["__line__"] = n
        rows.append(row)
    return rows, columns
