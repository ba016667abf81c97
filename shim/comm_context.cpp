#include "shim/comm_context.h"

#include "config/log.h"
#include "shim/runtime.h"

namespace papshim {

namespace {
int delete_context(MPI_Comm, int, void* attr, void*) {
  auto* ctx = static_cast<CommContext*>(attr);
  if (ctx->pred) ctx->pred->finish();
  ctx->pred.reset();
  if (ctx->xchg != MPI_COMM_NULL) PMPI_Comm_free(&ctx->xchg);
  if (ctx->priv != MPI_COMM_NULL) PMPI_Comm_free(&ctx->priv);
  if (CommRegistry::instance().last_used() == ctx) CommRegistry::instance().set_last_used(nullptr);
  ctx->freed = true;
  return MPI_SUCCESS;
}
}  // namespace

CommRegistry& CommRegistry::instance() {
  static CommRegistry r;
  return r;
}

CommContext* CommRegistry::get(MPI_Comm comm, int world_rank) {
  if (comm == MPI_COMM_NULL) return nullptr;
  if (const int kv = keyval_.load(std::memory_order_acquire); kv != MPI_KEYVAL_INVALID) {
    // Fast path: the context is already attached (no lock; MPI's attribute
    // access is thread safe under MPI_THREAD_MULTIPLE).
    void* attr = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, kv, &attr, &found) == MPI_SUCCESS && found) return static_cast<CommContext*>(attr);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (keyval_ == MPI_KEYVAL_INVALID) {
    int kv = MPI_KEYVAL_INVALID;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &kv, nullptr) != MPI_SUCCESS) return nullptr;
    keyval_.store(kv, std::memory_order_release);
  }
  void* attr = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &attr, &found) != MPI_SUCCESS) return nullptr;
  if (found) return static_cast<CommContext*>(attr);

  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return nullptr;
  auto ctx = std::make_unique<CommContext>();
  ctx->user = comm;
  PMPI_Comm_size(comm, &ctx->size);
  PMPI_Comm_rank(comm, &ctx->rank);
  std::uint64_t local_id = (static_cast<std::uint64_t>(world_rank) << 32) | next_local_++;
  if (ctx->size > 1) {
    if (PMPI_Comm_dup(comm, &ctx->priv) != MPI_SUCCESS) return nullptr;
    PMPI_Comm_set_errhandler(ctx->priv, MPI_ERRORS_RETURN);
    PMPI_Bcast(&local_id, 1, MPI_UINT64_T, 0, ctx->priv);
    int* ub = nullptr;
    int has_ub = 0;
    PMPI_Comm_get_attr(ctx->priv, MPI_TAG_UB, &ub, &has_ub);
    if (has_ub && ub) ctx->tag_ub = *ub;
    const Config& cfg = runtime().cfg;
    if (cfg.predictor != PredictorMode::Off) {
      PMPI_Comm_dup(comm, &ctx->xchg);
      PMPI_Comm_set_errhandler(ctx->xchg, MPI_ERRORS_RETURN);
      ctx->pred = std::make_shared<Predictor>(ctx->xchg, ctx->size, ctx->rank, cfg.sma_window, cfg.predictor);
    }
  }
  ctx->id = local_id;
  PMPI_Comm_set_attr(comm, keyval_, ctx.get());
  log().debug("new communicator context id={:#x} size={} rank={}", ctx->id, ctx->size, ctx->rank);
  all_.push_back(std::move(ctx));
  return all_.back().get();
}

void CommRegistry::finish_predictors() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : all_)
    if (!c->freed && c->pred) c->pred->publish_final();
  for (auto& c : all_)
    if (!c->freed && c->pred) c->pred->finish();
}

void CommRegistry::release_all() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : all_)
    if (!c->freed && c->priv != MPI_COMM_NULL) {
      // Detach from the user's communicator first so MPI_Finalize's own
      // attribute cleanup does not free it twice.
      PMPI_Comm_delete_attr(c->user, keyval_);
    }
  if (int kv = keyval_.exchange(MPI_KEYVAL_INVALID); kv != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&kv);
}

}  // namespace papshim
