// tools/interrupt.hpp — SIGINT and SIGTERM cancel a command's run.
//
// While an Interrupts object lives, the first SIGINT or SIGTERM cancels its
// token (the scheduler then starts nothing new, lets running tasks finish and
// throws Cancelled, so the writers remove their temporaries); the handlers are
// then reset, so a second signal ends the process at once. The command exits
// with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
// reports a process killed by it.
//
// @code
//   Interrupts interrupts;
//   opts.cancel = interrupts.token();
//   try { run(opts); } catch (const Cancelled&) { if (interrupts.signal()) return interrupts.exit_status(); throw; }
// @endcode
#pragma once

#include "tessera/scheduler/options.hpp"

namespace tessera::tool {

class Interrupts {
 public:
  Interrupts();
  ~Interrupts();
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  //! The token a signal cancels.
  const CancellationToken& token() const { return token_; }
  //! The first signal received, or 0.
  int signal() const;
  //! 128 + signal().
  int exit_status() const { return 128 + signal(); }
  //! "SIGINT" or "SIGTERM".
  const char* signal_name() const;

 private:
  CancellationToken token_;
};

//! 128 + the signal the last Interrupts object received, or 0 when none came.
//! main returns it for any error a command ends in after a signal (a system
//! call the signal cut short fails with EINTR): an interrupt is 130 on every path.
int interrupted_exit_status();

}  // namespace tessera::tool
