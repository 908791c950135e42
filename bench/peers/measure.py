"""Runs one child process and measures it: wall time and peak resident memory.

Peak memory is GNU time's %M for that child alone (or a descendant it waited
for, such as the C++ compiler under `switchyard compile`). wait4 from this
process would not do: a child's high-water mark starts at its parent's size
when it forks and execs, and this runner has NumPy loaded.
"""
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

GNU_TIME = "/usr/bin/time"  # Debian package `time`


@dataclass
class Measured:
    returncode: int  # None: timed out
    stdout: str
    stderr: str
    wall_s: float
    peak_rss_mib: float

    def ok(self):
        return self.returncode == 0

    def first_error_line(self):
        """The first line that says what went wrong, for a table cell."""
        if self.returncode is None:
            return f"timed out after {self.wall_s:.0f} s"
        for text in (self.stderr, self.stdout):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                # A first line ending in ':' only announces the lines after it
                # ("2 nodes with unsupported operators:"); those say what.
                message, rest = lines[0], lines[1:4]
                while message.endswith(":") and rest:
                    message += " " + rest.pop(0)
                return message if len(message) <= 240 else message[:237] + "..."
        return f"exit status {self.returncode}"


def run_measured(command, env=None, timeout_s=None):
    if not os.access(GNU_TIME, os.X_OK):
        raise RuntimeError(f"{GNU_TIME} is missing: apt-get install time")
    with tempfile.TemporaryDirectory(prefix="measure-") as scratch:
        rss_file = os.path.join(scratch, "rss")
        # A session of its own, so a timeout kills the command under time too.
        child = subprocess.Popen([GNU_TIME, "-f", "%M", "-o", rss_file, *map(str, command)], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        start = time.perf_counter()
        try:
            stdout, stderr = child.communicate(timeout=timeout_s)
            returncode = child.returncode
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            stdout, stderr = child.communicate()
            returncode = None
        wall = time.perf_counter() - start
        try:
            # The last line: above it GNU time notes a signal or an exit status.
            peak_kib = float(open(rss_file).read().split()[-1])
        except (OSError, ValueError, IndexError):
            peak_kib = float("nan")
        return Measured(returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"), wall,
                        peak_kib / 1024)
