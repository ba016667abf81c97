"""A small distributed solver through mpi4py: conjugate gradients on the 1-D
Poisson problem -u'' = f with n unknowns split into blocks, halo exchange
with Sendrecv, dot products with MPI_Allreduce (one 8-byte and, every 10
iterations, a 64 KiB vector of per-block norms), the solution's norm with
MPI_Reduce to the last rank and the blocks' norms with MPI_Allgather.
Rank r computes a little longer than the others in iterations where
(iteration // 25) % P == r, so the arrivals are imbalanced and move.
Prints the residual every 25 iterations, the final error against the exact
solution (the discretisation's), and "mpi4py_cg: converged" when the
relative residual is below 1e-8 (CG converges in about n/2 iterations here).
Run: mpiexec -n P /usr/bin/python3 mpi4py_cg.py [n] [iterations]
"""
import sys
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 600
h = 1.0 / (n + 1)
lo = rank * n // size
hi = (rank + 1) * n // size
x_grid = (np.arange(lo, hi) + 1) * h
exact = np.sin(np.pi * x_grid) + x_grid * (1 - x_grid)
f = (np.pi ** 2) * np.sin(np.pi * x_grid) + 2.0  # -u'' of the exact solution


def apply_a(v):
    left = np.zeros(1)
    right = np.zeros(1)
    if rank > 0:
        comm.Sendrecv(v[:1], dest=rank - 1, sendtag=1, recvbuf=left, source=rank - 1, recvtag=2)
    if rank < size - 1:
        comm.Sendrecv(v[-1:], dest=rank + 1, sendtag=2, recvbuf=right, source=rank + 1, recvtag=1)
    padded = np.concatenate([left, v, right])
    return (2 * padded[1:-1] - padded[:-2] - padded[2:]) / (h * h)


def dot(a, b):
    out = np.zeros(1)
    comm.Allreduce(np.array([np.dot(a, b)]), out, op=MPI.SUM)
    return out[0]


x = np.zeros(hi - lo)
r = f - apply_a(x)
p = r.copy()
rr = dot(r, r)
rr0 = rr
wide = np.zeros(8192)
for it in range(iters):
    if (it // 25) % size == rank:
        time.sleep(0.004)
    ap = apply_a(p)
    alpha = rr / dot(p, ap)
    x += alpha * p
    r -= alpha * ap
    rr_new = dot(r, r)
    p = r + (rr_new / rr) * p
    rr = rr_new
    if it % 10 == 0:
        mine = np.full(8192, np.dot(x, x) / (1 + rank))
        comm.Allreduce(mine, wide, op=MPI.SUM)
    if it % 25 == 0 and rank == 0:
        print("iter %4d residual %.10e" % (it, np.sqrt(rr / rr0)), flush=True)
err_local = np.array([np.max(np.abs(x - exact))])
err = np.zeros(1)
comm.Allreduce(err_local, err, op=MPI.MAX)
norm2 = np.zeros(1) if rank == size - 1 else None
comm.Reduce(np.array([np.dot(x, x)]), norm2, op=MPI.SUM, root=size - 1)
blocks = np.zeros(size)
comm.Allgather(np.array([np.dot(x, x)]), blocks)
if rank == size - 1:
    if abs(norm2[0] - blocks.sum()) > 1e-9 * abs(norm2[0]):
        print("mpi4py_cg: reduce and allgather disagree", flush=True)
        comm.Abort(1)
if rank == 0:
    print("max error %.4e" % err[0], flush=True)
    print("norm of the solution %.12e" % np.sqrt(blocks.sum()), flush=True)
    print("mpi4py_cg: converged" if np.sqrt(rr / rr0) < 1e-8 else "mpi4py_cg: NOT converged", flush=True)
