#!/usr/bin/python3
"""Tests of the studies' runner (scripts/studies/) without a dlsim build: a fake dlsim stands in for the binary.

  studies_test.py   (ctest "studies: runner")
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from studies import blocks, manifest, provenance, regeneration, tree_diff  # noqa: E402
from studies.dlsim import Dlsim, DlsimError  # noqa: E402

# A stand-in for the binary: `sweep FILE --results-dir DIR --jobs N` writes DIR/<name>/runs.csv with the value in
# FILE; `run EXP.yaml --json` echoes the experiment with a result; `fail` exits 1.
FAKE_DLSIM = textwrap.dedent('''\
    #!/usr/bin/python3
    import json, os, sys
    a = sys.argv[1:]
    if a[0] == "sweep":
        text = open(a[1]).read()
        name = [l.split(":")[1].strip() for l in text.splitlines() if l.startswith("name:")][0]
        value = [l.split(":")[1].strip() for l in text.splitlines() if l.startswith("value:")][0]
        out = os.path.join(a[a.index("--results-dir") + 1], name)
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "runs.csv"), "w").write("model,value\\nm," + value + "\\n")
    elif a[0] == "run":
        e = json.load(open(a[1]))
        print(json.dumps({"model": e["model"], "iteration_time_us": 10.0 * e["batch"], "sim_wall_ms": 3}))
    else:
        print("dlsim: unknown command", file=sys.stderr)
        sys.exit(1)
''')

GENERATOR = textwrap.dedent('''\
    def generate(study):
        value = study.rows("s")[0]["value"]
        j = study.dlsim.json(["run"], {"model": "m", "batch": int(value)})
        study.write("data.txt", f"{j['iteration_time_us']}\\n")
        study.block("table", f"| value | time |\\n|---|---|\\n| {value} | {j['iteration_time_us']} |")
''')

README = textwrap.dedent('''\
    # A study

    <!-- generated: provenance -->

    ''' + blocks.UNSTAMPED + '''

    <!-- end generated -->

    Hand-written text that regeneration keeps.

    <!-- generated: table -->

    (empty)

    <!-- end generated -->

    More hand-written text.
''')


class Blocks(unittest.TestCase):
    def test_replace_keeps_the_text_around_blocks(self):
        text = "a\n<!-- generated: x -->\nold\n<!-- end generated -->\nb\n"
        out = blocks.replace(text, "R.md", {"x": "new"})
        self.assertEqual(out, "a\n<!-- generated: x -->\n\nnew\n\n<!-- end generated -->\nb\n")
        self.assertEqual(blocks.content(out, "R.md", "x"), "new")
        self.assertEqual(blocks.replace(out, "R.md", {"x": "new"}), out)  # a second pass changes nothing

    def test_malformed_blocks_name_the_file_and_line(self):
        with self.assertRaisesRegex(blocks.BlockError, r"R.md:1: block 'x' has no"):
            blocks.parse("<!-- generated: x -->\ntext\n", "R.md")
        with self.assertRaisesRegex(blocks.BlockError, r"R.md:2: block 'y' starts inside block 'x'"):
            blocks.parse("<!-- generated: x -->\n<!-- generated: y -->\n<!-- end generated -->\n", "R.md")
        with self.assertRaisesRegex(blocks.BlockError, r"block 'x' appears 2 times"):
            blocks.parse("<!-- generated: x -->\n<!-- end generated -->\n" * 2, "R.md")
        with self.assertRaisesRegex(blocks.BlockError, r"no block z to write"):
            blocks.replace("text\n", "R.md", {"z": "t"})


class Manifests(unittest.TestCase):
    def setUp(self):
        self.dir = pathlib.Path(tempfile.mkdtemp()) / "s"
        self.dir.mkdir()

    def tearDown(self):
        shutil.rmtree(self.dir.parent)

    def load(self, text):
        (self.dir / "study.yaml").write_text(text)
        return manifest.load(self.dir)

    def test_errors_name_the_file_and_the_key(self):
        with self.assertRaisesRegex(manifest.ManifestError, r"study.yaml: 'sweep': unknown key"):
            self.load("question: q\ncost: cheap\nsweep: [a.yaml]\n")
        with self.assertRaisesRegex(manifest.ManifestError, r"'cost': expected cheap or long, got 'quick'"):
            self.load("question: q\ncost: quick\ngenerator: g.py\n")
        with self.assertRaisesRegex(manifest.ManifestError, r"'deterministic': expected true or false, got 'no'"):
            self.load("question: q\ncost: long\ndeterministic: 'no'\nrecord: r\n")
        with self.assertRaisesRegex(manifest.ManifestError, r"'sweeps': no file a.yaml beside the manifest"):
            self.load("question: q\ncost: long\nsweeps: [a.yaml]\noutputs: [a/]\n")
        with self.assertRaisesRegex(manifest.ManifestError, r"'question': required"):
            self.load("cost: long\nrecord: r\n")
        with self.assertRaisesRegex(manifest.ManifestError, r"nothing regenerates this study"):
            self.load("question: q\ncost: long\n")

    def test_a_record_and_a_gpu_study_are_not_regenerable(self):
        self.assertFalse(self.load("question: q\ncost: long\nrecord: campaigns\n").regenerable)
        self.assertFalse(self.load("question: q\ncost: long\nneeds_gpu: an H100\n").regenerable)


class Regeneration(unittest.TestCase):
    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp())
        fake = self.root / "fake-dlsim"
        fake.write_text(FAKE_DLSIM)
        fake.chmod(0o755)
        self.study = self.root / "results" / "demo"
        self.study.mkdir(parents=True)
        (self.study / "s.yaml").write_text("name: s\nvalue: 4\n")
        (self.study / "generate.py").write_text(GENERATOR)
        (self.study / "README.md").write_text(README)
        (self.study / "study.yaml").write_text("question: q\ncost: cheap\nsweeps: [s.yaml]\ngenerator: generate.py\n"
                                               "outputs: [s/, data.txt]\n")
        subprocess.run(["git", "init", "-q", str(self.root)], check=True)
        self.dlsim = Dlsim(fake, self.root, 2)

    def tearDown(self):
        shutil.rmtree(self.root)

    def regenerate(self, check):
        return regeneration.regenerate(manifest.load(self.study), self.root, self.dlsim, check, set())[1]

    def test_check_reports_what_regeneration_then_writes(self):
        diffs = self.regenerate(check=True)
        self.assertEqual([f for f, _ in diffs], ["README.md", "data.txt", "s/runs.csv"])
        self.assertFalse((self.study / "data.txt").exists())  # --check writes nothing
        self.assertEqual(self.regenerate(check=False), diffs)
        text = (self.study / "README.md").read_text()
        self.assertIn("| 4 | 40.0 |", text)
        self.assertIn("Hand-written text that regeneration keeps.", text)
        self.assertIn("Regenerated by `scripts/regenerate.py demo` at commit", text)
        self.assertEqual((self.study / "data.txt").read_text(), "40.0\n")
        self.assertEqual(self.regenerate(check=True), [])  # now current

    def test_a_changed_input_is_a_difference_naming_the_file_and_line(self):
        self.regenerate(check=False)
        (self.study / "s.yaml").write_text("name: s\nvalue: 5\n")
        diffs = dict(self.regenerate(check=True))
        self.assertEqual(sorted(diffs), ["README.md", "data.txt", "s/runs.csv"])
        self.assertIn("-40.0\n      +50.0", diffs["data.txt"])

    def test_a_sweep_named_like_its_study_writes_into_the_study_folder(self):
        # as `dlsim sweep configs/sweeps/default.yaml` writes results/default/
        (self.study / "study.yaml").write_text("question: q\ncost: cheap\nsweeps: [demo.yaml]\noutputs: [runs.csv]\n")
        (self.study / "demo.yaml").write_text("name: demo\nvalue: 1\n")
        (self.study / "README.md").write_text(README.replace("<!-- generated: table -->\n\n(empty)\n\n"
                                                             "<!-- end generated -->\n", ""))
        self.assertEqual([f for f, _ in self.regenerate(check=False)], ["README.md", "runs.csv"])
        self.assertEqual((self.study / "runs.csv").read_text(), "model,value\nm,1\n")

    def test_a_stale_output_is_a_difference(self):
        self.regenerate(check=False)
        (self.study / "s" / "old.csv").write_text("x\n")
        self.assertEqual(self.regenerate(check=True), [("s/old.csv", "committed, but regeneration no longer writes it")])

    def test_a_block_no_generator_writes_is_an_error(self):
        (self.study / "README.md").write_text(README + "<!-- generated: gone -->\n<!-- end generated -->\n")
        with self.assertRaisesRegex(regeneration.StudyError, "blocks gone are no longer written"):
            self.regenerate(check=True)

    def test_a_failed_run_names_the_command(self):
        with self.assertRaisesRegex(DlsimError, "fail: exit 1\ndlsim: unknown command"):
            self.dlsim.run(["fail"])
        self.assertEqual(self.dlsim.json(["fail"], allow_error=True), {"error": "dlsim: unknown command"})


class Owned(unittest.TestCase):
    def test_a_glob_ending_in_a_slash_names_folders_only(self):
        with tempfile.TemporaryDirectory() as d:
            for f in ["swap-a.yaml", "swap-a/runs.csv", "swap-a/summary.md", "fit.json", "README.md"]:
                pathlib.Path(d, f).parent.mkdir(parents=True, exist_ok=True)
                pathlib.Path(d, f).write_text("x")
            names = lambda globs: sorted(str(p.relative_to(d)) for p in provenance.owned(d, globs))  # noqa: E731
            self.assertEqual(names(["swap-*/"]), ["swap-a/runs.csv", "swap-a/summary.md"])
            self.assertEqual(names(["swap-*", "*.json"]), ["fit.json", "swap-a.yaml", "swap-a/runs.csv",
                                                            "swap-a/summary.md"])


class TreeDiff(unittest.TestCase):
    def test_binary_files_say_their_sizes(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            pathlib.Path(a, "f.png").write_bytes(b"\x89PNG\xff\x00")
            pathlib.Path(b, "f.png").write_bytes(b"\x89PNG\xfe\x00\x01")
            self.assertEqual(tree_diff.differences(a, b),
                             [("f.png", "binary file differs (6 bytes committed, 7 regenerated)")])


if __name__ == "__main__":
    os.environ.pop("DLSIM_SCRIPTS_DIR", None)
    unittest.main()
