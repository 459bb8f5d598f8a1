"""``python -m tessera ARGS...`` runs the ``tessera`` command, with the same
subcommands and options (``python -m tessera --help``). A wheel holds the command
in this package folder; in the build folder it is build/tools/tessera."""
import os
import sys


def _command() -> str:
    """The path of the ``tessera`` command that belongs to this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "tessera"),  # installed from a wheel
                  os.path.join(here, os.pardir, os.pardir, "tools", "tessera")]  # build/python/tessera
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    sys.exit(f"python -m tessera: expected the tessera command at {candidates[0]}, found none (install tessera "
             "with pip, whose wheel holds it, or run it from a build folder after `ninja tools/tessera`)")


def main() -> None:
    """Replaces this process with the ``tessera`` command and this process's arguments."""
    tool = _command()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(tool, ["tessera"] + sys.argv[1:])


if __name__ == "__main__":
    main()
