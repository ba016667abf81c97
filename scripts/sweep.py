#!/usr/bin/env python3
"""Runs bench/papbench over algorithms, delays, sizes, process counts and
delay modes, writes one CSV into a results folder and draws the seed papers'
figures from it (scripts/plot_sweep.py).  See docs/benchmark.md.

    scripts/sweep.py --quick             # a few minutes, 8 ranks on this machine
    scripts/sweep.py --full              # the documented long sweep
    scripts/sweep.py --quick --cluster   # the same on the emulated cluster
    scripts/sweep.py --help              # every option

Measurement rules: every configuration is run by every algorithm inside one
repetition round, in an order that rotates from round to round, so drift of
the machine hits all algorithms alike; results are medians; speedups are
ratios of two numbers measured in the same round.

On a terminal it shows its progress (launches done, elapsed time, estimated
time left); with stdout not a terminal it prints only its notes and problems
(on stderr).
"""
import datetime
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
PROG = "sweep.py"

USAGE = """\
usage: scripts/sweep.py [--quick | --full] [--cluster] [options]

presets (applied first; later options override them):
  --quick            8 ranks, 256Ki floats, one-late, 3 rounds (default)
  --full             8 ranks (2..8 for scaling), 1Mi floats, both modes, 3 rounds
  --cluster          run through scripts/cluster.sh run (emulated hosts, up already:
                     scripts/cluster.sh up 8 network, or cpu); the regime that
                     scripts/cluster.sh check measured is printed and kept in meta.json;
                     delays are then fewer multiples of the (much longer) transfer time

what to run:
  --ops LIST         collectives (default "allreduce reduce allgather")
  --algs-allreduce LIST   default "native native2 prr slt ring rabenseifner auto"
  --algs-reduce LIST      default "native native2 clairvoyant clairvoyant_linear binomial auto"
  --algs-allgather LIST   default "native native2 sparbit ring bruck recursive_doubling auto"
                     "native" = papshim preloaded, forced to the MPI library's own
                     algorithm; "native2" = the same again, an independent run in
                     each round whose ratio to native shows the noise floor;
                     "none" = no preload at all; anything else sets PAPSHIM_<OP>=<name>
  --np N             process count of the delay and size experiments (default 8)
  --np-list LIST     process counts of the scaling experiment (default "4 8")
  --size N           floats of the delay and scaling experiments (default 256Ki)
  --sizes LIST       floats of the size experiment (default "16Ki 64Ki 256Ki")
                     allgather: each process contributes size/np floats, so the
                     gathered vector has as many floats as the others' vector
  --delay-mult LIST  delays as multiples of delta, the measured one-transfer time
                     of the whole vector (default "0 8 32 128"; cluster "0 1 2 4")
  --fixed-mult M     delay of the size and scaling experiments (default 32; cluster 2)
  --delay-ms LIST    absolute delays in ms instead of multiples (the first nonzero
                     middle value is the fixed delay unless --fixed-ms is given)
  --fixed-ms D       absolute fixed delay in ms
  --modes LIST       "one-late", "rand-late" or both (default one-late)
  --late-rank R      one-late: always delay rank R (default: drawn per iteration)
  --iters N          timed iterations per configuration (default 8)
  --warmup N         untimed iterations per configuration (default 2)
  --reps N           repetition rounds (default 3)
  --base-ms B        common compute time per iteration in ms (default 5)
  --predictor NAME   PAPSHIM_PREDICTOR for preloaded runs (default edge; papbench
                     calls papshim_edge(0.5) halfway through every compute phase)
  --timeout SEC      per launch (default 900)

where:
  --out DIR          results folder (default results/sweep-<date>-<time>)
  --lib PATH         preload library (default build/libpapshim.so)
  --bench PATH       benchmark binary (default build/bench/papbench)
  --no-build         do not run scripts/build.sh first
  --reports          keep papshim's report of every preloaded launch in reports/
                     (shows what auto chose and any fallback to native)
  --no-plot          do not draw the plots
  --dry-run          print the launch plan and exit

On a terminal the progress (launches done, elapsed, estimated time left) is
shown; with stdout not a terminal only notes and problems are printed.
"""

# Options that take a value -> settings key.
VALUE_OPTIONS = {
    "--ops": "ops", "--algs-allreduce": "algs_allreduce", "--algs-reduce": "algs_reduce",
    "--algs-allgather": "algs_allgather", "--np": "np0", "--np-list": "np_list", "--size": "size0",
    "--sizes": "sizes", "--delay-mult": "delay_mult", "--fixed-mult": "fixed_mult", "--delay-ms": "delay_ms",
    "--fixed-ms": "fixed_ms", "--modes": "modes", "--late-rank": "late_rank", "--iters": "iters",
    "--warmup": "warmup", "--reps": "reps", "--base-ms": "base_ms", "--predictor": "predictor",
    "--timeout": "timeout", "--out": "out", "--lib": "lib", "--bench": "bench",
}
FLAG_OPTIONS = {"--no-build": ("build", False), "--no-plot": ("plot", False), "--reports": ("reports", True),
                "--dry-run": ("dry", True)}


def die(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(1)


def note(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)


def settings_from(argv):
    """The preset's settings, then the options applied over them."""
    preset, cluster = "quick", False
    for a in argv:
        if a == "--quick":
            preset = "quick"
        elif a == "--full":
            preset = "full"
        elif a == "--cluster":
            cluster = True
        elif a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
    s = {
        "preset": preset, "cluster": cluster,
        "ops": "allreduce reduce allgather",
        "algs_allreduce": "native native2 prr slt ring rabenseifner auto",
        "algs_reduce": "native native2 clairvoyant clairvoyant_linear binomial auto",
        "algs_allgather": "native native2 sparbit ring bruck recursive_doubling auto",
        "modes": "one-late", "late_rank": "", "predictor": "edge", "timeout": "900",
    }
    if preset == "quick":
        s.update(np0="8", np_list="4 8", size0="256Ki", sizes="16Ki 64Ki 256Ki", delay_mult="0 8 32 128",
                 fixed_mult="32", iters="8", warmup="2", reps="3", base_ms="5")
        if cluster:
            s.update(delay_mult="0 1 2 4", fixed_mult="2")
    else:
        s.update(np0="8", np_list="2 4 6 8", size0="1Mi", sizes="16Ki 64Ki 256Ki 1Mi 4Mi",
                 delay_mult="0 1 4 16 64 256", fixed_mult="64", modes="one-late rand-late",
                 iters="30", warmup="5", reps="3", base_ms="20")
        for op in ("allreduce", "reduce", "allgather"):
            s["algs_" + op] = "none " + s["algs_" + op]
        if cluster:
            s.update(np_list="4 6 8", sizes="128Ki 256Ki 512Ki 1Mi 2Mi", delay_mult="0 0.5 1 2 4 8",
                     fixed_mult="2", iters="20", reps="2")
    s.update(delay_ms="", fixed_ms="", out="", lib=os.path.join(ROOT, "build/libpapshim.so"),
             bench=os.path.join(ROOT, "build/bench/papbench"), build=True, plot=True, reports=False, dry=False)
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--quick", "--full", "--cluster"):
            i += 1
        elif a in VALUE_OPTIONS:
            if i + 1 >= len(argv) or not argv[i + 1]:
                die(f"{a} needs a value")
            s[VALUE_OPTIONS[a]] = argv[i + 1]
            i += 2
        elif a in FLAG_OPTIONS:
            key, value = FLAG_OPTIONS[a]
            s[key] = value
            i += 1
        else:
            sys.stderr.write(USAGE)
            die(f"unknown option '{a}'")
    return s


def floats(v):
    """"256Ki" -> 262144, "1Mi" -> 1048576, plain integers unchanged."""
    m = re.fullmatch(r"(\d+)(Ki|K|k|Mi|M|m)?", v)
    if not m:
        die(f"not a float count: '{v}' (use e.g. 65536, 64Ki, 1Mi)")
    scale = {None: 1, "Ki": 1024, "K": 1024, "k": 1024, "Mi": 1 << 20, "M": 1 << 20, "m": 1 << 20}[m.group(2)]
    return int(m.group(1)) * scale


def ms_of(mult, delta_us):
    try:
        return "%.3f" % (float(mult) * float(delta_us) / 1000)
    except ValueError:
        die(f"not a number: '{mult}'")


def capture(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return ""


class Progress:
    """Launches done, elapsed and estimated time left, on a terminal only."""

    def __init__(self, total):
        self.total = total
        self.t0 = time.monotonic()
        self.on = sys.stdout.isatty()

    @staticmethod
    def clock(seconds):
        seconds = int(seconds)
        h, rest = divmod(seconds, 3600)
        return (f"{h}h{rest // 60:02d}m" if h else f"{rest // 60}m{rest % 60:02d}s") if seconds >= 60 \
            else f"{seconds}s"

    def show(self, done, what):
        if not self.on:
            return
        elapsed = time.monotonic() - self.t0
        left = f", about {self.clock(elapsed * (self.total - done) / done)} left" if done else ""
        sys.stdout.write(f"\r\033[K[{done}/{self.total}] {self.clock(elapsed)} elapsed{left}: {what}")
        sys.stdout.flush()

    def end(self):
        if self.on:
            sys.stdout.write(f"\r\033[K[{self.total}/{self.total}] {self.clock(time.monotonic() - self.t0)}"
                             " elapsed\n")
            sys.stdout.flush()


class Sweep:
    def __init__(self, s):
        self.s = s
        self.cluster = s["cluster"]
        self.regime = "shared memory"
        self.cluster_sh = os.path.join(ROOT, "scripts/cluster.sh")
        self.ops = s["ops"].split()
        self.modes = s["modes"].split()
        self.np_list = s["np_list"].split()
        self.delay_mult = s["delay_mult"].split()
        self.np0 = s["np0"]
        self.size0 = floats(s["size0"])
        self.sizes = [floats(x) for x in s["sizes"].split()]
        for m in self.modes:
            if m not in ("one-late", "rand-late"):
                die(f"--modes: '{m}' is not one-late or rand-late")
        for p in [self.np0] + self.np_list:
            if not re.fullmatch(r"[0-9]+", p) or int(p) < 2:
                die(f"process counts must be integers >= 2 (got '{p}')")
        for op in self.ops:
            if op not in ("allreduce", "reduce", "allgather"):
                die(f"--ops: unknown collective '{op}'")
        self.lib, self.bench, self.lib_origin = s["lib"], s["bench"], None
        self.out = s["out"] or os.path.join(ROOT, "results", "sweep-" + time.strftime("%Y%m%d-%H%M%S"))
        # launches may start in another directory (cluster hosts)
        self.out = os.path.realpath(os.path.abspath(self.out))
        self.delta_us = self.balanced_us = ""
        self.plan = []
        self.failed = 0
        self.started = self.finished = self.load_end = ""
        self.duration = 0
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    # --- launchers ------------------------------------------------------------

    def check_cluster(self):
        max_np = max(int(p) for p in [self.np0] + self.np_list)
        if not os.access(self.cluster_sh, os.X_OK):
            die("--cluster needs scripts/cluster.sh (the emulated cluster), which is not in this checkout")
        r = subprocess.run([self.cluster_sh, "status"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, check=False)
        status = r.stdout.rstrip("\n")
        if r.returncode == 77:
            die(f"--cluster: the emulated cluster cannot run on this machine: {status}")
        hosts = ""
        for line in status.splitlines():
            m = re.match(r"cluster: up, ([0-9]+) hosts", line)
            if m:
                hosts = m.group(1)
        if not hosts:
            die(f"--cluster: the emulated cluster is not up; start it with\n"
                f"    scripts/cluster.sh up {max_np} network   # {max_np} hosts, 100 Mbit/s links: network-bound\n"
                f"    scripts/cluster.sh up {max_np} cpu       # or 1 Gbit/s: CPU-bound (see docs/cluster.md)\n"
                "and run this sweep again (scripts/cluster.sh down removes it).")
        if int(hosts) < max_np:
            die(f"--cluster: {hosts} hosts are up but the sweep needs {max_np} (one rank per host); "
                f"run scripts/cluster.sh up {max_np}")
        # measured now, under the load the sweep starts with
        subprocess.run([self.cluster_sh, "check"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        regime = self.cluster_regime()
        self.regime = "emulated cluster, " + regime
        note(f"regime: {regime}")

    def cluster_regime(self):
        r = subprocess.run([self.cluster_sh, "regime"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, check=False)
        return r.stdout.strip()

    def launch(self, label, op, np, log, args):
        """Runs papbench with `args` on `np` processes, output appended to `log`; True on success."""
        xs = []
        if label != "none":
            algo = "native" if label == "native2" else label
            report = "off"
            if self.s["reports"]:
                base = os.path.basename(log)
                report = os.path.join(self.out, "reports", base[:-4] if base.endswith(".log") else base)
            xs = ["-x", f"LD_PRELOAD={self.lib}", "-x", f"PAPSHIM_REPORT={report}",
                  "-x", f"PAPSHIM_{op.upper()}={algo}", "-x", f"PAPSHIM_PREDICTOR={self.s['predictor']}"]
        if self.cluster:
            cmd = [self.cluster_sh, "run", "-n", np, "--timeout", self.s["timeout"]] + xs + ["--", self.bench] + args
        else:
            cmd = ["mpirun", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "--timeout", self.s["timeout"],
                   "-np", np] + xs + [self.bench] + args
        with open(log, "a") as f:
            try:
                return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False).returncode == 0
            except OSError as e:
                f.write(f"{PROG}: cannot start {cmd[0]}: {e}\n")
                return False

    # --- plan -----------------------------------------------------------------

    def count_for(self, op, n):
        """allgather contributions are size/np0 floats per process"""
        if op == "allgather":
            per = n // int(self.np0)
            return per if per > 0 else 1
        return n

    def prepare(self):
        s = self.s
        if s["dry"]:
            return
        if s["build"]:
            note("building (scripts/build.sh)")
            if subprocess.run([os.path.join(ROOT, "scripts/build.sh")], stdout=subprocess.DEVNULL,
                              check=False).returncode != 0:
                die("build failed; fix it or pass --no-build")
        if not os.access(self.bench, os.X_OK):
            die(f"benchmark {self.bench} not found; run scripts/build.sh")
        if not os.access(self.lib, os.R_OK):
            die(f"preload library {self.lib} not found; run scripts/build.sh")
        if self.cluster:
            self.check_cluster()
        os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)
        os.makedirs(os.path.join(self.out, "bin"), exist_ok=True)
        if s["reports"]:
            os.makedirs(os.path.join(self.out, "reports"), exist_ok=True)
        # papbench appends its rows: rows of an earlier sweep into the same
        # directory would be summarised with this one's.
        for name in ("sweep.csv", "iterations.csv"):
            path = os.path.join(self.out, name)
            if os.path.exists(path):
                os.replace(path, path + ".previous")
                note(f"{name} of an earlier sweep kept as {name}.previous")
        # Every launch uses these copies: a rebuild in the work tree during the
        # sweep cannot mix two versions of the library into one result.
        shutil.copy(self.lib, os.path.join(self.out, "bin/libpapshim.so"))
        shutil.copy(self.bench, os.path.join(self.out, "bin/papbench"))
        self.lib_origin = self.lib
        self.lib = os.path.join(self.out, "bin/libpapshim.so")
        self.bench = os.path.join(self.out, "bin/papbench")

    def calibrate(self):
        """Calibration: native, no delay, the reference size: delta and the balanced time."""
        s = self.s
        delay_ms, fixed_ms = s["delay_ms"], s["fixed_ms"]
        if not delay_ms:
            if s["dry"]:
                self.delta_us, self.balanced_us = "100", "1000"  # placeholder: the real run measures it
                note(f"dry run: delays shown for an assumed delta of {self.delta_us} us")
            else:
                note(f"calibrating: allreduce of {self.size0} floats on {self.np0} processes, native, no delay")
                csv = os.path.join(self.out, "calibration.csv")
                log = os.path.join(self.out, "logs/calibration.log")
                ok = self.launch("native", "allreduce", self.np0, log,
                                 ["--op", "allreduce", "--count", str(self.size0), "--delay-ms", "0", "--iters", "10",
                                  "--warmup", "3", "--base-ms", s["base_ms"], "--pingpong-reps", "30", "--progress",
                                  "0", "--label", "calibration", "--csv", csv])
                if not ok:
                    die(f"calibration run failed; see {log}")
                with open(csv) as f:
                    rows = [line.rstrip("\n").split(",") for line in f if line.strip()]
                if len(rows) >= 2:
                    col = {name: i for i, name in enumerate(rows[0])}
                    last = rows[-1]
                    self.delta_us = last[col["delta_us"]] if "delta_us" in col else ""
                    self.balanced_us = last[col["median_us"]] if "median_us" in col else ""
            if not self.delta_us:
                die("calibration gave no delta")
            delay_ms = "".join(ms_of(m, self.delta_us) + " " for m in self.delay_mult)
            fixed_ms = ms_of(s["fixed_mult"], self.delta_us)
            note(f"delta = {self.delta_us} us, balanced native allreduce = {self.balanced_us} us; "
                 f"delays (ms): {delay_ms}; fixed: {fixed_ms}")
        elif not fixed_ms:
            d = delay_ms.split()
            fixed_ms = d[len(d) // 2]
        self.delays = delay_ms.split()
        self.fixed_ms = fixed_ms
        if fixed_ms not in self.delays:
            self.delays.append(fixed_ms)

    def make_plan(self):
        """One launch = one (round, op, experiment, np, algorithm).  The delay
        experiment also holds the fixed-delay point of the reference size and
        process count, so the size and scaling experiments leave it out."""
        for rep in range(1, int(self.s["reps"]) + 1):
            for op in self.ops:
                op_algs = self.s["algs_" + op].split()
                k = rep - 1
                algs = [op_algs[(i + k) % len(op_algs)] for i in range(len(op_algs))]
                size_counts = [str(self.count_for(op, n)) for n in self.sizes if n != self.size0]
                root_args = "--root 0" if op == "reduce" else ""
                experiments = [("delay", self.np0, f"--count {self.count_for(op, self.size0)} --delay-ms "
                                f"{','.join(self.delays)} --mode {','.join(self.modes)}")]
                if size_counts:
                    experiments.append(("size", self.np0, f"--count {','.join(size_counts)} --delay-ms "
                                        f"{self.fixed_ms} --mode one-late"))
                for p in self.np_list:
                    if p == self.np0:
                        continue
                    experiments.append(("nprocs", p, f"--count {self.count_for(op, self.size0)} --delay-ms "
                                        f"{self.fixed_ms} --mode one-late"))
                for ename, enp, eargs in experiments:
                    for alg in algs:
                        self.plan.append((str(rep), op, ename, enp, alg, f"--op {op} {root_args} {eargs}"))

    # --- provenance -----------------------------------------------------------

    def write_meta(self):
        def json_list(xs):
            return "[" + ", ".join(f'"{x}"' for x in xs) + "]"
        s = self.s
        lines = [
            ("preset", f'"{s["preset"]}"'),
            ("regime", json.dumps(self.regime)),
            ("host", f'"{socket.gethostname()}"'),
            ("cores", str(os.cpu_count())),
            ("started", f'"{self.started}"'),
            ("finished", f'"{self.finished}"'),
            ("duration_s", str(self.duration)),
            ("load_start", f'"{self.load_start}"'),
            ("load_end", f'"{self.load_end}"'),
            ("git", f'"{self.git_rev}"'),
            ("dirty_files", str(self.git_dirty)),
            ("lib", f'"{self.lib_origin or self.lib}"'),
            ("lib_md5", f'"{self.lib_sum}"'),
            ("mpi", f'"{self.mpi}"'),
            ("np0", self.np0),
            ("np_list", json_list(self.np_list)),
            ("size0", str(self.size0)),
            ("sizes", json_list(self.sizes)),
            ("delays_ms", json_list(self.delays)),
            ("fixed_ms", f'"{self.fixed_ms}"'),
            ("delay_mult", json_list(self.delay_mult)),
            ("delta_us", f'"{self.delta_us}"'),
            ("balanced_us", f'"{self.balanced_us}"'),
            ("modes", json_list(self.modes)),
            ("ops", json_list(self.ops)),
            ("iters", s["iters"]),
            ("warmup", s["warmup"]),
            ("reps", s["reps"]),
            ("base_ms", s["base_ms"]),
            ("predictor", f'"{s["predictor"]}"'),
            ("late_rank", f'"{s["late_rank"] or "random"}"'),
            ("launches", str(len(self.plan))),
            ("failed_launches", str(self.failed)),
        ]
        with open(os.path.join(self.out, "meta.json"), "w") as f:
            f.write("{\n" + ",\n".join(f'  "{k}": {v}' for k, v in lines) + "\n}\n")

    def provenance(self):
        self.git_rev = capture(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip() or "unknown"
        self.git_dirty = sum(1 for line in capture(["git", "-C", ROOT, "status", "--porcelain"]).splitlines() if line)
        with open(self.lib, "rb") as f:
            self.lib_sum = hashlib.md5(f.read()).hexdigest()[:12]
        self.load_start = self.loadavg()
        mpi = capture(["mpirun", "--version"]).splitlines()
        self.mpi = mpi[0] if mpi else ""

    @staticmethod
    def loadavg():
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])

    @staticmethod
    def now_iso():
        return datetime.datetime.now().astimezone().isoformat(timespec="seconds")

    # --- run ------------------------------------------------------------------

    def run(self):
        self.prepare()
        common_args = ["--iters", self.s["iters"], "--warmup", self.s["warmup"], "--base-ms", self.s["base_ms"],
                       "--edge", "--progress", "60"]
        if self.s["late_rank"]:
            common_args += ["--late-rank", self.s["late_rank"]]
        self.calibrate()
        self.make_plan()
        if self.s["dry"]:
            for rep, op, ename, np, alg, args in self.plan:
                print("round %s  %-9s %-6s np=%-3s %-20s papbench %s" % (rep, op, ename, np, alg, args))
            print(f"{len(self.plan)} launches")
            return 0

        self.provenance()
        self.started = self.now_iso()
        t_start = time.time()
        self.write_meta()

        note(f"{len(self.plan)} launches into {self.out}")
        failures = os.path.join(self.out, "failures.txt")
        progress = Progress(len(self.plan))
        for i, (rep, op, ename, np, alg, args) in enumerate(self.plan):
            what = f"round {rep} {op} {ename} np={np} {alg}"
            progress.show(i, what)
            log = os.path.join(self.out, "logs", f"r{rep}-{op}-{ename}-np{np}-{alg}.log")
            ok = self.launch(alg, op, np, log, args.split() + common_args +
                             ["--label", alg, "--rep", rep, "--csv", os.path.join(self.out, "sweep.csv"),
                              "--iter-csv", os.path.join(self.out, "iterations.csv")])
            if not ok:
                self.failed += 1
                with open(failures, "a") as f:
                    f.write(f"{what}: failed (see {log})\n")
                if progress.on:
                    sys.stdout.write("\n")
                note(f"  FAILED (see {log})")
            try:
                with open(log, errors="replace") as f:
                    wrong = "WRONG RESULTS" in f.read()
            except OSError:
                wrong = False
            if wrong:
                try:
                    with open(failures) as f:
                        seen = any(line.startswith(f"{what}: wrong") for line in f)
                except OSError:
                    seen = False
                if not seen:
                    with open(failures, "a") as f:
                        f.write(f"{what}: wrong results (see {log})\n")
        progress.end()

        self.finished = self.now_iso()
        self.duration = int(time.time() - t_start)
        self.load_end = self.loadavg()
        self.write_meta()
        note(f"done in {self.duration} s: {self.out}/sweep.csv ({self.failed} failed launches)")
        note(f"regime: {self.regime}")
        if os.path.exists(failures) and os.path.getsize(failures) > 0:
            note("problems:")
            with open(failures) as f:
                for line in f:
                    sys.stderr.write("  " + line)

        if self.s["plot"]:
            if subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts/plot_sweep.py"), self.out],
                              check=False).returncode != 0:
                note(f"plotting failed (the CSV is complete; rerun scripts/plot_sweep.py {self.out})")
        return 0


def main(argv):
    return Sweep(settings_from(argv)).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
