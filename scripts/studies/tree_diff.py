"""What differs between two copies of a study folder: files added, removed or changed, and for a changed text file
its first differing lines (what --check prints)."""
import difflib
import filecmp
import pathlib


def files(root):
    root = pathlib.Path(root)
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def differences(committed, regenerated):
    """[(relative path, what differs)] between the two folders, sorted by path."""
    a, b = files(committed), files(regenerated)
    out = []
    for rel in sorted(a | b):
        if rel not in b:
            out.append((rel, "committed, but regeneration no longer writes it"))
        elif rel not in a:
            out.append((rel, "written by regeneration, but not committed"))
        elif not filecmp.cmp(pathlib.Path(committed) / rel, pathlib.Path(regenerated) / rel, shallow=False):
            out.append((rel, first_lines(pathlib.Path(committed) / rel, pathlib.Path(regenerated) / rel)))
    return out


def first_lines(old, new, context=3, most=12):
    try:
        x, y = old.read_text().splitlines(), new.read_text().splitlines()
    except UnicodeDecodeError:
        return f"binary file differs ({old.stat().st_size} bytes committed, {new.stat().st_size} regenerated)"
    diff = list(difflib.unified_diff(x, y, "committed", "regenerated", n=context, lineterm=""))
    shown = [d if len(d) <= 240 else d[:240] + " ..." for d in diff[2:2 + most]]
    more = len(diff) - 2 - most
    changed = sum(1 for d in diff[2:] if d[:1] in "+-")
    return (f"{changed} lines differ; first:\n      " + "\n      ".join(shown) +
            (f"\n      ... ({more} more diff lines)" if more > 0 else ""))
