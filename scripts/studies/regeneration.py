"""Regenerating one study: into a copy of its folder, then compared with what is committed, and (unless --check)
the changed files written back with a new provenance line.

  1. copy results/<study>/ to a temporary folder and delete the outputs the manifest owns there;
  2. run its sweeps (`dlsim sweep`), its further dlsim runs, its generator, all writing into the copy;
  3. write the generator's blocks into the copy's README.md;
  4. compare the copy with results/<study>/ (the provenance block aside): --check reports each difference, a
     regeneration copies the changed files back and stamps the provenance block with the command and commit.
"""
import importlib.util
import os
import pathlib
import shutil
import sys
import tempfile
import time

from . import blocks, provenance, tree_diff
from .study import Study, sweep_name, sweep_output


class StudyError(Exception):
    pass


def regenerate(manifest, root, dlsim, check, ignored):
    """(seconds, [(file, difference)]): the differences between the committed study and the regenerated one."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"dlsim-{manifest.name}-") as tmp:
        work = pathlib.Path(tmp) / manifest.name
        shutil.copytree(manifest.folder, work, ignore=shutil.ignore_patterns("__pycache__"))
        for p in sorted(provenance.owned(work, manifest.outputs), reverse=True):
            p.unlink()
        study = Study(manifest, work, root, dlsim)
        for sweep in manifest.sweeps:
            name = sweep_name(manifest.folder / sweep)
            out = sweep_output(work, manifest.name, name)
            # the path as the repository spells it: summary.md names the sweep file it came from
            dlsim.sweep(os.path.relpath(manifest.folder / sweep, root), out.parent)
        for args in manifest.runs:
            dlsim.run([str(a).replace("{study}", str(work)) for a in args])
        if manifest.generator:
            load_generator(manifest).generate(study)
        readme = work / "README.md"
        text = readme.read_text()
        committed = blocks.content((manifest.folder / "README.md").read_text(), readme, blocks.PROVENANCE)
        if committed is None:
            raise StudyError(f"{manifest.folder / 'README.md'}: no '<!-- generated: {blocks.PROVENANCE} -->' "
                             "block (the command and commit that produced the study go there)")
        stale = set(blocks.names(text, readme)) - set(study.blocks) - {blocks.PROVENANCE}
        if stale:
            raise StudyError(f"{manifest.folder / 'README.md'}: blocks {', '.join(sorted(stale))} are no longer "
                             "written by the study's generator: remove their markers or write them")
        text = blocks.replace(text, readme, dict(study.blocks, **{blocks.PROVENANCE: committed}))
        readme.write_text(text)
        diffs = tree_diff.differences(manifest.folder, work)
        if committed.strip() == blocks.UNSTAMPED and not any(f == "README.md" for f, _ in diffs):
            diffs = sorted(diffs + [("README.md", "its provenance block was never written by a regeneration")])
        if diffs and not check:
            stamp = provenance.stamp(manifest.name, root, ignored)
            readme.write_text(blocks.replace(text, readme, {blocks.PROVENANCE: stamp}))
            sync(work, manifest.folder, [f for f, _ in diffs])
    return time.monotonic() - start, diffs


def load_generator(manifest):
    """The study's generate.py as a fresh module, with matplotlib's settings as a fresh process has them: a figure
    does not depend on which study's generator ran before it in this process (figures/plot_style.py sets its
    options when imported, so it is imported again)."""
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].rcdefaults()
    sys.modules.pop("plot_style", None)
    figures = str(manifest.folder.parent.parent / "figures")
    if figures not in sys.path:
        sys.path.insert(0, figures)
    path = manifest.folder / manifest.generator
    spec = importlib.util.spec_from_file_location(f"study_{manifest.name.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "generate", None)):
        raise StudyError(f"{path}: defines no generate(study)")
    return module


def sync(work, folder, changed):
    for rel in changed + ["README.md"]:
        src, dst = work / rel, folder / rel
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
        elif dst.exists():
            dst.unlink()
