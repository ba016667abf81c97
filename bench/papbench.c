/* papbench: the arrival-pattern benchmark of the seed papers, as an ordinary
 * MPI program.
 *
 * Every iteration does what figure 9 of the PRR/SLT paper does:
 *
 *   1. fill the send buffer with random integer-valued floats,
 *   2. two MPI_Barrier calls,
 *   3. an emulated compute phase (sleep), split in two halves; with --edge
 *      papshim_edge(0.5) is called in the middle when the symbol exists,
 *   4. the timed collective (MPI_Allreduce, MPI_Reduce or MPI_Allgather on
 *      MPI_FLOAT with MPI_SUM), arrival and exit taken with MPI_Wtime,
 *   5. a check against the same operation done by PMPI_* directly (every
 *      iteration unless --check-every says otherwise),
 *   6. the per-rank times go to rank 0, which keeps the average elapsed time
 *      of the iteration: the mean over ranks of (exit - arrival).
 *
 * Delay modes: "one-late" delays one process per iteration by the delay (the
 * process is drawn from a seeded generator, the same on every rank and for
 * every run with the same seed, or fixed with --late-rank); "rand-late"
 * delays every process by a uniform random time in [0, delay].  As in the
 * seed, the compute phase every process shares grows with the delay
 * (base + delay), so a late process reaches the middle of its compute phase
 * before the early processes reach the collective.
 *
 * The program knows nothing of papshim.  Run it with
 * LD_PRELOAD=libpapshim.so to measure papshim; without it to measure the MPI
 * library.  Bookkeeping (reference results, gathering times, ping-pong) goes
 * through PMPI_* or point-to-point calls, so an interposed library sees only
 * the timed collective.
 *
 * --count, --delay-ms and --mode take comma-separated lists; every
 * combination is one configuration and gives one output line and one CSV
 * row.  Run papbench --help for every option. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* papshim's progress hook: present when the program runs under the preload,
 * NULL otherwise. */
extern void papshim_edge(double fraction) __attribute__((weak));

enum op_kind { OP_ALLREDUCE, OP_REDUCE, OP_ALLGATHER };
enum delay_mode { MODE_ONE_LATE, MODE_RAND_LATE };

static const char* op_name(enum op_kind op) {
  return op == OP_ALLREDUCE ? "allreduce" : op == OP_REDUCE ? "reduce" : "allgather";
}

static const char* mode_name(enum delay_mode m) { return m == MODE_ONE_LATE ? "one-late" : "rand-late"; }

#define MAX_LIST 64

struct options {
  enum op_kind op;
  long counts[MAX_LIST];
  int ncounts;
  double delays_ms[MAX_LIST];
  int ndelays;
  enum delay_mode modes[2];
  int nmodes;
  int iters;
  int warmup;
  int root;
  int late_rank; /* -1: drawn at random every iteration */
  int late_every; /* > 0: the late rank is (iteration / late_every) mod P */
  int late_group; /* > 1: the late rank's whole group of late_group consecutive ranks (a host) is late */
  double base_ms;
  int edge;
  uint64_t seed;
  const char* csv_path;
  const char* iter_csv_path;
  const char* label;
  int rep;
  double progress_s;
  int pingpong_reps;
  int check_every;
};

/* ---------------------------------------------------------------------------
 * Small helpers */

static int world_rank = 0;

static void die(const char* fmt, const char* arg) {
  if (world_rank == 0) {
    fprintf(stderr, "papbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
  }
  MPI_Finalize();
  exit(2);
}

/* splitmix64: one well-mixed 64-bit value from any 64-bit input.  Used both
 * as a hash (iteration -> late rank) and to seed the data generator. */
static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A uniform double in [0, 1) from the hash of the given words. */
static double uniform01(uint64_t a, uint64_t b, uint64_t c) {
  const uint64_t h = mix64(mix64(mix64(a) ^ b) ^ c);
  return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sleeps until the CLOCK_MONOTONIC time `deadline` (seconds). */
static void sleep_until(double deadline) {
  struct timespec ts;
  ts.tv_sec = (time_t)deadline;
  ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Quantile q in [0, 1] of n sorted values, linear interpolation. */
static double quantile_sorted(const double* v, int n, double q) {
  if (n <= 0) return NAN;
  const double pos = q * (double)(n - 1);
  const int lo = (int)floor(pos);
  const int hi = lo + 1 < n ? lo + 1 : lo;
  return v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
}

static double median_of(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return quantile_sorted(v, n, 0.5);
}

/* ---------------------------------------------------------------------------
 * Option parsing */

static int parse_long_list(const char* text, long* out, int max) {
  int n = 0;
  const char* p = text;
  while (*p) {
    char* end = NULL;
    errno = 0;
    const double v = strtod(p, &end); /* accepts 1e6 */
    if (end == p || errno) return -1;
    long mult = 1;
    if (*end == 'K' || *end == 'k') mult = 1024, ++end;
    else if (*end == 'M' || *end == 'm') mult = 1024 * 1024, ++end;
    if (n == max || v < 0) return -1;
    out[n++] = (long)(v * (double)mult);
    if (*end == ',') ++end;
    else if (*end) return -1;
    p = end;
  }
  return n;
}

static int parse_double_list(const char* text, double* out, int max) {
  int n = 0;
  const char* p = text;
  while (*p) {
    char* end = NULL;
    errno = 0;
    const double v = strtod(p, &end);
    if (end == p || errno || n == max || v < 0) return -1;
    out[n++] = v;
    if (*end == ',') ++end;
    else if (*end) return -1;
    p = end;
  }
  return n;
}

static void usage(void) {
  printf(
      "usage: mpirun -np P papbench [options]\n"
      "  --op allreduce|reduce|allgather   timed collective (default allreduce)\n"
      "  --count N[,N...]    floats per process (allgather: per block); K/M suffixes = 2^10/2^20\n"
      "                      (default 1M)\n"
      "  --mode M[,M...]     one-late | rand-late | both (default one-late)\n"
      "  --delay-ms D[,D...] maximum delay in milliseconds (default 0)\n"
      "  --late-rank R       one-late: always delay rank R (default: drawn per iteration)\n"
      "  --late-every N      one-late: the late rank moves on every N iterations (0, 1, 2, ...)\n"
      "  --late-group K      one-late: the late rank's group of K consecutive ranks is late with it\n"
      "                      (one host of K ranks; default 1)\n"
      "  --base-ms B         common compute time in ms; every process computes\n"
      "                      base + delay plus its own extra delay (default 20)\n"
      "  --iters N           timed iterations per configuration (default 50)\n"
      "  --warmup N          untimed iterations before each configuration (default 5)\n"
      "  --root R            root of MPI_Reduce (default 0)\n"
      "  --edge              call papshim_edge(0.5) halfway through the compute phase\n"
      "                      (only when the symbol is present)\n"
      "  --seed S            seed of delays and data (default 1)\n"
      "  --csv FILE          append one row per configuration (header when FILE is new)\n"
      "  --iter-csv FILE     append one row per timed iteration\n"
      "  --label TEXT        first CSV column, e.g. the algorithm under test\n"
      "  --rep N             repetition number, copied to the CSV (default 0)\n"
      "  --progress SEC      progress line on stderr every SEC seconds, 0 = never (default 10)\n"
      "  --pingpong-reps N   round trips measuring the one-transfer time delta (default 20)\n"
      "  --check-every N     check the result against PMPI on every Nth iteration, 0 = never\n"
      "                      (default 1); the check is a second collective inside the\n"
      "                      compute phase that the predictor sees, and it adds noise\n"
      "Times are microseconds.  e_lo is the lower bound of the average elapsed time:\n"
      "mean over ranks of (last nominal arrival - own nominal arrival) + delta, which for\n"
      "one late process is (P-1)/P*D + delta; for reduce (last - root's arrival)/P + delta.\n");
}

static void parse_options(int argc, char** argv, struct options* o) {
  memset(o, 0, sizeof *o);
  o->op = OP_ALLREDUCE;
  o->counts[0] = 1 << 20;
  o->ncounts = 1;
  o->delays_ms[0] = 0;
  o->ndelays = 1;
  o->modes[0] = MODE_ONE_LATE;
  o->nmodes = 1;
  o->iters = 50;
  o->warmup = 5;
  o->root = 0;
  o->late_rank = -1;
  o->base_ms = 20;
  o->seed = 1;
  o->label = "";
  o->progress_s = 10;
  o->pingpong_reps = 20;
  o->check_every = 1;

  enum { O_OP = 256, O_COUNT, O_MODE, O_DELAY, O_LATE, O_LATE_EVERY, O_LATE_GROUP, O_BASE, O_ITERS, O_WARMUP, O_ROOT, O_EDGE,
         O_SEED, O_CSV, O_ITER_CSV, O_LABEL, O_REP, O_PROGRESS, O_PINGPONG, O_CHECK_EVERY, O_HELP };
  static const struct option longopts[] = {
      {"op", required_argument, NULL, O_OP},
      {"count", required_argument, NULL, O_COUNT},
      {"mode", required_argument, NULL, O_MODE},
      {"delay-ms", required_argument, NULL, O_DELAY},
      {"late-rank", required_argument, NULL, O_LATE},
      {"late-every", required_argument, NULL, O_LATE_EVERY},
      {"late-group", required_argument, NULL, O_LATE_GROUP},
      {"base-ms", required_argument, NULL, O_BASE},
      {"iters", required_argument, NULL, O_ITERS},
      {"warmup", required_argument, NULL, O_WARMUP},
      {"root", required_argument, NULL, O_ROOT},
      {"edge", no_argument, NULL, O_EDGE},
      {"seed", required_argument, NULL, O_SEED},
      {"csv", required_argument, NULL, O_CSV},
      {"iter-csv", required_argument, NULL, O_ITER_CSV},
      {"label", required_argument, NULL, O_LABEL},
      {"rep", required_argument, NULL, O_REP},
      {"progress", required_argument, NULL, O_PROGRESS},
      {"pingpong-reps", required_argument, NULL, O_PINGPONG},
      {"check-every", required_argument, NULL, O_CHECK_EVERY},
      {"help", no_argument, NULL, O_HELP},
      {NULL, 0, NULL, 0},
  };
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
      case O_OP:
        if (!strcmp(optarg, "allreduce")) o->op = OP_ALLREDUCE;
        else if (!strcmp(optarg, "reduce")) o->op = OP_REDUCE;
        else if (!strcmp(optarg, "allgather")) o->op = OP_ALLGATHER;
        else die("--op must be allreduce, reduce or allgather (got '%s')", optarg);
        break;
      case O_COUNT:
        o->ncounts = parse_long_list(optarg, o->counts, MAX_LIST);
        if (o->ncounts <= 0) die("--count: expected a list of non-negative integers (got '%s')", optarg);
        break;
      case O_MODE:
        if (!strcmp(optarg, "one-late")) o->modes[0] = MODE_ONE_LATE, o->nmodes = 1;
        else if (!strcmp(optarg, "rand-late")) o->modes[0] = MODE_RAND_LATE, o->nmodes = 1;
        else if (!strcmp(optarg, "both") || !strcmp(optarg, "one-late,rand-late")) {
          o->modes[0] = MODE_ONE_LATE;
          o->modes[1] = MODE_RAND_LATE;
          o->nmodes = 2;
        } else if (!strcmp(optarg, "rand-late,one-late")) {
          o->modes[0] = MODE_RAND_LATE;
          o->modes[1] = MODE_ONE_LATE;
          o->nmodes = 2;
        } else
          die("--mode must be one-late, rand-late or both (got '%s')", optarg);
        break;
      case O_DELAY:
        o->ndelays = parse_double_list(optarg, o->delays_ms, MAX_LIST);
        if (o->ndelays <= 0) die("--delay-ms: expected a list of non-negative numbers (got '%s')", optarg);
        break;
      case O_LATE: o->late_rank = atoi(optarg); break;
      case O_LATE_EVERY: o->late_every = atoi(optarg); break;
      case O_LATE_GROUP: o->late_group = atoi(optarg); break;
      case O_BASE: o->base_ms = atof(optarg); break;
      case O_ITERS: o->iters = atoi(optarg); break;
      case O_WARMUP: o->warmup = atoi(optarg); break;
      case O_ROOT: o->root = atoi(optarg); break;
      case O_EDGE: o->edge = 1; break;
      case O_SEED: o->seed = strtoull(optarg, NULL, 0); break;
      case O_CSV: o->csv_path = optarg; break;
      case O_ITER_CSV: o->iter_csv_path = optarg; break;
      case O_LABEL: o->label = optarg; break;
      case O_REP: o->rep = atoi(optarg); break;
      case O_PROGRESS: o->progress_s = atof(optarg); break;
      case O_PINGPONG: o->pingpong_reps = atoi(optarg); break;
      case O_CHECK_EVERY: o->check_every = atoi(optarg); break;
      case 'h':
      case O_HELP:
        if (world_rank == 0) usage();
        MPI_Finalize();
        exit(0);
      default: die("unknown or incomplete option '%s' (see --help)", argv[optind - 1]);
    }
  }
  if (optind < argc) die("unexpected argument '%s' (see --help)", argv[optind]);
  if (o->iters < 1) die("%s", "--iters must be at least 1");
  if (o->warmup < 0) die("%s", "--warmup must not be negative");
  if (o->base_ms < 0) die("%s", "--base-ms must not be negative");
  if (o->pingpong_reps < 1) die("%s", "--pingpong-reps must be at least 1");
  if (o->check_every < 0) die("%s", "--check-every must not be negative");
  if (strchr(o->label, ',') || strchr(o->label, '"')) die("--label must not contain commas or quotes ('%s')", o->label);
  for (int i = 0; i < o->ncounts; ++i)
    if (o->counts[i] > 0x7fffffffL) die("%s", "--count: at most 2^31-1 floats");
}

/* ---------------------------------------------------------------------------
 * Start-up measurements
 *
 * Processes that take no part in a measurement wait in quiet_wait(), which
 * sleeps between tests instead of polling: with more ranks than cores,
 * spinning bystanders would slow down the ranks being measured. */

static void quiet_wait(MPI_Request* req) {
  int done = 0;
  const struct timespec pause = {0, 100000}; /* 0.1 ms */
  for (MPI_Test(req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(req, &done, MPI_STATUS_IGNORE))
    nanosleep(&pause, NULL);
}

static void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  quiet_wait(&req);
}

/* Offset of every rank's MPI_Wtime to rank 0's, from the ping-pong with the
 * smallest round trip (rank 0 holds the result; on one node it is ~0).  Only
 * used for the span and skew columns; the elapsed times are per rank. */
static void measure_clock_offsets(MPI_Comm comm, int rank, int size, double* offsets) {
  const int rounds = 8;
  for (int r = 1; r < size; ++r) {
    if (rank == 0) {
      double best_rtt = INFINITY, best_off = 0;
      for (int k = 0; k < rounds; ++k) {
        double their = 0;
        const double t0 = MPI_Wtime();
        MPI_Send(&t0, 1, MPI_DOUBLE, r, 901, comm);
        MPI_Recv(&their, 1, MPI_DOUBLE, r, 902, comm, MPI_STATUS_IGNORE);
        const double t1 = MPI_Wtime();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          best_off = their - 0.5 * (t0 + t1);
        }
      }
      offsets[r] = best_off;
    } else if (rank == r) {
      for (int k = 0; k < rounds; ++k) {
        double t0 = 0;
        MPI_Request req;
        MPI_Irecv(&t0, 1, MPI_DOUBLE, 0, 901, comm, &req);
        if (k == 0) quiet_wait(&req); /* rank 0 is still busy with lower ranks */
        else MPI_Wait(&req, MPI_STATUS_IGNORE);
        const double now = MPI_Wtime();
        MPI_Send(&now, 1, MPI_DOUBLE, 0, 902, comm);
      }
    }
  }
  if (rank == 0) offsets[0] = 0;
  quiet_barrier(comm);
}

/* delta: one point-to-point transfer of `count` floats between ranks 0 and 1,
 * median of half round trips.  The result is broadcast to every rank. */
static double measure_delta(MPI_Comm comm, int rank, int size, long count, float* buf, int reps) {
  double delta = 0;
  if (size < 2 || count == 0) return 0;
  double* half_rtt = malloc(sizeof(double) * (size_t)reps);
  quiet_barrier(comm);
  for (int k = -2; k < reps && rank < 2; ++k) { /* two unrecorded round trips first */
    if (rank == 0) {
      const double t0 = MPI_Wtime();
      MPI_Send(buf, (int)count, MPI_FLOAT, 1, 911, comm);
      MPI_Recv(buf, (int)count, MPI_FLOAT, 1, 912, comm, MPI_STATUS_IGNORE);
      if (k >= 0) half_rtt[k] = 0.5 * (MPI_Wtime() - t0);
    } else if (rank == 1) {
      MPI_Recv(buf, (int)count, MPI_FLOAT, 0, 911, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)count, MPI_FLOAT, 0, 912, comm);
    }
  }
  if (rank == 0) delta = median_of(half_rtt, reps);
  free(half_rtt);
  quiet_barrier(comm);
  MPI_Bcast(&delta, 1, MPI_DOUBLE, 0, comm);
  return delta;
}

/* delta_all: the same transfer with every rank sending to the next and
 * receiving from the previous at once, median over `reps` of the slowest
 * rank.  On a machine whose network or cores cannot carry every rank's
 * transfer at full rate (emulated hosts sharing a few cores) it exceeds
 * delta: any allreduce must move about one vector into every rank after the
 * last arrival, so this is the floor the machine can reach. */
static double measure_delta_all(MPI_Comm comm, int rank, int size, long count, float* send, float* recv, int reps) {
  if (size < 2 || count == 0) return 0;
  double* slowest = malloc(sizeof(double) * (size_t)reps);
  for (int k = -1; k < reps; ++k) { /* one unrecorded round first */
    quiet_barrier(comm);
    const double t0 = MPI_Wtime();
    PMPI_Sendrecv(send, (int)count, MPI_FLOAT, (rank + 1) % size, 913, recv, (int)count, MPI_FLOAT,
                  (rank + size - 1) % size, 913, comm, MPI_STATUS_IGNORE);
    const double mine = MPI_Wtime() - t0;
    double most = 0;
    PMPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (k >= 0) slowest[k] = most;
  }
  const double d = median_of(slowest, reps);
  free(slowest);
  return d;
}

/* ---------------------------------------------------------------------------
 * One configuration */

struct config {
  long count;
  double delay_ms;
  enum delay_mode mode;
};

struct summary {
  double median, mean, min, p90, max, stdev; /* of per-iteration average elapsed */
  double e_lo, span, skew;                    /* medians over iterations */
  double delta, delta_all;
  long errors;
};

/* What rank 0 collects from every rank after each iteration. */
enum { SAMPLE_ELAPSED, SAMPLE_ARRIVAL, SAMPLE_EXIT, SAMPLE_EXTRA, SAMPLE_WORDS };

struct buffers {
  float* send;
  float* recv;
  float* ref;
};

/* Extra compute time of `rank` in iteration `iter`, seconds. */
static double extra_delay(const struct options* o, const struct config* c, int iter, int rank, int size) {
  const double d = c->delay_ms * 1e-3;
  if (d <= 0) return 0;
  if (c->mode == MODE_ONE_LATE) {
    int late = o->late_rank;
    if (o->late_every > 0) late = (iter / o->late_every) % size;
    else if (late < 0 || late >= size) late = (int)(uniform01(o->seed, (uint64_t)iter, 0x1a7e) * size);
    if (o->late_group > 1) return rank / o->late_group == late / o->late_group ? d : 0;
    return rank == late ? d : 0;
  }
  return d * uniform01(o->seed ^ 0x5eed, (uint64_t)iter, (uint64_t)rank + 1);
}

static void fill_random(float* v, long n, uint64_t state) {
  /* xorshift64*, values 0..15: exact in float for any sum over < 2^20 ranks */
  uint64_t x = state ? state : 1;
  for (long i = 0; i < n; ++i) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    v[i] = (float)((x * 0x2545f4914f6cdd1dull) >> 60);
  }
}

static void timed_collective(enum op_kind op, const struct buffers* b, long count, int root, MPI_Comm comm) {
  const int n = (int)count;
  switch (op) {
    case OP_ALLREDUCE: MPI_Allreduce(b->send, b->recv, n, MPI_FLOAT, MPI_SUM, comm); break;
    case OP_REDUCE: MPI_Reduce(b->send, b->recv, n, MPI_FLOAT, MPI_SUM, root, comm); break;
    case OP_ALLGATHER: MPI_Allgather(b->send, n, MPI_FLOAT, b->recv, n, MPI_FLOAT, comm); break;
  }
}

/* 1 when the result of the timed collective differs from PMPI's. */
static int check_result(enum op_kind op, const struct buffers* b, long count, int root, int rank, int size,
                        MPI_Comm comm) {
  const int n = (int)count;
  long len = count;
  switch (op) {
    case OP_ALLREDUCE: PMPI_Allreduce(b->send, b->ref, n, MPI_FLOAT, MPI_SUM, comm); break;
    case OP_REDUCE:
      PMPI_Reduce(b->send, b->ref, n, MPI_FLOAT, MPI_SUM, root, comm);
      if (rank != root) return 0;
      break;
    case OP_ALLGATHER:
      PMPI_Allgather(b->send, n, MPI_FLOAT, b->ref, n, MPI_FLOAT, comm);
      len = count * size;
      break;
  }
  return memcmp(b->recv, b->ref, sizeof(float) * (size_t)len) != 0;
}

/* Lower bound of the iteration's average elapsed time from the nominal extra
 * delays (see usage()). */
static double lower_bound(enum op_kind op, const double* samples, int size, int root, double delta) {
  double last = 0;
  for (int r = 0; r < size; ++r) last = fmax(last, samples[r * SAMPLE_WORDS + SAMPLE_EXTRA]);
  if (op == OP_REDUCE) return (last - samples[root * SAMPLE_WORDS + SAMPLE_EXTRA]) / size + delta;
  double wait = 0;
  for (int r = 0; r < size; ++r) wait += last - samples[r * SAMPLE_WORDS + SAMPLE_EXTRA];
  return wait / size + delta;
}

struct progress {
  double start, last;
  int config_index, nconfigs;
};

static void run_config(const struct options* o, const struct config* c, int config_index, double delta,
                       const double* offsets, const struct buffers* b, MPI_Comm comm, int rank, int size,
                       struct progress* prog, FILE* iter_csv, struct summary* out) {
  const int total = o->warmup + o->iters;
  double* avg = NULL;
  double *elo = NULL, *span = NULL, *skew = NULL, *samples = NULL;
  if (rank == 0) {
    avg = malloc(sizeof(double) * (size_t)o->iters);
    elo = malloc(sizeof(double) * (size_t)o->iters);
    span = malloc(sizeof(double) * (size_t)o->iters);
    skew = malloc(sizeof(double) * (size_t)o->iters);
    samples = malloc(sizeof(double) * SAMPLE_WORDS * (size_t)size);
  }
  const long result_len = o->op == OP_ALLGATHER ? c->count * size : c->count;
  long errors = 0;

  for (int it = 0; it < total; ++it) {
    const int timed = it - o->warmup; /* < 0 while warming up */
    /* The random stream depends on the iteration number only, so every
     * algorithm and every configuration sees the same sequence of late
     * processes. */
    const uint64_t draw = (uint64_t)it;
    fill_random(b->send, c->count, mix64(o->seed * 1000003u + (uint64_t)rank) ^ mix64(draw + 77));
    for (long i = 0; i < result_len; ++i) b->recv[i] = -1.0f;

    const double extra = extra_delay(o, c, it, rank, size);
    const double compute = (o->base_ms + c->delay_ms) * 1e-3 + extra;

    MPI_Barrier(comm);
    MPI_Barrier(comm);
    const double start = wall_seconds();
    sleep_until(start + 0.5 * compute);
    if (o->edge && papshim_edge) papshim_edge(0.5);
    sleep_until(start + compute);

    const double t_arrive = MPI_Wtime();
    timed_collective(o->op, b, c->count, o->root, comm);
    const double t_exit = MPI_Wtime();

    if (o->check_every > 0 && it % o->check_every == 0)
      errors += check_result(o->op, b, c->count, o->root, rank, size, comm);

    const double mine[SAMPLE_WORDS] = {t_exit - t_arrive, t_arrive, t_exit, extra};
    PMPI_Gather(mine, SAMPLE_WORDS, MPI_DOUBLE, samples, SAMPLE_WORDS, MPI_DOUBLE, 0, comm);

    if (rank == 0 && timed >= 0) {
      double sum = 0, first_arrival = INFINITY, last_arrival = -INFINITY, last_exit = -INFINITY;
      int late = -1;
      double late_extra = -1;
      for (int r = 0; r < size; ++r) {
        const double* s = samples + (size_t)r * SAMPLE_WORDS;
        sum += s[SAMPLE_ELAPSED];
        first_arrival = fmin(first_arrival, s[SAMPLE_ARRIVAL] - offsets[r]);
        last_arrival = fmax(last_arrival, s[SAMPLE_ARRIVAL] - offsets[r]);
        last_exit = fmax(last_exit, s[SAMPLE_EXIT] - offsets[r]);
        if (s[SAMPLE_EXTRA] > late_extra) late_extra = s[SAMPLE_EXTRA], late = r;
      }
      avg[timed] = sum / size;
      elo[timed] = lower_bound(o->op, samples, size, o->root, delta);
      span[timed] = last_exit - first_arrival;
      skew[timed] = last_arrival - first_arrival;
      if (iter_csv)
        fprintf(iter_csv, "%s,%d,%s,%ld,%d,%s,%g,%d,%d,%.3f,%.3f,%.3f,%.3f\n", o->label, o->rep, op_name(o->op),
                c->count, size, mode_name(c->mode), c->delay_ms, timed, late_extra > 0 ? late : -1, avg[timed] * 1e6,
                elo[timed] * 1e6, span[timed] * 1e6, skew[timed] * 1e6);
    }
    if (rank == 0 && o->progress_s > 0) {
      const double now = wall_seconds();
      if (now - prog->last >= o->progress_s) {
        prog->last = now;
        fprintf(stderr, "papbench:%s%s%s config %d/%d (%ld floats, %s, %g ms) iteration %d/%d, %.0f s\n",
                o->label[0] ? " [" : "", o->label, o->label[0] ? "]" : "", config_index + 1, prog->nconfigs,
                c->count, mode_name(c->mode), c->delay_ms, it + 1, total, now - prog->start);
      }
    }
  }

  long all_errors = 0;
  PMPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, comm);
  if (rank == 0) {
    const int n = o->iters;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; ++i) sum += avg[i];
    const double mean = sum / n;
    for (int i = 0; i < n; ++i) sq += (avg[i] - mean) * (avg[i] - mean);
    qsort(avg, (size_t)n, sizeof *avg, cmp_double);
    out->median = quantile_sorted(avg, n, 0.5);
    out->mean = mean;
    out->min = avg[0];
    out->p90 = quantile_sorted(avg, n, 0.9);
    out->max = avg[n - 1];
    out->stdev = n > 1 ? sqrt(sq / (n - 1)) : 0;
    out->e_lo = median_of(elo, n);
    out->span = median_of(span, n);
    out->skew = median_of(skew, n);
    out->delta = delta;
    out->errors = all_errors;
    free(avg);
    free(elo);
    free(span);
    free(skew);
    free(samples);
  }
}

/* ---------------------------------------------------------------------------
 * Output */

static const char* kCsvHeader =
    "label,rep,op,count,bytes,nprocs,mode,delay_ms,iters,median_us,mean_us,min_us,p90_us,errors,"
    "max_us,stdev_us,e_lo_us,delta_us,span_us,skew_us,base_ms,warmup,root,late_rank,edge,seed,delta_all_us\n";

static FILE* open_append_with_header(const char* path, const char* header) {
  struct stat st;
  const int fresh = stat(path, &st) != 0 || st.st_size == 0;
  FILE* f = fopen(path, "a");
  if (!f) return NULL;
  if (fresh) fputs(header, f);
  return f;
}

static void print_row(FILE* f, const struct options* o, const struct config* c, int size, const struct summary* s) {
  fprintf(f,
          "%s,%d,%s,%ld,%ld,%d,%s,%g,%d,%.3f,%.3f,%.3f,%.3f,%ld,"
          "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%g,%d,%d,%d,%d,%llu,%.3f\n",
          o->label, o->rep, op_name(o->op), c->count, c->count * (long)sizeof(float), size, mode_name(c->mode),
          c->delay_ms, o->iters, s->median * 1e6, s->mean * 1e6, s->min * 1e6, s->p90 * 1e6, s->errors,
          s->max * 1e6, s->stdev * 1e6, s->e_lo * 1e6, s->delta * 1e6, s->span * 1e6, s->skew * 1e6, o->base_ms,
          o->warmup, o->op == OP_REDUCE ? o->root : -1, o->late_rank, o->edge, (unsigned long long)o->seed,
          s->delta_all * 1e6);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  world_rank = rank;

  struct options o;
  parse_options(argc, argv, &o);
  if (o.root < 0 || o.root >= size) die("%s", "--root must name a rank of MPI_COMM_WORLD");
  if (o.late_rank >= size) die("%s", "--late-rank must name a rank of MPI_COMM_WORLD");

  long max_count = 0;
  for (int i = 0; i < o.ncounts; ++i)
    if (o.counts[i] > max_count) max_count = o.counts[i];
  const long max_result = o.op == OP_ALLGATHER ? max_count * size : max_count;
  struct buffers b;
  b.send = malloc(sizeof(float) * (size_t)(max_count > 0 ? max_count : 1));
  b.recv = malloc(sizeof(float) * (size_t)(max_result > 0 ? max_result : 1));
  b.ref = malloc(sizeof(float) * (size_t)(max_result > 0 ? max_result : 1));
  if (!b.send || !b.recv || !b.ref) die("%s", "out of memory for the data buffers");
  memset(b.send, 0, sizeof(float) * (size_t)(max_count > 0 ? max_count : 1));

  double* offsets = calloc((size_t)size, sizeof(double));
  measure_clock_offsets(comm, rank, size, offsets);

  /* delta for every size, measured once before any timed iteration */
  double deltas[MAX_LIST];
  double deltas_all[MAX_LIST];
  for (int i = 0; i < o.ncounts; ++i) {
    deltas[i] = measure_delta(comm, rank, size, o.counts[i], b.send, o.pingpong_reps);
    deltas_all[i] = measure_delta_all(comm, rank, size, o.counts[i], b.send, b.ref, o.pingpong_reps / 4 + 1);
  }

  FILE* csv = NULL;
  FILE* iter_csv = NULL;
  if (rank == 0) {
    if (o.csv_path && !(csv = open_append_with_header(o.csv_path, kCsvHeader)))
      fprintf(stderr, "papbench: cannot open %s for appending: %s\n", o.csv_path, strerror(errno));
    if (o.iter_csv_path &&
        !(iter_csv = open_append_with_header(
              o.iter_csv_path, "label,rep,op,count,nprocs,mode,delay_ms,iter,late_rank,avg_us,e_lo_us,span_us,skew_us\n")))
      fprintf(stderr, "papbench: cannot open %s for appending: %s\n", o.iter_csv_path, strerror(errno));
    int len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(version, &len);
    char* nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    printf("# papbench %s, %d processes, %s, edge hook %s%s\n", op_name(o.op), size, version,
           papshim_edge ? "present" : "absent", o.edge ? " (called)" : "");
    printf("# %-9s %9s %9s %7s %12s %12s %12s %12s %12s %12s %6s\n", "mode", "count", "bytes", "delay_ms",
           "median_us", "mean_us", "p90_us", "e_lo_us", "delta_us", "span_us", "errors");
    fflush(stdout);
  }

  struct progress prog;
  prog.start = prog.last = wall_seconds();
  prog.nconfigs = o.ncounts * o.nmodes * o.ndelays;
  long total_errors = 0;
  int index = 0;
  for (int ic = 0; ic < o.ncounts; ++ic) {
    for (int im = 0; im < o.nmodes; ++im) {
      for (int id = 0; id < o.ndelays; ++id, ++index) {
        struct config c = {o.counts[ic], o.delays_ms[id], o.modes[im]};
        struct summary s;
        memset(&s, 0, sizeof s);
        prog.config_index = index;
        run_config(&o, &c, index, deltas[ic], offsets, &b, comm, rank, size, &prog, iter_csv, &s);
        s.delta_all = deltas_all[ic];
        if (rank == 0) {
          total_errors += s.errors;
          printf("  %-9s %9ld %9ld %7g %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f %6ld\n", mode_name(c.mode), c.count,
                 c.count * (long)sizeof(float), c.delay_ms, s.median * 1e6, s.mean * 1e6, s.p90 * 1e6, s.e_lo * 1e6,
                 s.delta * 1e6, s.span * 1e6, s.errors);
          fflush(stdout);
          if (csv) {
            print_row(csv, &o, &c, size, &s);
            fflush(csv);
          }
          if (iter_csv) fflush(iter_csv);
        }
      }
    }
  }

  if (rank == 0) {
    if (csv) fclose(csv);
    if (iter_csv) fclose(iter_csv);
    if (total_errors) fprintf(stderr, "papbench: %ld WRONG RESULTS (iterations x ranks)\n", total_errors);
  }
  MPI_Bcast(&total_errors, 1, MPI_LONG, 0, comm);
  free(offsets);
  free(b.send);
  free(b.recv);
  free(b.ref);
  MPI_Finalize();
  return total_errors ? 1 : 0;
}
