"""Peak RSS of one run: `measured(argv)` runs `python argv...` in a fresh measuring process,
which runs it as its only child and reads resource.getrusage(RUSAGE_CHILDREN).ru_maxrss, so
each figure is that run's own peak (imports included), never an earlier run's. The run
prints a JSON object as its last line; measured() returns it with "peak_rss_mib" added."""
import json
import resource
import subprocess
import sys


def measured(argv):
    out = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit status {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    out = subprocess.run([sys.executable, *sys.argv[1:]], capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(result))
