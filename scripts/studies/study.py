"""What a study's generator is given: generate(study) reads the sweeps' rows, runs dlsim through study.dlsim, writes
its files under study.dir and hands the README's tables to study.block(NAME, text)."""
import csv
import pathlib

import yaml


class Study:
    def __init__(self, manifest, folder, root, dlsim):
        self.name = manifest.name
        self.manifest = manifest
        self.dir = pathlib.Path(folder)  # the folder being written: a copy of results/<name>/, synced back after
        self.root = pathlib.Path(root)  # the repository (configs/, data/): read-only for a generator
        self.dlsim = dlsim
        self.blocks = {}

    def path(self, *parts):
        return self.dir.joinpath(*parts)

    def block(self, name, text):
        """The text of the README's generated block NAME (results/README.md: generated blocks)."""
        if name in self.blocks:
            raise ValueError(f"study {self.name}: block '{name}' written twice")
        self.blocks[name] = text

    def rows(self, sweep):
        """The rows of runs.csv of the study's sweep named SWEEP (its `name:`), as dicts of strings."""
        with open(sweep_output(self.dir, self.name, sweep) / "runs.csv", newline="") as f:
            return list(csv.DictReader(f))

    def write(self, relative, text):
        p = self.path(relative)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def sweep_name(sweep_file):
    with open(sweep_file) as f:
        data = yaml.safe_load(f)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{sweep_file}: 'name': a sweep file needs a name (its output folder)")
    return name


def sweep_output(study_dir, study_name, sweep):
    """Where the sweep named SWEEP writes: <study>/<sweep>/, or the study folder itself for the sweep named like
    the study (results/default/ is where `dlsim sweep configs/sweeps/default.yaml` writes on its own)."""
    study_dir = pathlib.Path(study_dir)
    return study_dir if sweep == study_name else study_dir / sweep
