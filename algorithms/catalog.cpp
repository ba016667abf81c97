#include "algorithms/catalog.h"

#include <array>
#include <exception>
#include <string>

#include "algorithms/allgather_baselines.h"
#include "algorithms/binomial_reduce.h"
#include "algorithms/clairvoyant.h"
#include "algorithms/direct_allreduce.h"
#include "algorithms/prr.h"
#include "algorithms/rabenseifner.h"
#include "algorithms/ring_allreduce.h"
#include "algorithms/slt.h"
#include "algorithms/sparbit.h"

namespace papshim {

namespace {
constexpr std::array<AlgoInfo, 14> kAlgos = {{
    {Algo::Native, "native", Collective::Allreduce, false},
    {Algo::Prr, "prr", Collective::Allreduce, true},
    {Algo::Slt, "slt", Collective::Allreduce, true},
    {Algo::RingAllreduce, "ring", Collective::Allreduce, true},
    {Algo::Rabenseifner, "rabenseifner", Collective::Allreduce, true},
    {Algo::DirectAllreduce, "direct", Collective::Allreduce, true},
    {Algo::Clairvoyant, "clairvoyant", Collective::Reduce, true},
    {Algo::ClairvoyantLinear, "clairvoyant_linear", Collective::Reduce, true},
    {Algo::Binomial, "binomial", Collective::Reduce, true},
    {Algo::SortedBinomial, "sorted_binomial", Collective::Reduce, true},
    {Algo::Sparbit, "sparbit", Collective::Allgather, false},
    {Algo::RingAllgather, "ring", Collective::Allgather, false},
    {Algo::Bruck, "bruck", Collective::Allgather, false},
    {Algo::RecursiveDoubling, "recursive_doubling", Collective::Allgather, false},
}};
}  // namespace

const AlgoInfo& algo_info(Algo a) {
  for (const auto& i : kAlgos)
    if (i.algo == a) return i;
  return kAlgos[0];
}

std::optional<Algo> algo_from_name(Collective c, const std::string& name) {
  if (name == "native") return Algo::Native;
  for (const auto& i : kAlgos)
    if (i.coll == c && name == i.name) return i.algo;
  return std::nullopt;
}

BuildResult build_schedule(Algo a, const ScheduleParams& p) {
  BuildResult r;
  try {
    switch (a) {
    case Algo::Native: r.reason = "native has no schedule"; break;
    case Algo::Prr: r.schedule = build_prr(p); break;
    case Algo::Slt: r.schedule = build_slt(p); break;
    case Algo::RingAllreduce: r.schedule = build_ring_allreduce(p); break;
    case Algo::Rabenseifner: r.schedule = build_rabenseifner(p); break;
    case Algo::DirectAllreduce: r.schedule = build_direct_allreduce(p); break;
    case Algo::Clairvoyant: r.schedule = build_clairvoyant(p); break;
    case Algo::ClairvoyantLinear: r.schedule = build_clairvoyant_linear(p); break;
    case Algo::Binomial: r.schedule = build_binomial_reduce(p); break;
    case Algo::SortedBinomial: r.schedule = build_sorted_binomial_reduce(p); break;
    case Algo::Sparbit: r.schedule = build_sparbit(p); break;
    case Algo::RingAllgather: r.schedule = build_ring_allgather(p); break;
    case Algo::Bruck: r.schedule = build_bruck_allgather(p); break;
    case Algo::RecursiveDoubling:
      r.schedule = build_recursive_doubling_allgather(p);
      if (!r.schedule) r.reason = "recursive_doubling needs a power-of-two communicator size";
      break;
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
