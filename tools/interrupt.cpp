#include "interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace tessera::tool {
namespace {

// What the handler may touch: lock-free atomics only.
std::atomic<int> received{0};
std::atomic<const CancellationToken*> active{nullptr};
struct sigaction previous_int, previous_term;

void on_signal(int sig) {
  int none = 0;
  received.compare_exchange_strong(none, sig);
  if (const CancellationToken* t = active.load()) t->cancel();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGINT, &dfl, nullptr);  // a second signal ends the process
  sigaction(SIGTERM, &dfl, nullptr);
}

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

}  // namespace

Interrupts::Interrupts() {
  received.store(0);
  active.store(&token_);
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &previous_int);
  sigaction(SIGTERM, &sa, &previous_term);
}

Interrupts::~Interrupts() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
  active.store(nullptr);
}

int Interrupts::signal() const { return received.load(); }

int interrupted_exit_status() { return received.load() == 0 ? 0 : 128 + received.load(); }

const char* Interrupts::signal_name() const { return signal() == SIGTERM ? "SIGTERM" : "SIGINT"; }

}  // namespace tessera::tool
