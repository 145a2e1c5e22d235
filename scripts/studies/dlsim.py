"""The one way the studies run dlsim: write the experiment as a YAML file, run the binary, read its JSON; and many
such runs on --jobs threads, results in the order asked. No generator starts dlsim any other way."""
import concurrent.futures
import json
import os
import subprocess
import tempfile


class DlsimError(Exception):
    pass


class Dlsim:
    def __init__(self, binary, root, jobs):
        self.binary = str(binary)
        self.root = str(root)  # dlsim runs here: relative paths in experiments and sweeps are the repository's
        self.jobs = jobs
        # The figures the binary draws come from this tree's figures/, whichever tree the binary was built from.
        self.env = dict(os.environ, DLSIM_SCRIPTS_DIR=os.path.join(self.root, "figures"))

    def run(self, args, check=True):
        """dlsim ARGS as given; its CompletedProcess (text). check: exit 0 (or 3, a simulated out-of-memory, which
        is a result) or DlsimError naming the command and its last lines of output."""
        argv = [self.binary] + [str(a) for a in args]
        p = subprocess.run(argv, capture_output=True, text=True, cwd=self.root, env=self.env)
        if check and p.returncode not in (0, 3):
            tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-8:])
            raise DlsimError(f"{' '.join(argv)}: exit {p.returncode}\n{tail}")
        return p

    def json(self, args, experiment=None, extra=(), allow_error=False):
        """dlsim ARGS [EXPERIMENT.yaml] --json EXTRA: its JSON without `sim_wall_ms` (the host's wall time, the only
        figure that differs between two runs). EXPERIMENT is a dict, written as YAML (JSON is YAML). A failed run
        raises DlsimError, or with allow_error gives {"error": the last line of dlsim's message}."""
        path = None
        try:
            if experiment is not None:
                with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="dlsim-study-", delete=False) as f:
                    json.dump(experiment, f)
                    path = f.name
            p = self.run(list(args) + ([path] if path else []) + ["--json"] + list(extra), check=not allow_error)
        finally:
            if path:
                os.unlink(path)
        if p.returncode not in (0, 3):
            lines = (p.stderr or p.stdout).strip().splitlines()
            return {"error": lines[-1] if lines else f"exit {p.returncode}"}
        out = json.loads(p.stdout)
        if isinstance(out, dict):
            out.pop("sim_wall_ms", None)
        return out

    def sweep(self, sweep_file, results_dir):
        """dlsim sweep SWEEP_FILE --results-dir RESULTS_DIR --jobs N (its points on N threads)."""
        p = self.run(["sweep", sweep_file, "--results-dir", results_dir, "--jobs", self.jobs], check=False)
        if p.returncode != 0:
            tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-8:])
            raise DlsimError(f"dlsim sweep {sweep_file}: exit {p.returncode}\n{tail}")

    def parallel(self, calls):
        """Each call (a function of no arguments, e.g. functools.partial(dlsim.json, ["run"], experiment)) on
        --jobs threads; the results in the order of the calls."""
        with concurrent.futures.ThreadPoolExecutor(max(1, self.jobs)) as pool:
            return [f.result() for f in [pool.submit(c) for c in calls]]
