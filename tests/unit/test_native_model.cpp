// Tests for the model of native (algorithms/native_model.h) and the
// calibrated transfer curve (common/cost_figures.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "algorithms/native_model.h"
#include "algorithms/selector.h"

namespace papshim {
namespace {

constexpr double KiB = 1024, MiB = 1024 * 1024;

TEST(NativeModel, LibraryFromVersionString) {
  EXPECT_EQ(library_from_version("Open MPI v4.1.4, package: Debian OpenMPI"), MpiLibrary::OpenMpi);
  EXPECT_EQ(library_from_version("MPICH Version:\t4.0.2\nMPICH Release date: ..."), MpiLibrary::Mpich);
  EXPECT_EQ(library_from_version("SMPI Version 3.32. Copyright The SimGrid Team"), MpiLibrary::Smpi);
  EXPECT_EQ(library_from_version("Intel(R) MPI Library 2021"), MpiLibrary::Unknown);
  EXPECT_EQ(library_from_version(""), MpiLibrary::Unknown);
}

NativeAlgorithm ar(MpiLibrary lib, int P, double bytes) {
  return native_algorithm(lib, Collective::Allreduce, P, bytes, static_cast<std::size_t>(bytes / 4), true);
}
NativeAlgorithm ag(MpiLibrary lib, int P, double block) {
  return native_algorithm(lib, Collective::Allgather, P, block, static_cast<std::size_t>(block / 4), true);
}

// Points of Open MPI 4.1's fixed rules (coll_tuned_decision_fixed.c), one
// per band where they differ.
TEST(NativeModel, OpenMpiAllreduceRules) {
  const auto O = MpiLibrary::OpenMpi;
  EXPECT_EQ(ar(O, 8, 1 * MiB), NativeAlgorithm::Rabenseifner);
  EXPECT_EQ(ar(O, 8, 4 * KiB), NativeAlgorithm::RecursiveDoubling);
  EXPECT_EQ(ar(O, 2, 32 * KiB), NativeAlgorithm::Ring);
  EXPECT_EQ(ar(O, 100, 64 * KiB), NativeAlgorithm::RecursiveDoubling);
  EXPECT_EQ(ar(O, 200, 64 * KiB), NativeAlgorithm::ReduceBcast);  // nonoverlapping: reduce, then bcast
  EXPECT_EQ(ar(O, 1024, 1 * MiB), NativeAlgorithm::Rabenseifner);
  EXPECT_EQ(ar(O, 1024, 8 * KiB), NativeAlgorithm::RecursiveDoubling);
  // The segmented ring, unsegmented (12 KiB of bytes: more elements than ranks).
  EXPECT_EQ(native_algorithm(O, Collective::Allreduce, 5000, 12 * KiB, 12288, true), NativeAlgorithm::Ring);
  EXPECT_EQ(ar(O, 5000, 12 * KiB), NativeAlgorithm::RecursiveDoubling);  // 3072 floats: fewer than ranks
  // The fallbacks: a ring on fewer elements than ranks, Rabenseifner on
  // fewer elements than the power of two below P.
  EXPECT_EQ(native_algorithm(O, Collective::Allreduce, 40, 64, 16, true), NativeAlgorithm::RecursiveDoubling);
  EXPECT_EQ(native_algorithm(O, Collective::Allreduce, 300, 1 * MiB, 100, true), NativeAlgorithm::LinearReduceBcast);
  // Not modelled: a non-commutative op, reduce, one rank, an unknown library.
  EXPECT_EQ(native_algorithm(O, Collective::Allreduce, 8, 1 * MiB, 262144, false), NativeAlgorithm::None);
  EXPECT_EQ(native_algorithm(O, Collective::Reduce, 8, 1 * MiB, 262144, true), NativeAlgorithm::None);
  EXPECT_EQ(ar(O, 1, 1 * MiB), NativeAlgorithm::None);
  EXPECT_EQ(ar(MpiLibrary::Unknown, 8, 1 * MiB), NativeAlgorithm::None);
}

TEST(NativeModel, AllgatherAndMpichRules) {
  const auto O = MpiLibrary::OpenMpi, M = MpiLibrary::Mpich;
  EXPECT_EQ(ag(O, 2, 1 * MiB), NativeAlgorithm::TwoProc);
  EXPECT_EQ(ag(O, 16, 1 * MiB), NativeAlgorithm::RecursiveDoublingAllgather);
  EXPECT_EQ(ag(O, 12, 1 * MiB), NativeAlgorithm::Bruck);  // recursive doubling needs a power of two
  EXPECT_EQ(ag(O, 40, 4 * KiB), NativeAlgorithm::NeighborExchange);
  EXPECT_EQ(ag(O, 41, 4 * KiB), NativeAlgorithm::RingAllgather);  // neighbor exchange needs an even P
  EXPECT_EQ(ag(O, 40, 1 * MiB), NativeAlgorithm::RingAllgather);
  EXPECT_EQ(ar(M, 8, 8), NativeAlgorithm::RecursiveDoubling);
  EXPECT_EQ(ar(M, 8, 16), NativeAlgorithm::RecursiveDoubling);  // 4 floats: fewer than 8
  EXPECT_EQ(ar(M, 8, 64), NativeAlgorithm::Rabenseifner);
  EXPECT_EQ(ag(M, 16, 1 * KiB), NativeAlgorithm::RecursiveDoublingAllgather);  // 16 KiB in all
  EXPECT_EQ(ag(M, 16, 64 * KiB), NativeAlgorithm::RingAllgather);             // 1 MiB in all
  EXPECT_EQ(ag(M, 12, 1 * KiB), NativeAlgorithm::Bruck);
}

// The closed forms count the algorithms' real messages: with alpha alone
// (beta = gamma = 0) the time is alpha times the messages one after another.
TEST(NativeModel, MessageCountsAreLogP) {
  CostFigures c;
  c.alpha = 1;
  c.beta = c.gamma = 0;
  const auto O = MpiLibrary::OpenMpi;
  EXPECT_DOUBLE_EQ(native_balanced_time(O, NativeAlgorithm::Rabenseifner, 1024, MiB, c), 20);  // 10 + 10
  EXPECT_DOUBLE_EQ(native_balanced_time(O, NativeAlgorithm::Rabenseifner, 1000, MiB, c), 18 + 3);  // pre 2, post 1
  EXPECT_DOUBLE_EQ(native_balanced_time(MpiLibrary::Mpich, NativeAlgorithm::Rabenseifner, 1000, MiB, c), 18 + 2);
  EXPECT_DOUBLE_EQ(native_balanced_time(O, NativeAlgorithm::RecursiveDoubling, 1024, MiB, c), 10);
  EXPECT_DOUBLE_EQ(native_balanced_time(O, NativeAlgorithm::Ring, 1024, MiB, c), 2 * 1023);
  EXPECT_DOUBLE_EQ(native_balanced_time(O, NativeAlgorithm::Bruck, 1000, KiB, c), 10);
  EXPECT_DOUBLE_EQ(native_balanced_time(O, NativeAlgorithm::NeighborExchange, 40, KiB, c), 20);
}

// With beta alone the bytes: Rabenseifner moves 2 (P-1)/P of the vector
// through each port, recursive doubling log2 P whole vectors.
TEST(NativeModel, BytesMatchTheAlgorithms) {
  CostFigures c;
  c.alpha = c.gamma = 0;
  c.beta = 1;
  const auto O = MpiLibrary::OpenMpi;
  EXPECT_NEAR(native_balanced_time(O, NativeAlgorithm::Rabenseifner, 256, 1.0, c), 2.0 * 255 / 256, 1e-12);
  EXPECT_NEAR(native_balanced_time(O, NativeAlgorithm::RecursiveDoubling, 256, 1.0, c), 8.0, 1e-12);
  EXPECT_NEAR(native_balanced_time(O, NativeAlgorithm::RecursiveDoublingAllgather, 256, 1.0, c), 255.0, 1e-12);
}

TEST(TransferCurve, InterpolatesAndExtends) {
  CostFigures c;
  c.alpha = 10e-6;
  c.beta = 1e-9;
  EXPECT_DOUBLE_EQ(c.transfer(1000), 10e-6 + 1e-6);  // no curve: alpha + beta b
  c.curve_n = 3;
  c.curve_bytes = {8, 65536, 1048576};
  c.curve_time = {10e-6, 200e-6, 1100e-6};
  EXPECT_DOUBLE_EQ(c.transfer(1), 10e-6);
  EXPECT_DOUBLE_EQ(c.transfer(65536), 200e-6);
  EXPECT_NEAR(c.transfer((65536 + 1048576) / 2.0), 650e-6, 1e-12);
  EXPECT_NEAR(c.transfer(2 * 1048576.0), 1100e-6 + 1e-9 * 1048576, 1e-12);
  double last = 0;
  for (double b = 1; b < 4e6; b *= 1.7) {
    EXPECT_GE(c.transfer(b), last) << b;
    last = c.transfer(b);
  }
}

SelectInput late_input(MpiLibrary lib, int P, double late_transfers) {
  SelectInput in;
  in.coll = Collective::Allreduce;
  in.nprocs = P;
  in.count = 262144;  // 1 MiB of floats
  in.elem_size = 4;
  in.cost = {50e-6, 8.7e-9, 0.2e-9};  // a 1 Gbit/s network
  in.library = lib;
  in.arrival.assign(static_cast<std::size_t>(P), 0.0);
  in.arrival[3] = late_transfers * in.cost.transfer(4.0 * 262144);
  return in;
}

// At scale the library's log P algorithm beats every 2(P-1)-step schedule;
// modelled as papshim's own ring or Rabenseifner schedule (an unknown
// library), native looks slow enough there for a candidate to win.
TEST(NativeModel, AtScaleTheLibrarysModelKeepsNative) {
  for (int P : {256, 1024}) {
    const Selection known = select_algorithm(late_input(MpiLibrary::OpenMpi, P, 1.5));
    EXPECT_EQ(known.pick, Algo::Native) << format_selection(known);
    bool modelled = false;
    for (const Candidate& c : known.table)
      if (c.native_algorithm == NativeAlgorithm::Rabenseifner) modelled = c.native_model;
    EXPECT_TRUE(modelled) << format_selection(known);
    const Selection unknown = select_algorithm(late_input(MpiLibrary::Unknown, P, 1.5));
    double rows = INFINITY;
    for (const Candidate& c : unknown.table)
      if (c.native_model) rows = std::min(rows, c.predicted);
    EXPECT_GT(rows, 1.5 * known.predicted) << format_selection(unknown);
  }
}

// At 8 ranks with a rank late by several transfers the candidates are
// predicted near the library's Rabenseifner (within the margin): once
// native has been measured they go on trial, and what they measure decides.
TEST(NativeModel, SmallPLateRankPutsACandidateOnTrial) {
  SelectInput in = late_input(MpiLibrary::OpenMpi, 8, 4.0);
  in.correction.set_calls(in.coll, Algo::Native, kNativeCallsBeforeTrials);
  const Selection s = select_algorithm(in);
  EXPECT_NE(s.pick, Algo::Native) << format_selection(s);
  EXPECT_NE(s.why.find("on trial"), std::string::npos) << s.why;
}

}  // namespace
}  // namespace papshim
