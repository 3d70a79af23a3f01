#!/usr/bin/env python3
"""Shell completion and the man page (issue 37, item 5), as a specification:

* `completion bash` is a bash script that, sourced, completes commands ("r" -> report, run), a command's
  flags ("run --ba" -> --backend), a closed set of values ("run --backend " -> sim reference cuda, and
  list's WHAT), and paths where a value is a FILE or DIR ("run --profile tests/cli/da" -> the folder);
* `completion zsh` is zsh that parses (zsh -n), when zsh is installed, and names every command;
* `man` is troff that groff formats without a warning, and every command and every flag of `run --help`
  appears in it, so the page cannot fall behind the help;
* a shell other than bash or zsh is exit 2.

Usage: completion_and_man_test.py BENCH SOURCE_DIR
"""
import re
import shutil
import subprocess
import sys


def completions(script, words, cwd):
    """What bash offers for the command line `words` (the last word being completed)."""
    program = (
        'source /dev/stdin <<< "$SCRIPT"\n'
        "COMP_WORDS=(%s)\nCOMP_CWORD=%d\n_zeppelin_bench\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n"
        % (" ".join("'%s'" % w for w in words), len(words) - 1))
    out = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=cwd,
                         env={"SCRIPT": script, "PATH": "/usr/bin:/bin"})
    return set(line for line in out.stdout.splitlines() if line)


def main():
    bench, source = sys.argv[1:3]
    failures = []
    script = subprocess.run([bench, "completion", "bash"], capture_output=True, text=True).stdout
    cases = [
        (["zeppelin-bench", "r"], {"run", "report"}),
        (["zeppelin-bench", "run", "--ba"], {"--backend"}),
        (["zeppelin-bench", "run", "--backend", ""], {"sim", "reference", "cuda"}),
        (["zeppelin-bench", "list", "mo"], {"models"}),
        (["zeppelin-bench", "compare", "--thr"], {"--threshold"}),
        (["zeppelin-bench", "run", "--profile", "tests/cli/da"], {"tests/cli/data"}),
        (["zeppelin-bench", "help", "cal"], {"calibrate"}),
    ]
    for words, expected in cases:
        got = completions(script, words, source)
        if got != expected:
            failures.append("bash completes %r to %s, expected %s" % (" ".join(words), sorted(got), sorted(expected)))

    zsh_script = subprocess.run([bench, "completion", "zsh"], capture_output=True, text=True).stdout
    if not zsh_script.startswith("#compdef zeppelin-bench"):
        failures.append("the zsh script does not start with #compdef")
    for command in ("run", "report", "compare", "list", "man", "completion"):
        if "'%s:" % command not in zsh_script:
            failures.append("the zsh script does not name the command %s" % command)
    if shutil.which("zsh"):
        checked = subprocess.run(["zsh", "-n"], input=zsh_script, capture_output=True, text=True)
        if checked.returncode != 0:
            failures.append("zsh -n: " + checked.stderr)
    else:
        print("zsh not installed: its script is checked by content only")

    page = subprocess.run([bench, "man"], capture_output=True, text=True).stdout
    if shutil.which("groff"):
        formatted = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=page, capture_output=True, text=True)
        if formatted.returncode != 0 or formatted.stderr.strip():
            failures.append("groff warns about the man page: " + formatted.stderr)
    plain = page.replace("\\-", "-").replace("\\fB", "").replace("\\fI", "").replace("\\fR", "")
    help_text = subprocess.run([bench, "run", "--help"], capture_output=True, text=True).stdout
    for flag in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", help_text)) - {"--help"}):
        if flag not in plain:
            failures.append("the man page does not document run's %s" % flag)
    for command in ("run", "plan", "compare", "report", "qualify", "calibrate", "validate", "list"):
        if ".SS " + command not in page:
            failures.append("the man page has no section for %s" % command)

    wrong = subprocess.run([bench, "completion", "fish"], capture_output=True, text=True)
    if wrong.returncode != 2:
        failures.append("completion fish: exit %d, expected 2" % wrong.returncode)

    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
