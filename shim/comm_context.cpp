#include "shim/comm_context.h"

#include <vector>

#include "config/log.h"
#include "shim/runtime.h"
#include "shim/stats.h"

namespace papshim {

namespace {

int delete_context(MPI_Comm, int, void* attr, void*) {
  CommRegistry::instance().on_delete(static_cast<CommContext*>(attr));
  return MPI_SUCCESS;
}

// Frees what a context owns (no MPI call on the user's communicator).
void release(CommContext* ctx) {
  // A round whose exchange is still running keeps the predictor and the
  // private duplicate alive (parked) until it completes (predictor/round_channel.h).
  Predictor::test_parked();
  if (ctx->pred && !ctx->pred->close()) {
    Predictor::park(ctx->pred, ctx->priv);
    ctx->priv = MPI_COMM_NULL;
  }
  ctx->pred.reset();
  ctx->hier.reset();
  if (ctx->priv != MPI_COMM_NULL) PMPI_Comm_free(&ctx->priv);
  Stats::instance().retire_communicator(ctx->local_id);
}

// PMPI_Comm_dup with errors returned, whatever the user's error handler:
// a refusal must not abort a job the user's own calls would not abort.
int dup_returning_errors(MPI_Comm comm, MPI_Comm* out) {
  MPI_Errhandler user_eh = MPI_ERRHANDLER_NULL;
  const bool swapped = PMPI_Comm_get_errhandler(comm, &user_eh) == MPI_SUCCESS &&
                       PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN) == MPI_SUCCESS;
  const int rc = PMPI_Comm_dup(comm, out);
  if (swapped) PMPI_Comm_set_errhandler(comm, user_eh);
  if (user_eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&user_eh);
  if (rc != MPI_SUCCESS) *out = MPI_COMM_NULL;
  return rc;
}

}  // namespace

CommRegistry& CommRegistry::instance() {
  static CommRegistry* r = new CommRegistry;  // outlives static destruction (exit without MPI_Finalize)
  return *r;
}

CommContext* CommRegistry::get(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return nullptr;
  struct Cached {
    MPI_Comm comm;
    CommContext* ctx;
    std::uint64_t generation;
  };
  thread_local Cached cached{MPI_COMM_NULL, nullptr, 0};
  const std::uint64_t gen = generation_.load(std::memory_order_acquire);
  if (cached.ctx != nullptr && cached.comm == comm && cached.generation == gen) return cached.ctx;
  CommContext* ctx = lookup(comm);
  if (ctx != nullptr) cached = Cached{comm, ctx, gen};
  return ctx;
}

CommContext* CommRegistry::lookup(MPI_Comm comm) {
  int kv = keyval_.load(std::memory_order_acquire);
  if (kv == MPI_KEYVAL_INVALID) {
    std::lock_guard<std::mutex> lock(mu_);  // PMPI_Comm_create_keyval is local
    kv = keyval_.load();
    if (kv == MPI_KEYVAL_INVALID) {
      if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &kv, nullptr) != MPI_SUCCESS) return nullptr;
      keyval_.store(kv, std::memory_order_release);
    }
  }
  // Attribute access is thread safe under MPI_THREAD_MULTIPLE, and only the
  // thread running this communicator's collective can create its context.
  void* attr = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, kv, &attr, &found) != MPI_SUCCESS) return nullptr;
  if (found) return static_cast<CommContext*>(attr);

  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return nullptr;
  auto ctx = std::make_unique<CommContext>();
  ctx->user = comm;
  PMPI_Comm_size(comm, &ctx->size);
  PMPI_Comm_rank(comm, &ctx->rank);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ctx->local_id = (static_cast<std::uint64_t>(runtime().world_rank) << 32) | next_local_++;
  }
  if (PMPI_Comm_set_attr(comm, kv, ctx.get()) != MPI_SUCCESS) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  live_.insert(ctx.get());
  return ctx.release();
}

bool CommRegistry::ensure_private(CommContext& ctx) {
  if (ctx.has_private() || ctx.priv_refused) return ctx.has_private();
  const long allowed = runtime().cfg.test_max_private;
  const int rc = allowed > 0 && made_ >= allowed ? MPI_ERR_INTERN : dup_returning_errors(ctx.user, &ctx.priv);
  if (rc != MPI_SUCCESS) {
    ctx.priv = MPI_COMM_NULL;
    ctx.priv_refused = true;
    if (refused_++ == 0) {
      char msg[MPI_MAX_ERROR_STRING] = {0};
      int len = 0;
      PMPI_Error_string(rc, msg, &len);
      log().warn("the MPI library refused a private duplicate of a communicator ({}); its calls run native "
                 "(counted in the report)", msg);
    }
    return false;
  }
  ++made_;
  PMPI_Comm_set_errhandler(ctx.priv, MPI_ERRORS_RETURN);
  // Rank 0's id for all, as a maximum over zeros: a broadcast would leave
  // the shared-memory transport slower for every later call (calibrate.h).
  std::uint64_t id = ctx.rank == 0 ? ctx.local_id : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &id, 1, MPI_UINT64_T, MPI_MAX, ctx.priv);
  ctx.id = id | (std::uint64_t{1} << 63);  // never 0
  int* ub = nullptr;
  int has_ub = 0;
  PMPI_Comm_get_attr(ctx.priv, MPI_TAG_UB, &ub, &has_ub);
  const int tag_top = has_ub && ub ? *ub : 32767;  // MPI guarantees at least 32767
  // The highest kRoundTags tags are the prediction rounds' (whether or not
  // a predictor runs, so the limit does not depend on the mode); schedules
  // on the duplicate stay below them (dispatch refuses any that would not).
  ctx.tag_ub = tag_top - kRoundTags;
  const Config& cfg = runtime().cfg;
  if (cfg.predictor != PredictorMode::Off)
    ctx.pred = std::make_shared<Predictor>(ctx.priv, ctx.size, ctx.rank, tag_top, cfg.sma_window, cfg.predictor,
                                           cfg.min_bytes, cfg.quiet_skip);
  // Several ranks per host: reductions run between hosts (shim/hierarchy.h).
  // Every input is job-wide, so every rank makes the same decision here.
  if (cfg.hierarchy && !cfg.reproducible && runtime().multi_node)
    ctx.hier = make_hierarchy(ctx.priv, ctx.rank, runtime().host_key);
  log().debug("private communicator for context id={:#x} size={} rank={}", ctx.id, ctx.size, ctx.rank);
  return true;
}

void CommRegistry::on_delete(CommContext* ctx) {
  generation_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(ctx);
    if (last_used_.load() == ctx) {
      last_used_.store(nullptr);
      last_pred_.reset();
    }
  }
  release(ctx);
  delete ctx;
}

void CommRegistry::remember_last(CommContext* c) {
  std::lock_guard<std::mutex> lock(mu_);
  last_used_.store(c, std::memory_order_relaxed);
  last_pred_ = c ? c->pred : nullptr;
}

std::shared_ptr<Predictor> CommRegistry::last_predictor() {
  std::lock_guard<std::mutex> lock(mu_);
  // The predictor may have come after the context was last remembered.
  if (CommContext* c = last_used_.load(); c && !last_pred_) last_pred_ = c->pred;
  return last_pred_;
}

void CommRegistry::finish_predictors() {
  std::vector<std::shared_ptr<Predictor>> preds;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (CommContext* c : live_)
      if (c->pred) preds.push_back(c->pred);
  }
  Predictor::finish_all(preds);  // with the parked ones, started at their close()
}

void CommRegistry::release_all() {
  std::vector<CommContext*> ctxs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ctxs.assign(live_.begin(), live_.end());
  }
  // Deleting the attribute runs on_delete: MPI_Finalize's own cleanup of
  // the predefined communicators then finds nothing of ours.
  const int kv = keyval_.load();
  for (CommContext* c : ctxs) PMPI_Comm_delete_attr(c->user, kv);
  if (int k = keyval_.exchange(MPI_KEYVAL_INVALID); k != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&k);
}

}  // namespace papshim
