#!/usr/bin/python3
"""Data-parallel SGD of a small CNN on Fashion-MNIST: PyTorch computes the
gradients, mpi4py's Allreduce sums them (one flat float32 buffer per step:
every gradient, then this rank's loss sum and sample count), every rank
applies the same averaged step.  An unmodified MPI program: run it natively
or with LD_PRELOAD=libpapshim.so.

    mpirun -np P /usr/bin/python3 bench/train/train_sgd.py [options]

The stragglers are real work, not waiting: the ranks named by --slow-ranks
take --imbalance times as many samples per step as the others (an uneven
shard, as on a host that holds more of the data), and every rank's share of
a step varies by up to --noise of itself.  Every choice (initial weights,
sample order, shard sizes) comes from --seed alone, so a native and a
preloaded run compute the same steps; only the order in which the
allreduce adds the ranks' floats may differ.

Prints, on rank 0, one line per epoch (training time, time in Allreduce,
training loss, test loss and accuracy on the first --test-samples test
images), the totals, and a hash of the final parameters that every rank
must share (checked with comm.gather, which papshim does not intercept;
exit 1 if they differ).  --json writes all of it.

--verify-sums checks every step's allreduce on every rank against the
exact sum: rank 0 gathers (MPI_Gather, not intercepted) what every rank
sent and got, adds the sent floats in double precision, and requires every
rank's float32 result r of each element to satisfy
|r - sum x_i| <= (P-1) u sum |x_i|, u = 2^-24: the error bound of float32
recursive summation in any order and any tree (Higham, Accuracy and
Stability of Numerical Algorithms, 4.2), so a correct allreduce always
passes and a lost or doubled contribution fails.  A violation stops the
job (MPI_Abort) with the step, rank and element.  --fault-step S tests the
check: at step S rank 1 leaves the first eighth of its gradient out of the
allreduce (but not out of the check).
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import socket
import sys
import time

DATA_DIR = "/usr/share/datasets/fashion-mnist"


def launcher_rank():
    """This process's rank from the launcher's environment (before MPI is up)."""
    for var in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


class Parser(argparse.ArgumentParser):
    """Prints a bad argument once (rank 0), not once per rank."""

    def error(self, message):
        if launcher_rank() == 0:
            self.print_usage(sys.stderr)
            print("%s: error: %s" % (self.prog, message), file=sys.stderr)
        sys.exit(2)


def checked(conv, ok, rule):
    """An argparse type: conv(text), which must be finite and satisfy ok."""
    def parse(text):
        try:
            v = conv(text)
        except ValueError:
            raise argparse.ArgumentTypeError("not a %s: %r" % ("whole number" if conv is int else "number", text))
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError("not a finite number: %r" % text)
        if not ok(v):
            raise argparse.ArgumentTypeError("%s, got %s" % (rule, text))
        return v
    return parse


positive_int = checked(int, lambda v: v >= 1, "must be at least 1")
ratio = checked(float, lambda v: 1.0 <= v <= 100.0, "must be between 1 (balanced) and 100")
fraction = checked(float, lambda v: 0.0 <= v < 1.0, "must be at least 0 and below 1")
positive_float = checked(float, lambda v: v > 0.0, "must be above 0")


def rank_list(text):
    if text.strip().lower() in ("", "none"):
        return []
    out = []
    for part in text.split(","):
        if not part.strip().isdigit():
            raise argparse.ArgumentTypeError("not a comma-separated list of ranks: %r" % text)
        out.append(int(part))
    return sorted(set(out))


def parse_args(argv):
    p = Parser(prog="train_sgd.py", description=__doc__.split("\n\n")[0],
               formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--epochs", type=positive_int, default=3, help="epochs")
    p.add_argument("--steps", type=positive_int, default=30, help="steps (allreduces) per epoch")
    p.add_argument("--batch", type=positive_int, default=32, help="samples per step of a rank that is not slow")
    p.add_argument("--width", type=positive_int, default=8,
                   help="model width w: convolutions of w and 2w channels, a hidden layer of 64w; "
                        "about 2048 w^2 parameters (w=8: 140,138, 547 KiB of gradients)")
    p.add_argument("--imbalance", type=ratio, default=2.0,
                   help="samples per step of a slow rank, as a multiple of --batch")
    p.add_argument("--slow-ranks", type=rank_list, default=[1], metavar="R[,R...]",
                   help="the slow ranks (with cluster.sh run, rank r runs on host r); 'none' for none")
    p.add_argument("--noise", type=fraction, default=0.1,
                   help="every rank's samples per step vary uniformly by up to this fraction")
    p.add_argument("--seed", type=int, default=1, help="seed of the weights, the sample order and the shard sizes")
    p.add_argument("--lr", type=positive_float, default=0.05, help="learning rate")
    p.add_argument("--momentum", type=fraction, default=0.9, help="SGD momentum")
    p.add_argument("--test-samples", type=positive_int, default=1000,
                   help="evaluate on the first N of the 10,000 test images after every epoch")
    p.add_argument("--data", default=DATA_DIR, help="directory of the four *-ubyte.gz files")
    p.add_argument("--verify-sums", action="store_true",
                   help="check every allreduce result against the exact sum and its float32 error bound")
    p.add_argument("--fault-step", type=int, default=-1, metavar="S",
                   help="a test of --verify-sums: rank 1 leaves part of its gradient out of step S's allreduce")
    p.add_argument("--json", metavar="PATH", help="write the configuration and results here (rank 0)")
    p.add_argument("--label", default="", help="free text copied into the JSON")
    args = p.parse_args(argv)
    if args.fault_step >= 0 and not args.verify_sums:
        p.error("--fault-step tests --verify-sums; give both")
    if args.test_samples > 10000:
        p.error("--test-samples: the test set has 10,000 images, got %d" % args.test_samples)
    return args


def read_idx(path, magic):
    """An IDX file of unsigned bytes (the MNIST format) as a numpy array."""
    import numpy as np
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise SystemExit("train_sgd.py: cannot read %s: %s (Debian: apt-get install dataset-fashion-mnist)"
                         % (path, e))
    head = int.from_bytes(raw[0:4], "big")
    if head != magic:
        raise SystemExit("train_sgd.py: %s is not an IDX file of the expected kind (magic %#x)" % (path, head))
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise SystemExit("train_sgd.py: %s holds %d bytes, its header says %s" % (path, data.size, dims))
    return data.reshape(dims)


FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
         "t10k-labels-idx1-ubyte.gz")


def load(data_dir, test_samples):
    images, labels, test_images, test_labels = (read_idx(os.path.join(data_dir, name), 0x803 if "images" in name
                                                         else 0x801) for name in FILES)
    test_images, test_labels = test_images[:test_samples], test_labels[:test_samples]
    if len(images) != len(labels) or len(test_images) != len(test_labels):
        raise SystemExit("train_sgd.py: images and labels of %s do not match in number" % data_dir)
    return images, labels, test_images, test_labels


def shard_counts(args, size, total_steps):
    """Samples per rank for every step: the same table on every rank."""
    import numpy as np
    rng = np.random.default_rng([args.seed, 1])
    base = np.full(size, float(args.batch))
    base[args.slow_ranks] *= args.imbalance
    jitter = rng.uniform(-args.noise, args.noise, size=(total_steps, size))
    return np.maximum(1, np.rint(base * (1.0 + jitter))).astype(np.int64)


class SampleOrder:
    """Consecutive passes over the training set, each in its own seeded order."""

    def __init__(self, n, seed):
        import numpy as np
        self.np, self.n, self.seed, self.pass_no = np, n, seed, 0
        self.order = self._perm()
        self.pos = 0

    def _perm(self):
        return self.np.random.default_rng([self.seed, 2, self.pass_no]).permutation(self.n)

    def take(self, k):
        out = []
        while k > 0:
            if self.pos == self.n:
                self.pass_no += 1
                self.order, self.pos = self._perm(), 0
            m = min(k, self.n - self.pos)
            out.append(self.order[self.pos:self.pos + m])
            self.pos += m
            k -= m
        return self.np.concatenate(out)


class SumCheck:
    """--verify-sums: every rank's allreduce result against the exact sum of what the ranks sent."""

    def __init__(self, np, comm, n):
        self.np, self.comm = np, comm
        self.size, self.rank = comm.size, comm.rank
        self.sent = np.empty((self.size, n), dtype=np.float32) if self.rank == 0 else None
        self.got = np.empty((self.size, n), dtype=np.float32) if self.rank == 0 else None
        self.steps = 0
        self.worst = 0.0  # the largest |r - sum| / (u sum |x|) seen

    def check(self, step, sent, got):
        np, comm = self.np, self.comm
        comm.Gather(sent, self.sent, root=0)
        comm.Gather(got, self.got, root=0)
        bad = None
        if self.rank == 0:
            exact = self.sent.astype(np.float64).sum(axis=0)
            mag = np.abs(self.sent.astype(np.float64)).sum(axis=0)
            err = np.abs(self.got.astype(np.float64) - exact[None, :])
            u = 2.0 ** -24
            # Subnormal results lose absolute precision too: allow P of the smallest float32 step.
            allowed = (self.size - 1) * u * mag * (1 + 1e-9) + self.size * 2.0 ** -149
            where = np.argwhere(err > allowed)
            if len(where):
                r, i = (int(v) for v in where[0])
                bad = ("step %d: rank %d's allreduce result is wrong at element %d of %d: %.9g, the exact sum "
                       "is %.9g (sum of magnitudes %.9g; allowed error %.3g); %d wrong elements in all"
                       % (step, r, i, exact.size, self.got[r, i], exact[i], mag[i], allowed[i], len(where)))
            scale = u * mag
            nz = scale > 0
            if nz.any():
                self.worst = max(self.worst, float((err[:, nz] / scale[None, nz]).max()))
        bad = comm.bcast(bad, root=0)
        if bad:
            if self.rank == 0:
                print("train_sgd.py: --verify-sums: " + bad, file=sys.stderr, flush=True)
            comm.Abort(1)
        self.steps += 1


def build_model(nn, w):
    """Two convolutions and two dense layers; the first dense layer holds most parameters."""
    return nn.Sequential(
        nn.Conv2d(1, w, 5), nn.ReLU(), nn.MaxPool2d(2),          # 28 -> 24 -> 12
        nn.Conv2d(w, 2 * w, 5), nn.ReLU(), nn.MaxPool2d(2),      # 12 -> 8 -> 4
        nn.Flatten(), nn.Linear(2 * w * 16, 64 * w), nn.ReLU(), nn.Linear(64 * w, 10))


def main(argv):
    args = parse_args(argv)
    missing = [name for name in FILES if not os.access(os.path.join(args.data, name), os.R_OK)]
    if missing:
        if launcher_rank() == 0:
            print("train_sgd.py: error: %s missing in %s (Debian: apt-get install dataset-fashion-mnist, or --data DIR)"
                  % (", ".join(missing), args.data), file=sys.stderr)
        sys.exit(2)
    # One thread per rank: several ranks share each core.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from mpi4py import MPI

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    bad = [r for r in args.slow_ranks if r >= size]
    if bad:
        if rank == 0:
            print("train_sgd.py: error: --slow-ranks %s: the job has ranks 0 to %d only"
                  % (",".join(map(str, bad)), size - 1), file=sys.stderr)
        sys.exit(2)

    images, labels, test_images, test_labels = load(args.data, args.test_samples)
    mean, std = 72.94 / 255.0, 90.02 / 255.0  # the training images' mean and deviation, as fractions of 255

    def as_input(u8):
        return torch.from_numpy(((u8.astype(np.float32) / 255.0 - mean) / std)[:, None, :, :])

    torch.manual_seed(args.seed)
    model = build_model(nn, args.width)
    params = list(model.parameters())
    sizes = [p.numel() for p in params]
    nparams = sum(sizes)
    buf = np.zeros(nparams + 2, dtype=np.float32)  # gradients, loss sum, sample count
    views, off = [], 0
    for p, k in zip(params, sizes):
        views.append(torch.from_numpy(buf[off:off + k]).view(p.shape))
        off += k
    opt = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum)

    total_steps = args.epochs * args.steps
    counts = shard_counts(args, size, total_steps)
    order = SampleOrder(len(images), args.seed)
    host = socket.gethostname()
    sums = SumCheck(np, comm, buf.size) if args.verify_sums else None
    sent = np.empty_like(buf) if sums else None

    def evaluate():
        """This rank's slice of the test subset; rank 0 sums the slices."""
        lo, hi = rank * len(test_images) // size, (rank + 1) * len(test_images) // size
        with torch.no_grad():
            out = model(as_input(test_images[lo:hi]))
            y = torch.from_numpy(test_labels[lo:hi].astype(np.int64))
            part = (float(F.cross_entropy(out, y, reduction="sum")), int((out.argmax(1) == y).sum()), hi - lo)
        parts = comm.gather(part, root=0)
        if rank != 0:
            return None
        n = sum(x[2] for x in parts)
        return sum(x[0] for x in parts) / n, sum(x[1] for x in parts) / n

    if rank == 0:
        slow = ",".join(map(str, args.slow_ranks)) or "none"
        print("train_sgd: %d ranks, %d parameters (%.0f KiB of gradients per allreduce), %d epochs x %d steps, "
              "batch %d per rank, slow ranks %s at x%g, noise %g, seed %d"
              % (size, nparams, buf.nbytes / 1024, args.epochs, args.steps, args.batch, slow, args.imbalance,
                 args.noise, args.seed), flush=True)

    allreduce_s = compute_s = 0.0
    samples = 0
    epochs = []
    comm.Barrier()
    start = time.perf_counter()
    step = 0
    for epoch in range(args.epochs):
        e_start = time.perf_counter()
        e_allreduce = 0.0
        e_loss = e_count = 0.0
        for _ in range(args.steps):
            t0 = time.perf_counter()
            row = counts[step]
            idx = order.take(int(row.sum()))
            first = int(row[:rank].sum())
            mine = idx[first:first + int(row[rank])]
            x = as_input(images[mine])
            y = torch.from_numpy(labels[mine].astype(np.int64))
            opt.zero_grad(set_to_none=False)
            loss = F.cross_entropy(model(x), y, reduction="sum")
            loss.backward()
            for v, p in zip(views, params):
                v.copy_(p.grad)
            buf[nparams] = float(loss)
            buf[nparams + 1] = len(mine)
            if sums:
                sent[:] = buf
                if step == args.fault_step and rank == 1:
                    buf[:nparams // 8] = 0
            t1 = time.perf_counter()
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
            t2 = time.perf_counter()
            if sums:
                sums.check(step, sent, buf)
            t2c = time.perf_counter()  # the check is neither allreduce nor compute
            step_samples = int(row.sum())
            if buf[nparams + 1] != step_samples:
                print("train_sgd.py: rank %d, step %d: the allreduce says %r samples, the shards %d"
                      % (rank, step, float(buf[nparams + 1]), step_samples), file=sys.stderr)
                comm.Abort(1)
            e_loss += float(buf[nparams])
            e_count += step_samples
            buf[:nparams] *= np.float32(1.0 / step_samples)
            for v, p in zip(views, params):
                p.grad.copy_(v)
            opt.step()
            t3 = time.perf_counter()
            allreduce_s += t2 - t1
            e_allreduce += t2 - t1
            compute_s += (t1 - t0) + (t3 - t2c)
            samples += len(mine)
            step += 1
        e_time = time.perf_counter() - e_start
        t_eval = time.perf_counter()
        result = evaluate()
        eval_s = time.perf_counter() - t_eval
        if rank == 0:
            test_loss, test_acc = result
            epochs.append({"epoch": epoch + 1, "time_s": e_time, "allreduce_s": e_allreduce, "eval_s": eval_s,
                           "train_loss": e_loss / e_count, "test_loss": test_loss, "test_accuracy": test_acc})
            print("epoch %d/%d: %.2f s (allreduce %.2f s on rank 0), train loss %.4f, test loss %.4f, "
                  "test accuracy %.2f%% (of %d)"
                  % (epoch + 1, args.epochs, e_time, e_allreduce, e_loss / e_count, test_loss, 100 * test_acc,
                     len(test_images)), flush=True)
    total_s = time.perf_counter() - start

    flat = np.concatenate([p.detach().numpy().ravel() for p in params]).astype(np.float32)
    digest = hashlib.sha256(flat.tobytes()).hexdigest()
    ranks = comm.gather({"rank": rank, "host": host, "allreduce_s": allreduce_s, "compute_s": compute_s,
                         "samples": samples, "hash": digest}, root=0)
    same = None
    if rank == 0:
        hashes = {r["hash"] for r in ranks}
        same = len(hashes) == 1
        ar = [r["allreduce_s"] for r in ranks]
        comp = [r["compute_s"] for r in ranks]
        if args.slow_ranks:
            others = [r["samples"] for r in ranks if r["rank"] not in args.slow_ranks] or [0]
            print("slow ranks: %s; the others %d to %d samples"
                  % ("; ".join("rank %d on %s, %d samples" % (r, ranks[r]["host"], ranks[r]["samples"])
                               for r in args.slow_ranks), min(others), max(others)))
        print("total %.2f s for %d steps; allreduce %.2f s mean over ranks (min %.2f, max %.2f), "
              "%.1f ms per step; compute %.1f ms per step mean, %.1f ms on the slowest rank"
              % (total_s, total_steps, sum(ar) / size, min(ar), max(ar), 1e3 * sum(ar) / size / total_steps,
                 1e3 * sum(comp) / size / total_steps, 1e3 * max(comp) / total_steps))
        print("final: train loss %.6f, test loss %.6f, test accuracy %.2f%%"
              % (epochs[-1]["train_loss"], epochs[-1]["test_loss"], 100 * epochs[-1]["test_accuracy"]))
        if sums:
            print("sums: every rank's result of all %d allreduces within the float32 bound; largest error "
                  "%.2f u of the sum of magnitudes (bound %d u)" % (sums.steps, sums.worst, size - 1))
        if same:
            print("parameters identical on all %d ranks: sha256 %s" % (size, digest[:16]))
        else:
            print("train_sgd.py: error: the ranks' final parameters differ: %s"
                  % ", ".join("rank %d %s" % (r["rank"], r["hash"][:16]) for r in ranks), file=sys.stderr)
        if args.json:
            out = {"label": args.label, "ranks": size, "hosts": [r["host"] for r in ranks],
                   "config": {k: v for k, v in vars(args).items() if k not in ("json", "label")},
                   "parameters": nparams, "allreduce_bytes": int(buf.nbytes), "steps": total_steps,
                   "preload": os.environ.get("LD_PRELOAD", ""),
                   "papshim": {k: v for k, v in os.environ.items() if k.startswith("PAPSHIM_")},
                   "epochs": epochs, "total_s": total_s,
                   "allreduce_s": {"mean": sum(ar) / size, "min": min(ar), "max": max(ar), "per_rank": ar},
                   "compute_s": {"mean": sum(comp) / size, "max": max(comp), "per_rank": comp},
                   "samples_per_rank": [r["samples"] for r in ranks],
                   "final": {"train_loss": epochs[-1]["train_loss"], "test_loss": epochs[-1]["test_loss"],
                             "test_accuracy": epochs[-1]["test_accuracy"]},
                   "param_hash": digest, "params_identical": same}
            if sums:
                out["sum_check"] = {"steps": sums.steps, "worst_u": sums.worst, "bound_u": size - 1}
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(out, f, indent=1)
            os.replace(tmp, args.json)
    same = comm.bcast(same, root=0)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
