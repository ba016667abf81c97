#!/usr/bin/python3
"""Short data-parallel training runs (bench/train/train_sgd.py, 4 ranks on
shared memory) without and with the preload, compared.

    check_training.py --lib libpapshim.so --work DIR same-as-native
        native, auto and forced PRR: the preloaded runs' final training
        loss, test loss and test accuracy equal the native run's within
        the tolerances below
    check_training.py --lib libpapshim.so --work DIR reproducible
        PAPSHIM_REPRODUCIBLE=1 with auto and with forced PRR: bitwise the
        same final parameters

Every run must also end with the same parameters on every rank (the
program checks and exits 1 otherwise), and papshim's report must show that
the preload ran what was asked at the gradients' allreduce.

Every run passes --verify-sums: at every step rank 0 gathers what each
rank sent to the allreduce and what each got back (MPI_Gather, which
papshim does not intercept) and requires every element of every rank's
result within the error bound of float32 summation in any order, (P-1) u
times the sum of the magnitudes (u = 2^-24).  That is the correctness
check: a correct allreduce cannot fail it, and a lost or doubled
contribution does (the fault run below proves the check can fail: rank 1
leaves an eighth of its gradient out of one step, and the job must stop
with the check's message).

The final losses are then compared with native's as an end-to-end check,
with a tolerance and not equality: papshim's schedules (PRR, and whatever
auto picks) add the ranks' floats in another order than Open MPI's, which
changes the last bits of a sum, and training carries such differences
from step to step.  How far, measured in this configuration: usually 1e-8
to 1e-7 (relative), but with some arrival orders of a loaded machine 2e-4
on the test loss, with every step's sums inside the bound above.  So the
losses alone cannot tell reordering from a fault (one rank's contribution
lost from the output biases in one step moved them by 1.2e-4 and 5e-4);
LOSS_RTOL (2e-3) is 10 times the largest reordering effect seen, and the
accuracy may differ by one of the 500 test images (a near tie that flips).
The program also checks every step's sample count exactly.
papshim's README ("Reproducible results") says which runs are bitwise
equal: under PAPSHIM_REPRODUCIBLE=1 the combination order depends on P and
the count alone, and auto's `direct` allreduce and PRR (which the mode
turns into the ring) build the same chains, so those two runs must match
exactly; neither is Open MPI's order, so native is compared with a
tolerance.

Exit 77 (ctest's SKIP_RETURN_CODE) with the reason when torch, mpi4py,
numpy or the Fashion-MNIST files are missing.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAIN = os.path.join(ROOT, "bench", "train", "train_sgd.py")
RUN_MPI = os.path.join(ROOT, "tests", "support", "run_mpi.sh")
PYTHON = "/usr/bin/python3"
DATA = "/usr/share/datasets/fashion-mnist"
NP = 4
# 2 epochs x 15 steps, the full-size model (140,138 parameters, 547 KiB per
# allreduce), rank 1 with twice the samples of the others.
TRAIN_ARGS = ["--epochs", "2", "--steps", "15", "--batch", "16", "--width", "8", "--test-samples", "500",
              "--slow-ranks", "1", "--imbalance", "2", "--noise", "0.1", "--seed", "3", "--verify-sums"]
FAULT_STEP = 4                  # the fault run's step (of 30)
LOSS_RTOL = 2e-3                # relative, on the final training and test loss
ACCURACY_ATOL = 1.0 / 500 + 1e-9  # absolute, on the final test accuracy: one of the 500 test images


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(77)


def fail(reason):
    print("FAIL: " + reason)
    sys.exit(1)


def check_prerequisites():
    if not os.access(PYTHON, os.X_OK):
        skip(PYTHON + " not found")
    probe = subprocess.run([PYTHON, "-c", "import numpy, torch, mpi4py"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if probe.returncode != 0:
        last = (probe.stdout.strip().splitlines() or ["?"])[-1]
        skip("%s cannot import numpy, torch and mpi4py (%s); Debian: python3-numpy python3-torch python3-mpi4py"
             % (PYTHON, last))
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz"):
        if not os.path.exists(os.path.join(DATA, name)):
            skip("%s missing; Debian: dataset-fashion-mnist" % os.path.join(DATA, name))


def run(work, name, env, extra=()):
    """One training job; returns (its JSON, its papshim report or None)."""
    out = os.path.join(work, name + ".json")
    report = os.path.join(work, "report-" + name)
    for stale in (out, report + ".json"):
        if os.path.exists(stale):
            os.remove(stale)
    envs = env + (["PAPSHIM_REPORT=" + report] if env else [])
    cmd = [RUN_MPI, str(NP)] + envs + ["--", PYTHON, TRAIN] + TRAIN_ARGS + list(extra) + ["--json", out, "--label", name]
    print("--- %s: %s" % (name, " ".join(envs) or "native"), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, PAPSHIM_TEST_TIMEOUT="200"))
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        fail("%s: the job exited with %d" % (name, proc.returncode))
    with open(out) as f:
        result = json.load(f)
    if not result["params_identical"]:
        fail("%s: the ranks' final parameters differ" % name)
    checked = result.get("sum_check", {}).get("steps")
    if checked != result["steps"]:
        fail("%s: --verify-sums checked %s of the %d allreduces" % (name, checked, result["steps"]))
    if not env:
        return result, None
    try:
        with open(report + ".json") as f:
            return result, json.load(f)
    except OSError as e:
        fail("%s: no papshim report (%s): was the preload loaded?" % (name, e))


def check_report(name, result, report, algorithm):
    """The gradients' allreduce ran every call, and only `algorithm` when one is given."""
    sites = [s for s in report["callsites"]
             if s["op"] == "allreduce" and s["calls"] and s["bytes"] == s["calls"] * result["allreduce_bytes"]]
    calls = sum(s["calls"] for s in sites)
    if calls != NP * result["steps"]:
        fail("%s: the report counts %d allreduces of %d bytes, the run made %d on each of %d ranks"
             % (name, calls, result["allreduce_bytes"], result["steps"], NP))
    ran = {}
    for s in sites:
        for alg, n in s["algorithms"].items():
            ran[alg] = ran.get(alg, 0) + n
    print("%s: papshim ran %s" % (name, ", ".join("%s %d" % kv for kv in sorted(ran.items()))))
    if algorithm and ran.get(algorithm, 0) != calls:
        fail("%s: expected %s on all %d calls, the report says %s" % (name, algorithm, calls, ran))


def check_fault(work, lib_env):
    """The sum check can fail: a run that leaves part of one rank's gradient out of one step must stop."""
    out = os.path.join(work, "fault.json")
    cmd = ([RUN_MPI, str(NP)] + lib_env + ["PAPSHIM_REPORT=off", "--", PYTHON, TRAIN] + TRAIN_ARGS
           + ["--fault-step", str(FAULT_STEP), "--json", out])
    print("--- fault: %s, --fault-step %d" % (" ".join(lib_env) or "native", FAULT_STEP), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, PAPSHIM_TEST_TIMEOUT="200"))
    said = [line for line in proc.stdout.splitlines() if "--verify-sums: step %d:" % FAULT_STEP in line]
    if proc.returncode == 0 or not said:
        print(proc.stdout, end="")
        fail("fault: the job exited with %d and %s the check's message; the sum check missed a lost contribution"
             % (proc.returncode, "printed" if said else "without"))
    print("fault: the job stopped (exit %d): %s" % (proc.returncode, said[0][:160]))


def final(result):
    f = result["final"]
    return f["train_loss"], f["test_loss"], f["test_accuracy"]


def compare(name, result, base):
    (tl, sl, acc), (btl, bsl, bacc) = final(result), final(base)
    worst = max(abs(tl - btl) / abs(btl), abs(sl - bsl) / abs(bsl))
    print("%s against native: train loss %.7f / %.7f, test loss %.7f / %.7f, accuracy %.4f / %.4f; "
          "largest relative loss difference %.2g (tolerance %g), accuracy difference %.4f (tolerance %g)"
          % (name, tl, btl, sl, bsl, acc, bacc, worst, LOSS_RTOL, abs(acc - bacc), ACCURACY_ATOL))
    if worst > LOSS_RTOL or abs(acc - bacc) > ACCURACY_ATOL:
        fail("%s: the final loss or accuracy is not native's within the tolerance" % name)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lib", required=True, help="libpapshim.so")
    p.add_argument("--work", required=True, help="directory for the runs' JSON and reports")
    p.add_argument("check", choices=["same-as-native", "reproducible"])
    args = p.parse_args()
    if not os.path.exists(args.lib):
        fail("%s does not exist (build the papshim target)" % args.lib)
    check_prerequisites()
    os.makedirs(args.work, exist_ok=True)
    preload = "LD_PRELOAD=" + os.path.abspath(args.lib)
    if args.check == "same-as-native":
        base, _ = run(args.work, "native", [])
        for name, env, alg in (("auto", [], None), ("prr", ["PAPSHIM_ALLREDUCE=prr"], "prr")):
            result, report = run(args.work, name, [preload] + env)
            check_report(name, result, report, alg)
            compare(name, result, base)
        check_fault(args.work, [preload, "PAPSHIM_ALLREDUCE=prr"])
        print("PASS: every allreduce of native, auto and forced PRR within the float32 bound of the exact sum; "
              "auto and PRR end where native ends, within the tolerances; the check stops a faulty run")
    else:
        results = {}
        for name, env, alg in (("repro-auto", [], "direct"), ("repro-prr", ["PAPSHIM_ALLREDUCE=prr"], "prr")):
            result, report = run(args.work, name, [preload, "PAPSHIM_REPRODUCIBLE=1"] + env)
            check_report(name, result, report, alg)
            results[name] = result
        a, b = results["repro-auto"], results["repro-prr"]
        print("final parameters: sha256 %s (auto), %s (prr)" % (a["param_hash"][:16], b["param_hash"][:16]))
        if a["param_hash"] != b["param_hash"] or final(a) != final(b):
            fail("under PAPSHIM_REPRODUCIBLE=1 auto and forced PRR end with different parameters")
        print("PASS: under PAPSHIM_REPRODUCIBLE=1 auto (direct) and forced PRR (the ring) end bitwise equal")


if __name__ == "__main__":
    main()
