// Powers computed the same way on every rank.
//
// The learned cost factors (cost_learner.h) feed decisions every rank must
// take identically, and std::pow is not required to round alike on every
// CPU and math library: ranks on different machines of one job could learn
// factors a last bit apart and pick different schedules.  portable_pow uses
// only what IEEE 754 rounds exactly alike everywhere (+, -, *, / in a fixed
// order, and the exact frexp / ldexp), so its result depends on its
// arguments alone.  The project builds with -ffp-contract=off, so that no
// compiler fuses a multiply and an add differently on another target.
#pragma once

namespace papshim {

// x^y for finite x > 0 and |y ln x| below 700 (the learned factors: x in
// [0.05, 50], y in [0, 1]); relative error within 1e-14 of the exact power.
// x <= 0 or a non-finite argument gives NaN; y == 0 and x == 1 give 1 exactly.
double portable_pow(double x, double y);

}  // namespace papshim
