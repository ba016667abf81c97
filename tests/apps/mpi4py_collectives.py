"""MPI_Allreduce, MPI_Reduce and MPI_Allgather through mpi4py, checked.

Every rank can compute every other rank's data (seeded by rank), so each
result is checked against the value computed locally, and every allreduce
result must be the same bits on every rank. Integer data, small integers in
floating point and powers of two (for products) make every result exact in
any order, so the printed lines do
not depend on the algorithm; random doubles are checked within a relative
1e-12 of math.fsum and printed to 12 significant digits. The large calls
repeat with one rank 15 ms late (a different one every 4 calls) so that the
arrival-aware algorithms have something to predict.
Prints one line per check on rank 0 and "mpi4py_collectives: N checks passed".
Run: mpiexec -n P /usr/bin/python3 mpi4py_collectives.py
"""
import hashlib
import math
import sys
import time

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
checks = 0
failures = 0


def say(comm, text):  # from world rank 0 (for a split: the half it is in)
    if world.rank == 0:
        print(text, flush=True)


def fail(text):
    global failures
    failures += 1
    print("FAILED rank %d: %s" % (world.rank, text), flush=True)


def data(kind, rank, n, salt):
    rng = np.random.default_rng(1000003 * salt + 7919 * rank + n)
    if kind == "int32":
        return rng.integers(-1000, 1000, n).astype(np.int32)
    if kind == "int64":
        return rng.integers(-(1 << 40), 1 << 40, n).astype(np.int64)
    if kind == "uint8":
        return rng.integers(0, 256, n).astype(np.uint8)
    if kind == "float32":  # small integers: exact sums
        return rng.integers(-64, 64, n).astype(np.float32)
    if kind == "float32p":  # powers of two: exact products of up to 100 ranks
        return rng.choice(np.array([-2.0, -1.0, 0.5, 1.0, 2.0], dtype=np.float32), n)
    if kind == "float64":  # random: sums depend on the order
        return rng.standard_normal(n)
    if kind == "complex128":  # small integers: exact sums
        return (rng.integers(-64, 64, n) + 1j * rng.integers(-64, 64, n)).astype(np.complex128)
    raise ValueError(kind)


def mat2_product(a, b):  # 2x2 integer matrices stored as 4 float64
    return np.array([a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]])


def noncommutative(inbuf, inoutbuf, datatype):
    # inoutbuf = inbuf * inoutbuf, 2x2 matrices over the integers mod 2^20
    a = np.frombuffer(inbuf, dtype=np.float64).reshape(-1, 4)
    b = np.frombuffer(inoutbuf, dtype=np.float64).reshape(-1, 4)
    out = np.empty_like(b)
    for i in range(len(a)):
        out[i] = np.mod(mat2_product(a[i], b[i]), 1 << 20)
    b[:] = out


def absmax(inbuf, inoutbuf, datatype):
    a = np.frombuffer(inbuf, dtype=np.int64)
    b = np.frombuffer(inoutbuf, dtype=np.int64)
    b[:] = np.maximum(np.abs(a), np.abs(b))


OP_MATMUL = MPI.Op.Create(noncommutative, commute=False)
OP_ABSMAX = MPI.Op.Create(absmax, commute=True)


def expected(kind, op, ranks, n, salt):
    parts = [data(kind, r, n, salt) for r in ranks]
    if op == "SUM":
        if kind == "float64":
            return np.array([math.fsum(p[i] for p in parts) for i in range(n)]) if n <= 2000 else sum(parts)
        return sum(parts[1:], parts[0].copy())
    if op == "PROD":
        out = parts[0].copy()
        for p in parts[1:]:
            out = out * p
        return out
    if op == "MAX":
        return np.maximum.reduce(parts)
    if op == "MIN":
        return np.minimum.reduce(parts)
    if op == "BXOR":
        out = parts[0].copy()
        for p in parts[1:]:
            out ^= p
        return out
    if op == "ABSMAX":
        return np.maximum.reduce([np.abs(p) for p in parts])
    raise ValueError(op)


MPI_OPS = {"SUM": MPI.SUM, "PROD": MPI.PROD, "MAX": MPI.MAX, "MIN": MPI.MIN, "BXOR": MPI.BXOR,
           "ABSMAX": OP_ABSMAX}


def digest(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()[:16]


def late(comm, it, ms=15):
    if comm.size > 1 and (it // 4) % comm.size == comm.rank:
        time.sleep(ms / 1000.0)


def check_values(name, got, want, kind):
    if kind == "float64":
        scale = max(1.0, float(np.max(np.abs(want))) if len(want) else 1.0)
        ok = len(got) == len(want) and (len(got) == 0 or float(np.max(np.abs(got - want))) <= 1e-12 * scale * 8)
    else:
        ok = np.array_equal(got, want)
    if not ok:
        fail(name)
    return ok


def same_everywhere(comm, name, arr):
    d = digest(arr)
    all_d = comm.allgather(d)
    if len(set(all_d)) != 1:
        fail(name + ": ranks hold different bits")


def shown(kind, arr):
    if kind == "float64":
        return " first=%.12g last=%.12g" % (arr[0], arr[-1]) if len(arr) else ""
    return " sha=" + digest(arr)


def allreduce_checks(comm, label, kinds_ops, counts, iters=1):
    global checks
    ranks = comm.allgather(world.rank)
    for kind, op in kinds_ops:
        for n in counts:
            for it in range(iters):
                salt = 17 * it + 3
                mine = data(kind, ranks[comm.rank], n, salt)
                want = expected(kind, op, ranks, n, salt)
                late(comm, it)
                got = np.empty_like(mine)
                comm.Allreduce(mine, got, op=MPI_OPS[op])
                name = "allreduce %s %s %s n=%d it=%d" % (label, kind, op, n, it)
                check_values(name, got, want, kind)
                same_everywhere(comm, name, got)
                # in place
                buf = mine.copy()
                comm.Allreduce(MPI.IN_PLACE, buf, op=MPI_OPS[op])
                check_values(name + " in place", buf, want, kind)
                checks += 2
            say(comm, "allreduce %s %s %s n=%d%s" % (label, kind, op, n, shown(kind, got)))


def reduce_checks(comm, label, kinds_ops, counts, iters=1):
    global checks
    ranks = comm.allgather(world.rank)
    for kind, op in kinds_ops:
        for n in counts:
            for root in range(comm.size):
                for it in range(iters):
                    salt = 31 * it + 5 + root
                    mine = data(kind, ranks[comm.rank], n, salt)
                    want = expected(kind, op, ranks, n, salt)
                    late(comm, it)
                    got = np.zeros_like(mine) if comm.rank == root else None
                    comm.Reduce(mine, got, op=MPI_OPS[op], root=root)
                    if comm.rank == root:
                        check_values("reduce %s %s %s n=%d root=%d" % (label, kind, op, n, root), got, want, kind)
                        checks += 1
                    buf = mine.copy()
                    if comm.rank == root:
                        comm.Reduce(MPI.IN_PLACE, buf, op=MPI_OPS[op], root=root)
                        check_values("reduce in place %s %s n=%d root=%d" % (label, kind, n, root), buf, want, kind)
                        checks += 1
                    else:
                        comm.Reduce(buf, None, op=MPI_OPS[op], root=root)
            say(comm, "reduce %s %s %s n=%d every root" % (label, kind, op, n))


def noncommutative_checks(comm, label, counts):
    global checks
    ranks = comm.allgather(world.rank)

    def mats(r, n):
        rng = np.random.default_rng(4242 + r * 13 + n)
        return rng.integers(0, 8, 4 * n).astype(np.float64)

    for n in counts:
        want = mats(ranks[0], n).reshape(-1, 4).copy()
        for r in ranks[1:]:
            m = mats(r, n).reshape(-1, 4)
            for i in range(n):
                want[i] = np.mod(mat2_product(want[i], m[i]), 1 << 20)
        want = want.reshape(-1)
        mine = mats(ranks[comm.rank], n)
        for it in range(3):
            late(comm, it, 5)
            got = np.empty_like(mine)
            comm.Allreduce(mine, got, op=OP_MATMUL)
            check_values("allreduce non-commutative %s n=%d" % (label, n), got, want, "exact")
            same_everywhere(comm, "allreduce non-commutative %s n=%d" % (label, n), got)
            for root in (0, comm.size - 1):
                out = np.empty_like(mine) if comm.rank == root else None
                comm.Reduce(mine, out, op=OP_MATMUL, root=root)
                if comm.rank == root:
                    check_values("reduce non-commutative %s n=%d root=%d" % (label, n, root), out, want, "exact")
            checks += 3
        say(comm, "non-commutative %s n=%d sha=%s" % (label, n, digest(got)))


def allgather_checks(comm, label, counts, iters=1):
    global checks
    for kind in ("int32", "float64", "uint8"):
        for n in counts:
            for it in range(iters):
                salt = 7 * it + 11
                late(comm, it)
                mine = data(kind, comm.rank, n, salt)
                got = np.empty(n * comm.size, dtype=mine.dtype)
                comm.Allgather(mine, got)
                want = np.concatenate([data(kind, r, n, salt) for r in range(comm.size)])
                check_values("allgather %s %s n=%d" % (label, kind, n), got, want, "exact")
                buf = want.copy()
                buf[comm.rank * n:(comm.rank + 1) * n] = mine
                comm.Allgather(MPI.IN_PLACE, buf)
                check_values("allgather in place %s %s n=%d" % (label, kind, n), buf, want, "exact")
                checks += 2
            say(comm, "allgather %s %s n=%d sha=%s" % (label, kind, n, digest(got)))
    # Python objects: pickled, of different sizes per rank
    objs = comm.allgather({"rank": comm.rank, "payload": list(range(comm.rank * 3))})
    if [o["rank"] for o in objs] != list(range(comm.size)):
        fail("allgather objects " + label)
    total = comm.allreduce(comm.rank + 1)
    if total != comm.size * (comm.size + 1) // 2:
        fail("allreduce object " + label)
    checks += 2
    say(comm, "allgather objects %s ok, allreduce object %d" % (label, total))


def main():
    small = [0, 1, 7, 1000]
    large = [8192, 70000]
    exact_ops = [("int32", "SUM"), ("int64", "SUM"), ("float32", "SUM"), ("complex128", "SUM"),
                 ("int32", "MAX"), ("int64", "MIN"), ("uint8", "BXOR"), ("int64", "ABSMAX"), ("float32p", "PROD")]
    comms = [("world", world)]
    halves = world.Split(world.rank % 2, world.size - world.rank)  # reversed order inside
    comms.append(("split", halves))
    for label, comm in comms:
        allreduce_checks(comm, label, exact_ops, small)
        allreduce_checks(comm, label, [("float64", "SUM")], small)
        allreduce_checks(comm, label, [("int64", "SUM"), ("float64", "SUM"), ("float32", "SUM")], large, iters=8)
        reduce_checks(comm, label, exact_ops[:4] + [("float64", "SUM")], small[1:])
        reduce_checks(comm, label, [("int32", "SUM"), ("float64", "SUM")], large[-1:], iters=3)
        noncommutative_checks(comm, label, [1, 5, 600])
        allgather_checks(comm, label, [0, 1, 33, 9000], iters=1)
        allgather_checks(comm, label, [40000], iters=6)
    halves.Free()
    total = world.allreduce(checks)
    bad = world.allreduce(failures)
    if world.rank == 0:
        print("mpi4py_collectives: %d ranks, %d checks, %d failed" % (world.size, total, bad), flush=True)
        if bad == 0:
            print("mpi4py_collectives: %d checks passed" % total, flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
