// Ctrl-C and SIGTERM: the first asks the running time loop to stop after the
// step in progress (it writes a final output and exits 130); a second one
// exits at once.
#pragma once
#include "core/error.hpp"

namespace gf {

// SIGINT and SIGTERM as above; SIGPIPE ignored (a closed stderr or stdout
// pipe does not end the run).
void install_interrupt_handlers();
// This process has been asked to stop.
bool interrupt_requested();
// Some rank has been asked to stop: over several MPI ranks a collective call
// (every rank must call it at the same point of the run, and every rank gets
// the same answer, so that all stop after the same step); on one rank
// interrupt_requested().
bool stop_requested();

class InterruptedError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitInterrupted; }
};

}  // namespace gf
