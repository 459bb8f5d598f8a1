// The collectives of one apply on engines that are MPI ranks.
//
// Collectives are MPI's nonblocking ones (MPI_Ibarrier, MPI_Iallreduce,
// MPI_Iallgather(v)) on a communicator of the apply's engines, polled rather than
// waited for, so that a rank waiting in one notices when another rank of the apply
// has left without reaching it. Leaving is announced: every rank, when its
// function returns or raises, sends each other rank a notice with the number of
// collective steps it posted. A rank waiting in step k that sees a notice of fewer
// than k steps raises BarrierError, as a local engine does.
//
// Each apply ends with every rank receiving every other rank's notice. Then all
// know whether every rank posted the same steps; when not, some steps are left
// pending on the communicator forever, so all of them drop it, the same way, and
// the next apply on these engines makes a new one (the old one, and the buffers
// of its pending steps, are kept alive, never reused).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "tessera/spmd/detail/backend.hpp"

namespace tessera::mpi::detail {

class MpiCommunicator final : public spmd::detail::Communicator {
 public:
  //! `group`: the engines' communicator (MPI_COMM_NULL for a single engine), in
  //! which this rank is `rank`; `peer`: a communicator of the whole world for the
  //! notices, sent with `tag` (one per apply); `ids`: the engines' ids in rank order.
  MpiCommunicator(MPI_Comm group, MPI_Comm peer, int tag, std::vector<int> ids, int rank);
  ~MpiCommunicator() override;

  int size() const override { return static_cast<int>(ids_.size()); }
  int engine_id(int rank) const override { return ids_[static_cast<size_t>(rank)]; }
  void barrier(int rank) override;
  std::vector<Value> allgather(int rank, Value value) override;
  bool allreduce(int rank, void* inout, spmd::detail::NumberKind kind, spmd::ReduceOp op) override;
  void leave(int rank, bool failed) override;
  //! After the function returned: receives every other rank's notice. True when
  //! the group communicator is still fit for the next apply.
  bool finish();

 private:
  // What a rank says when it leaves. A rank that left because a collective broke
  // passes on whom it blamed (`culprit`), so that every rank names the engine that
  // started the cascade, whichever notice reaches it first.
  struct Notice {
    int64_t steps = 0;
    int64_t failed = 0;
    int64_t culprit = -1;  // an engine id, or -1: this rank itself left first
    int64_t culprit_failed = 0;
    bool received = false;
  };
  void post_step();                           // counts a step; throws BarrierError once broken
  void wait(MPI_Request* requests, int n);    // polls; throws BarrierError when broken
  void throw_if_left_before(int64_t step);    // BarrierError when a rank left with fewer steps
  void drain();                               // receives the notices that have arrived
  // wait() for one step; when the apply breaks, the step stays pending for good,
  // and so do its `buffers`, which MPI may still read or write.
  void wait_keeping(MPI_Request& request, std::initializer_list<std::shared_ptr<void>> buffers);

  MPI_Comm group_;
  MPI_Comm peer_;
  int tag_;
  std::vector<int> ids_;
  int rank_;
  int64_t steps_ = 0;
  bool left_ = false;
  std::vector<Notice> notices_;
  int64_t my_notice_[4] = {0, 0, -1, 0};  // steps, failed, culprit, culprit_failed
  std::vector<MPI_Request> notice_sends_;
  std::vector<std::array<int64_t, 4>> incoming_;  // each other rank's notice, as it arrives
  std::vector<MPI_Request> receives_;
};

}  // namespace tessera::mpi::detail
