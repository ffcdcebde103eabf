#include "core/interrupt.hpp"

#include <unistd.h>

#include <csignal>

namespace gf {

namespace {
// The one piece of process-wide mutable state: a signal handler can only
// talk to the program through a flag like this.
volatile std::sig_atomic_t g_signals = 0;

extern "C" void on_signal(int) {
  if (++g_signals > 1) _exit(kExitInterrupted);
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() { return g_signals > 0; }

}  // namespace gf
