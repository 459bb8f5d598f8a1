// The client side of an MPI cluster (rank 0): a ClusterState whose engines are
// ranks 1..N-1. Views post requests from any thread; one progress thread
// receives every answer and heartbeat, completes the jobs' slots, and declares a
// rank lost when it stays silent while it owes answers.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol.hpp"
#include "tessera/spmd/detail/backend.hpp"
#include "tessera/spmd/view.hpp"

namespace tessera::mpi::detail {

using spmd::detail::ApplyArg;
using spmd::detail::Job;

class Client final : public spmd::detail::ClusterState {
 public:
  using Clock = std::chrono::steady_clock;

  Client(MPI_Comm ctl, int engines, std::chrono::duration<double> lost_after);
  ~Client() override;

  bool by_name() const override { return true; }
  std::shared_ptr<const Job> apply(const char* method, const std::vector<int>& targets, Callable callable,
                                   const std::string* registered, std::vector<ApplyArg> args) override;
  std::shared_ptr<const Job> assign(const char* method, const std::vector<int>& targets, const std::string& name,
                                    std::vector<Value> parts) override;
  std::shared_ptr<const Job> assign_all(const std::vector<int>& targets, std::map<std::string, Value> ns) override;
  std::shared_ptr<const Job> pull(const char* method, const std::vector<int>& targets,
                                  const std::string& name) override;
  //! Stops the engines and the progress thread; MPI_Abort when a rank was lost.
  void stop() override;

 private:
  using Bytes = std::shared_ptr<const std::vector<std::byte>>;
  struct Pending {
    std::shared_ptr<Job> job;
    size_t slot;
    int64_t seq;
  };
  struct Rank {
    std::deque<Pending> pending;  // in the order the engine answers
    Clock::time_point last_heard;
  };
  struct Send {
    MPI_Request request;
    Bytes bytes;
  };

  // Posts `job`: message(slot, seq) gives the bytes for each slot (the same bytes
  // may serve every slot). Throws Error when stopped or a rank was lost.
  template <class Encode>
  std::shared_ptr<const Job> post(std::shared_ptr<Job> job, Encode message);
  void send_locked(int engine, Bytes bytes);
  void progress();
  void answer(const Message& m);
  void check_lost_locked(Clock::time_point now, std::vector<Pending>& failed, int& lost);
  void fail(std::vector<Pending> failed, int lost);

  MPI_Comm ctl_;
  Clock::duration lost_after_;
  std::mutex mu_;  // guards everything below but the thread
  int64_t seq_ = 0;
  std::vector<Rank> ranks_;
  std::vector<Send> sends_;
  bool stopped_ = false;
  int lost_engine_ = -1;
  std::atomic<bool> quit_{false};
  std::thread progress_;
};

}  // namespace tessera::mpi::detail
