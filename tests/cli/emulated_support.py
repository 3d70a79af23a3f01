"""What the emulated-cluster tests share: the script, the skip rule and one run on a fresh cluster."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "scripts", "emulated-cluster.sh")


def skip(reason):
    """ctest's SKIP_RETURN_CODE is 77: the reason is the output."""
    print(f"SKIP: {reason}")
    sys.exit(77)


def cluster_env(prefix):
    """The environment of a cluster named after this process, or a skip where none can be made."""
    if shutil.which("mpirun") is None:
        skip("mpirun is not installed")
    env = dict(os.environ, ZB_EMU_PREFIX=f"{prefix}{os.getpid() % 100000}")
    check = subprocess.run([CLUSTER, "check"], env=env, capture_output=True, text=True)
    if check.returncode != 0:
        skip(check.stdout.strip() or check.stderr.strip())
    return env


def run_on_cluster(env, command, slow=None):
    """Brings a 4-rail cluster up (rail rate-limited by `slow`, "RAIL=RATE"), runs `command` on it under
    mpirun, and takes the cluster down whatever happens."""
    subprocess.run([CLUSTER, "up", "--rails", "4"] + (["--slow", slow] if slow else []), env=env, check=True)
    try:
        return subprocess.run([CLUSTER, "run", "--"] + command, env=env, capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run([CLUSTER, "down"], env=env)
