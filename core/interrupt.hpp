// Ctrl-C and SIGTERM: the first asks the running time loop to stop after the
// step in progress (it writes a final output and exits 130); a second one
// exits at once.
#pragma once
#include "core/error.hpp"

namespace gf {

void install_interrupt_handlers();
bool interrupt_requested();

class InterruptedError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return kExitInterrupted; }
};

}  // namespace gf
