#include "tessera/mpi/communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "mpi/require.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::mpi {
namespace {

// Larger messages go in pieces of this size, whose counts fit MPI's int.
constexpr int64_t kPiece = int64_t{1} << 30;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    detail::require_initialized("tessera::mpi::world_communicator");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void alltoallv(const std::byte* send, std::span<const int64_t> send_counts, std::span<const int64_t> send_offsets,
                 std::byte* recv, std::span<const int64_t> recv_counts,
                 std::span<const int64_t> recv_offsets) override {
    // Every rank must take the same path: agree whether any count or offset passes int.
    int large = fits(send_counts, send_offsets) && fits(recv_counts, recv_offsets) ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &large, 1, MPI_INT, MPI_MAX, comm_);
    if (large == 0) {
      std::vector<int> sc(send_counts.begin(), send_counts.end()), so(send_offsets.begin(), send_offsets.end());
      std::vector<int> rc(recv_counts.begin(), recv_counts.end()), ro(recv_offsets.begin(), recv_offsets.end());
      MPI_Alltoallv(send, sc.data(), so.data(), MPI_BYTE, recv, rc.data(), ro.data(), MPI_BYTE, comm_);
      return;
    }
    std::vector<MPI_Request> requests;
    for (int q = 0; q < size_; ++q) {
      post(requests, const_cast<std::byte*>(send) + send_offsets[static_cast<size_t>(q)],
           send_counts[static_cast<size_t>(q)], q, /*sending=*/true);
      post(requests, recv + recv_offsets[static_cast<size_t>(q)], recv_counts[static_cast<size_t>(q)], q,
           /*sending=*/false);
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  std::vector<int64_t> allgather(int64_t value) override {
    std::vector<int64_t> out(static_cast<size_t>(size_));
    MPI_Allgather(&value, 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, comm_);
    return out;
  }

 private:
  static bool fits(std::span<const int64_t> counts, std::span<const int64_t> offsets) {
    for (size_t q = 0; q < counts.size(); ++q) {
      if (counts[q] > INT_MAX || offsets[q] > INT_MAX) return false;
    }
    return true;
  }

  // Pieces of one message, tagged by their number so they pair up in order.
  void post(std::vector<MPI_Request>& requests, std::byte* data, int64_t bytes, int peer, bool sending) {
    for (int64_t done = 0, tag = 0; done < bytes; done += kPiece, ++tag) {
      const int n = static_cast<int>(std::min(kPiece, bytes - done));
      MPI_Request r;
      if (sending) {
        MPI_Isend(data + done, n, MPI_BYTE, peer, static_cast<int>(tag), comm_, &r);
      } else {
        MPI_Irecv(data + done, n, MPI_BYTE, peer, static_cast<int>(tag), comm_, &r);
      }
      requests.push_back(r);
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::shared_ptr<Communicator> world_communicator() { return std::make_shared<MpiCommunicator>(); }

}  // namespace tessera::mpi
