#include "algorithms/catalog.h"

#include <exception>
#include <string>

#include "algorithms/allgather_baselines.h"
#include "algorithms/binomial_reduce.h"
#include "algorithms/clairvoyant.h"
#include "algorithms/cost_model.h"
#include "algorithms/direct_allreduce.h"
#include "algorithms/prr.h"
#include "algorithms/rabenseifner.h"
#include "algorithms/ring_allreduce.h"
#include "algorithms/slt.h"
#include "algorithms/sparbit.h"
#include "algorithms/straggler.h"
#include "algorithms/straggler_allgather.h"

namespace papshim {

namespace {

// Adapts a generator that always builds to the table's builder type.
template <Schedule (*F)(const ScheduleParams&)>
std::optional<Schedule> always(const ScheduleParams& p) {
  return F(p);
}

constexpr AutoRole kForced = AutoRole::ForcedOnly;
constexpr AutoRole kNativeModel = AutoRole::NativeModel;
constexpr AutoRole kCandidate = AutoRole::Candidate;

// PRR and SLT send 2(P-1) messages per rank one after another, against the
// libraries' 2 log2 P: on SMPI's 1 Gbit/s star (1 MiB, one rank 1.5
// transfers late) PRR ran 1.3 times native's time at 64 ranks, 1.45 at 256
// and 4.3 at 1024, and even with nominal links it won only up to 64.  The
// model of native (native_model.h) keeps them out there; above this many
// ranks auto does not weigh them at all.
constexpr int kChainAutoMaxP = 256;

// The order of the rows is the order auto mode weighs them in (catalog.h).
// Per row: algo, name, collective, needs a commutative op, builder,
// description; size check, segments, closed form; role in auto, at most this
// many ranks there (0: any), only on a spread, only on one host.
const std::vector<AlgoInfo>& table() {
  static const std::vector<AlgoInfo> kAlgos = {
      {Algo::Native, "native", Collective::Allreduce, false, nullptr,
       "the MPI library's own collective (no schedule)",
       nullptr, nullptr, nullptr, kForced, 0, false, false},
      // On balanced arrivals auto tries it against native on equal arrivals
      // (a ring of pipelined slices; selector.h).
      {Algo::Prr, "prr", Collective::Allreduce, true, always<build_prr>,
       "pre-reduced ring: ring allreduce whose early processes start slices before the last arrives",
       nullptr, nullptr, prr_cost, kCandidate, kChainAutoMaxP, false, false},
      {Algo::Slt, "slt", Collective::Allreduce, true, always<build_slt>,
       "sorted linear tree: segment pipeline through the ranks in predicted arrival order",
       nullptr, nullptr, slt_cost, kCandidate, kChainAutoMaxP, true, false},
      {Algo::RingAllreduce, "ring", Collective::Allreduce, true, always<build_ring_allreduce>,
       "ring allreduce: reduce-scatter then allgather around the ring of ranks",
       nullptr, nullptr, ring_allreduce_cost, kNativeModel, 0, false, false},
      {Algo::Rabenseifner, "rabenseifner", Collective::Allreduce, true, always<build_rabenseifner>,
       "recursive halving reduce-scatter then recursive doubling allgather",
       nullptr, nullptr, rabenseifner_cost, kNativeModel, 0, false, false},
      {Algo::DirectAllreduce, "direct", Collective::Allreduce, true, always<build_direct_allreduce>,
       "every rank sends each slice straight to its owner, owners send the sums to all",
       nullptr, nullptr, direct_allreduce_cost, kForced, 0, false, false},
      // Its direct reduce-scatter and finished chunks send P-1 flows into
      // every rank at once: on 8 emulated hosts at 100 Mbit/s, one 125 ms
      // late, it ran 538 to 606 ms where native ran 313 (TCP timeouts after
      // the port queues dropped).  Auto weighs it on one host only.
      {Algo::Straggler, "straggler", Collective::Allreduce, true, always<build_straggler>,
       "early ranks reduce-scatter while the latest is late, then its vector moves once in chunks",
       nullptr, straggler_segments_for, straggler_cost, kCandidate, 0, true, true},
      {Algo::Clairvoyant, "clairvoyant", Collective::Reduce, true, always<build_clairvoyant>,
       "round-based reduce that pairs processes by predicted availability (segment-tree generator)",
       nullptr, clairvoyant_segments, nullptr, kCandidate, kClairvoyantSimMaxP, true, false},
      {Algo::ClairvoyantLinear, "clairvoyant_linear", Collective::Reduce, true, always<build_clairvoyant_linear>,
       "the same clairvoyant schedule from the plain linear-search generator",
       nullptr, clairvoyant_segments, nullptr, kForced, 0, false, false},
      {Algo::Binomial, "binomial", Collective::Reduce, true, always<build_binomial_reduce>,
       "binomial tree rooted at the root, segments pipelined",
       nullptr, tree_segments, binomial_reduce_cost, kNativeModel, 0, false, false},
      // On balanced arrivals auto weighs it alone against native, on equal
      // arrivals (selector.h).
      {Algo::SortedBinomial, "sorted_binomial", Collective::Reduce, true, always<build_sorted_binomial_reduce>,
       "binomial tree with late ranks placed in small subtrees",
       nullptr, tree_segments, sorted_binomial_reduce_cost, kCandidate, 0, false, false},
      // Chosen on measured cost whatever the spread: it does not act on arrivals.
      {Algo::Sparbit, "sparbit", Collective::Allgather, false, always<build_sparbit>,
       "P binomial trees over the ring with halving distances, one block per message",
       nullptr, nullptr, log_step_allgather_cost, kCandidate, 0, false, false},
      {Algo::RingAllgather, "ring", Collective::Allgather, false, always<build_ring_allgather>,
       "ring allgather: each block travels P-1 hops around the ring",
       nullptr, nullptr, ring_allgather_cost, kNativeModel, 0, false, false},
      {Algo::Bruck, "bruck", Collective::Allgather, false, always<build_bruck_allgather>,
       "Bruck allgather: doubling distances, works for any P",
       nullptr, nullptr, log_step_allgather_cost, kNativeModel, 0, false, false},
      {Algo::RecursiveDoubling, "recursive_doubling", Collective::Allgather, false, build_recursive_doubling_allgather,
       "recursive doubling allgather (power-of-two P only)",
       recursive_doubling_size_check, nullptr, log_step_allgather_cost, kNativeModel, 0, false, false},
      {Algo::StragglerAllgather, "straggler", Collective::Allgather, false, always<build_straggler_allgather>,
       "early ranks exchange blocks while the latest is late, then only its block spreads, in chunks",
       nullptr, straggler_allgather_segments_for, straggler_allgather_cost, kCandidate, kStragglerAllgatherAutoMaxP,
       true, false},
  };
  return kAlgos;
}

}  // namespace

const std::vector<AlgoInfo>& all_algorithms() { return table(); }


const AlgoInfo& algo_info(Algo a) {
  for (const auto& i : table())
    if (i.algo == a) return i;
  return table().front();
}

std::optional<Algo> algo_from_name(Collective c, const std::string& name) {
  if (name == "native") return Algo::Native;
  for (const auto& i : table())
    if (i.coll == c && name == i.name) return i.algo;
  return std::nullopt;
}

std::vector<const AlgoInfo*> algorithms_for(Collective c) {
  std::vector<const AlgoInfo*> out;
  for (const auto& i : table())
    if (i.coll == c && i.build != nullptr) out.push_back(&i);
  return out;
}

BuildResult build_schedule(Algo a, const ScheduleParams& p) {
  BuildResult r;
  const AlgoInfo& info = algo_info(a);
  if (info.build == nullptr) {
    r.reason = std::string(info.name) + " has no schedule";
    return r;
  }
  try {
    r.schedule = info.build(p);
    if (!r.schedule) {
      const char* why = info.size_check != nullptr ? info.size_check(p.nprocs) : nullptr;
      r.reason = std::string(info.name) + " " + (why != nullptr ? why : "cannot serve these inputs");
    }
  } catch (const std::exception& e) {
    // A generator refusing its inputs (e.g. a non-finite arrival) means
    // native for this call, never an exception through the MPI call.
    r.schedule.reset();
    r.reason = std::string("schedule not built: ") + e.what();
  }
  return r;
}

}  // namespace papshim
