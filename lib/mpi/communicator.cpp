#include "tessera/mpi/communicator.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <list>
#include <map>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include "comm/point_to_point.hpp"
#include "mpi/communicator_pieces.hpp"
#include "mpi/require.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::mpi {
namespace {

// Larger messages go in pieces of this size, whose counts fit MPI's int.
constexpr int64_t kPiece = int64_t{1} << 30;

// Point-to-point messages travel on a second duplicate of MPI_COMM_WORLD, so a
// probe for any tag never matches a piece of the collectives' traffic. A
// message of one part (send_parts) and at most one piece goes as one MPI
// message tagged 2 * tag; a larger one, or one of several parts, as a header
// tagged 2 * tag + 1 (its length, 8 bytes) followed by its pieces tagged
// kPieceTag, each at most one piece and inside one part (so that each goes
// from where its part is, without gathering), which the receiver takes right
// after the header (MPI keeps one sender's messages in order). 2 * kMaxTag + 1 < kPieceTag <=
// 32767, the least MPI_TAG_UB the standard allows.
constexpr int kPieceTag = 2 * (Communicator::kMaxTag + 1);
static_assert(kPieceTag <= 32767);

class MpiPointToPoint final : public Communicator {
 public:
  explicit MpiPointToPoint(int64_t piece) : piece_(piece) {
    detail::require_initialized("tessera::mpi::world_communicator");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_dup(MPI_COMM_WORLD, &p2p_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  // Sends still in flight hold buffers MPI reads: wait for them (a peer that
  // keeps receiving takes them) rather than free memory under MPI.
  ~MpiPointToPoint() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (auto& s : sends_) MPI_Waitall(static_cast<int>(s.requests.size()), s.requests.data(), MPI_STATUSES_IGNORE);
    MPI_Comm_free(&p2p_);
    MPI_Comm_free(&comm_);
  }
  MpiPointToPoint(const MpiPointToPoint&) = delete;
  MpiPointToPoint& operator=(const MpiPointToPoint&) = delete;

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

  void send(int dest, int tag, std::vector<std::byte> bytes) override {
    auto owned = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    const SharedBytes whole{std::shared_ptr<const std::byte>(owned, owned->data()), owned->size()};
    send_parts(dest, tag, {whole});
  }

  void send_parts(int dest, int tag, const std::vector<SharedBytes>& parts) override {
    tessera::detail::check_send(*this, dest, tag);
    Send& s = sends_.emplace_back();
    s.parts = parts;
    for (const SharedBytes& p : parts) {
      s.length += static_cast<int64_t>(p.size);
      if (in_flight_[{p.data.get(), p.size}]++ == 0) unsent_bytes_ += p.size;
    }
    if (parts.size() <= 1 && s.length <= piece_) {
      isend(s, parts.empty() ? nullptr : parts.front().data.get(), s.length, dest, 2 * tag);
      return;
    }
    isend(s, &s.length, sizeof s.length, dest, 2 * tag + 1);
    for (const SharedBytes& p : parts) {
      const auto size = static_cast<int64_t>(p.size);
      for (int64_t done = 0; done < size; done += piece_) {
        isend(s, p.data.get() + done, std::min(piece_, size - done), dest, kPieceTag);
      }
    }
  }

  // A large message whose header try_receive_from took and left (its pieces
  // still in MPI) is the next message from its sender: it comes first.
  std::optional<Message> try_receive() override {
    if (!heads_.empty()) return pieces(heads_.begin());
    int found = 0;
    MPI_Message handle;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, p2p_, &found, &handle, &status);
    if (!found) return std::nullopt;
    if (status.MPI_TAG % 2 == 0) return whole(handle, status);
    return pieces(heads_.emplace(status.MPI_SOURCE, header(handle, status)).first);
  }

  // The sender's next message is probed without being matched, and taken only
  // when `take` agrees (with one thread receiving, the first message from
  // `source` with the probed tag is the probed one). A large one's header is
  // taken to learn its length and kept in heads_ until its pieces are.
  std::optional<Message> try_receive_from(int source, FunctionRef<bool(int tag, size_t bytes)> take) override {
    auto head = heads_.find(source);
    if (head == heads_.end()) {
      int found = 0;
      MPI_Status status;
      MPI_Iprobe(source, MPI_ANY_TAG, p2p_, &found, &status);
      if (!found) return std::nullopt;
      if (status.MPI_TAG % 2 == 0) {
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        if (!take(status.MPI_TAG / 2, static_cast<size_t>(count))) return std::nullopt;
        MPI_Message handle;
        MPI_Mprobe(source, status.MPI_TAG, p2p_, &handle, &status);
        return whole(handle, status);
      }
      MPI_Message handle;
      MPI_Mprobe(source, status.MPI_TAG, p2p_, &handle, &status);
      head = heads_.emplace(source, header(handle, status)).first;
    }
    if (!take(head->second.tag, static_cast<size_t>(head->second.length))) return std::nullopt;
    return pieces(head);
  }

  // A finished send's buffer is freed here, not by MPI: a sweep over the sends
  // in flight.
  size_t unfinished_sends() override {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE);
      if (done) finished(*it);
      it = done ? sends_.erase(it) : std::next(it);
    }
    return sends_.size();
  }

  size_t unfinished_send_bytes() override {
    (void)unfinished_sends();
    return unsent_bytes_;
  }

 private:
  // One message in flight: its parts' owners (and its length, the header of a
  // large one) stay here until every request of it completes.
  struct Send {
    std::vector<SharedBytes> parts;
    int64_t length = 0;
    std::vector<MPI_Request> requests;
  };

  // The header of a large message: its tag and length, its pieces still to come.
  struct Head {
    int tag;
    int64_t length;
  };

  // A send completed: its parts no other send holds stop counting.
  void finished(const Send& s) {
    for (const SharedBytes& p : s.parts) {
      const auto it = in_flight_.find({p.data.get(), p.size});
      if (--it->second > 0) continue;
      unsent_bytes_ -= p.size;
      in_flight_.erase(it);
    }
  }

  Message whole(MPI_Message& handle, const MPI_Status& status) {
    Message m;
    m.source = status.MPI_SOURCE;
    m.tag = status.MPI_TAG / 2;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::byte* data = receive_buffer(m, static_cast<size_t>(count));
    MPI_Mrecv(data, count, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
    return m;
  }

  // Where a message of `size` bytes is received: a block as NDArrays get them
  // (not zeroed; a freed one's pages reused), so a result read from the message
  // views it. A fresh zeroed vector per message took a third of a 4-rank FFT's
  // page faults (bench/mpi).
  static std::byte* receive_buffer(Message& m, size_t size) {
    const array::Buffer block = array::Buffer::allocate(size);
    m.bytes = {block.shared(), size};
    return block.data();
  }

  Head header(MPI_Message& handle, const MPI_Status& status) {
    Head h{status.MPI_TAG / 2, 0};
    MPI_Mrecv(&h.length, sizeof h.length, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
    return h;
  }

  // The pieces of the large message whose header is `head`, which goes. A
  // piece is at most piece_ bytes, and shorter where a part of the sender's
  // message ends (send_parts).
  Message pieces(std::map<int, Head>::iterator head) {
    Message m;
    m.source = head->first;
    m.tag = head->second.tag;
    const int64_t length = head->second.length;
    heads_.erase(head);
    std::byte* data = receive_buffer(m, static_cast<size_t>(length));
    for (int64_t done = 0; done < length;) {
      MPI_Status status;
      MPI_Recv(data + done, static_cast<int>(std::min(piece_, length - done)), MPI_BYTE, m.source,
               kPieceTag, p2p_, &status);
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      if (count <= 0) {
        throw Error(absl::StrCat("a message from rank ", m.source, " is damaged: a piece of ", count,
                                 " bytes, with ", length - done, " of its ", length, " bytes still to come"));
      }
      done += count;
    }
    return m;
  }

  void isend(Send& s, const void* data, int64_t bytes, int dest, int tag) {
    MPI_Request r;
    MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag, p2p_, &r);
    s.requests.push_back(r);
  }

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
  MPI_Comm p2p_ = MPI_COMM_NULL;  // point-to-point messages only
  int64_t piece_;                 // the most bytes of one MPI message of send()
  std::list<Send> sends_;         // a list: a Send's address is in MPI's hands until it completes
  size_t unsent_bytes_ = 0;       // of sends_' buffers, each once
  // The parts in flight, by (first byte, size), with the sends that hold each:
  // a result sent to three ranks is one serialized copy, its parts shared.
  absl::flat_hash_map<std::pair<const std::byte*, size_t>, uint32_t> in_flight_;
  std::map<int, Head> heads_;     // by sender: a large message's header taken, its pieces not yet
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::shared_ptr<Communicator> world_communicator() { return std::make_shared<MpiPointToPoint>(kPiece); }

std::shared_ptr<Communicator> detail::world_communicator_in_pieces(int64_t piece_bytes) {
  return std::make_shared<MpiPointToPoint>(std::clamp<int64_t>(piece_bytes, 1, kPiece));
}

}  // namespace tessera::mpi
