#include "core/interrupt.hpp"

#include <unistd.h>

#include <csignal>

#include "core/mpi.hpp"

namespace gf {

namespace {
// The one piece of process-wide mutable state: a signal handler can only
// talk to the program through a flag like this.
volatile std::sig_atomic_t g_signals = 0;

// The first signal only raises the flag. The second ends the process at
// once, from inside the handler, so only async-signal-safe calls: write(2)
// and _exit(2) (no atexit handlers, no destructors, no stdio flush). Files
// being written then stay under their hidden temporary names.
extern "C" void on_signal(int) {
  const int n = g_signals + 1;
  g_signals = n;
  if (n > 1) {
    static const char msg[] =
        "gridforge: interrupted again: exiting at once; a file being written is left under "
        "its hidden temporary name\n";
    const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(kExitInterrupted);
  }
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A reader of stderr or stdout that goes away (`gridforge run ... 2>&1 |
  // head`) must not kill the run with SIGPIPE half-way through its files:
  // writes to it fail with EPIPE instead, which the logs ignore and --json
  // reports.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, nullptr);
}

bool interrupt_requested() { return g_signals > 0; }

bool stop_requested() {
  if (mpi::size() > 1) return mpi::max(g_signals > 0 ? 1.0 : 0.0) > 0;
  return interrupt_requested();
}

}  // namespace gf
