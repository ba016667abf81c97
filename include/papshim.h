/* papshim public header.
 *
 * An application may report its progress through a compute phase so that
 * papshim predicts its arrival at the next collective from the edge
 * (PAPSHIM_PREDICTOR=edge):
 *
 *     for (step ...) {
 *       compute_first_half();
 *       papshim_edge(0.5);        // half of this phase is done
 *       compute_second_half();
 *       MPI_Allreduce(...);
 *     }
 *
 * Without the preload the call resolves to the no-op in libpapshim_stub.so
 * (link with -lpapshim_stub), or declare it weak and test it for NULL. */
#ifndef PAPSHIM_H
#define PAPSHIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* fraction: share of the current compute phase already done, in (0, 1]. */
void papshim_edge(double fraction);

#ifdef __cplusplus
}
#endif

#endif /* PAPSHIM_H */
