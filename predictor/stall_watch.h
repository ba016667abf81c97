// The stall notice (PAPSHIM_STALL_SECONDS): when a collective call has
// waited that long, the helper thread logs once, for that call, where this
// rank waits and which ranks had not arrived by the call's prediction round.
//
// Works as follows.  The calling thread registers its call (a Call on its
// own stack) at the entry and removes it at the exit; after the entry's
// prediction round it points the Call at the round's arrival vector, which
// stays unchanged until the exit.  The helper thread's check() looks at the
// registered calls every time it wakes (at least every 50 ms) and logs a
// notice for each call past the limit that has none yet.  One mutex guards
// the list and every field written after registration, so a Call is never
// read after its thread removed it.  The watch only reads: no decision of
// any call depends on it, and with the limit 0 nothing is registered.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace papshim {

class StallWatch {
 public:
  struct Call {
    double arrival = 0;             // this rank's arrival, common time base (seconds)
    std::uint64_t seq = 0;          // the call's number on its communicator
    const char* collective = "";    // "allreduce", ...
    int comm_size = 0, rank = 0;    // the communicator's size, this rank in it
    const void* site = nullptr;     // described by the describe function (configure)
    // Guarded by the watch's mutex:
    const std::vector<double>* predicted = nullptr;  // the round's arrivals (comm ranks), null: none
    bool reported = false;
  };
  using Describe = std::string (*)(const void* site);

  static StallWatch& instance();

  // `seconds` 0: off.  `clock_offset`: subtracted from the local clock to
  // get the common time base.  Before the helper thread starts.
  void configure(double seconds, double clock_offset, int world_rank, Describe describe);
  double limit() const { return seconds_; }

  void enter(Call* c);
  void set_round(Call* c, const std::vector<double>* arrivals);
  void leave(Call* c);
  // Helper thread: one notice per call waiting longer than the limit.
  void check();

  // The notice's text for call `c` at common time `now` (pure).
  static std::string notice(const Call& c, double now, int world_rank, const std::string& where);

 private:
  std::mutex mu_;
  std::vector<Call*> calls_;
  double seconds_ = 0;
  double clock_offset_ = 0;
  int world_rank_ = 0;
  Describe describe_ = nullptr;
};

}  // namespace papshim
