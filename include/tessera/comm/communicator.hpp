// tessera/comm/communicator.hpp — what work spread over several processes needs
// from the transport between them, without naming the transport.
//
// libtessera links no MPI. Code that runs one part of a job on each of several
// ranks (the rechunk across processes, rechunk.hpp's RechunkStoreOptions::
// communicator) talks to the other ranks through this interface: its rank and
// the number of ranks, an exchange of byte buffers between every pair of ranks
// (MPI_Alltoallv's shape: each rank knows what it sends to and receives from
// each other rank), and an all-gather of one integer per rank, from which a
// barrier and an agreement on errors follow. Beside the collectives, tagged
// point-to-point messages (`send`, `try_receive`, `try_receive_from`,
// `unfinished_sends`) let a rank's loop move results while its scheduler runs
// (tessera::get with GetOptions::communicator): a send returns at once, a
// receive never blocks, the messages from one rank to another arrive in the
// order sent, and a rank short of memory may leave a sender's next message in
// the transport until it can hold it (try_receive_from). libtessera-mpi implements it over
// MPI (`tessera::mpi::world_communicator()`, tessera/mpi/communicator.hpp);
// `thread_communicators(n)` gives n ranks that are threads of this process, for
// tests (and sanitizers) of code written against it.
//
// @code
//   std::vector<std::shared_ptr<tessera::Communicator>> ranks = tessera::thread_communicators(2);
//   // on the thread of rank r: every rank calls each collective, in the same order
//   tessera::agree_on_errors(*ranks[r], [&] { work(r); });  // throws on every rank if one failed
// @endcode
//
// Thread-safety: a Communicator is one rank's endpoint; its collectives and its
// point-to-point calls are made by one thread at a time, and every rank calls
// the same collectives in the same order (as MPI requires).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/graph/function_ref.hpp"
#include "tessera/graph/spill.hpp"
#include <span>

namespace tessera {

//! A rank of the job went silent while others still expected its messages
//! (killed, crashed): a run across ranks throws it on the ranks that survive
//! (GetOptions::lost_after_seconds), naming the rank.
class RankLostError : public Error {
 public:
  using Error::Error;
};

//! One point-to-point message as received: who sent it, its tag, its bytes.
struct Message {
  int source = -1;    //!< the sending rank
  int tag = 0;        //!< the tag it was sent with
  SharedBytes bytes;  //!< its content, shared: a value read from it may view it (an NDArray's block)
};

//! The seam between tessera and a message layer (MPI or a test's fake): this rank, the number of ranks, and the
//! collectives tessera needs.
class Communicator {
 public:
  virtual ~Communicator() = default;
  //! This rank, in [0, size()).
  virtual int rank() const = 0;
  //! The number of ranks.
  virtual int size() const = 0;
  //! Sends `send_counts[q]` bytes of `send`, from `send_offsets[q]`, to each rank
  //! q, and receives `recv_counts[s]` bytes from each rank s into `recv` at
  //! `recv_offsets[s]` (the counts a rank receives are the counts its peers send
  //! it). Counts and offsets may pass 2^31. Collective: every rank calls it.
  virtual void alltoallv(const std::byte* send, std::span<const int64_t> send_counts,
                         std::span<const int64_t> send_offsets, std::byte* recv,
                         std::span<const int64_t> recv_counts, std::span<const int64_t> recv_offsets) = 0;
  //! Every rank's `value`, by rank. Collective.
  virtual std::vector<int64_t> allgather(int64_t value) = 0;

  //! Tags of point-to-point messages are in [0, kMaxTag].
  static constexpr int kMaxTag = 8191;
  //! Sends `bytes` (any size, also past 2^31) to rank `dest` with `tag`, and
  //! returns at once: the endpoint keeps the bytes until the message is taken
  //! (unfinished_sends). Messages from one rank to another arrive in the order
  //! they were sent, and never meet the collectives' traffic. Throws ValueError
  //! for a `dest` outside [0, size()) or a `tag` outside [0, kMaxTag].
  //! @code
  //!   comm.send(1, /*tag=*/3, std::vector<std::byte>(16));
  //! @endcode
  virtual void send(int dest, int tag, std::vector<std::byte> bytes) = 0;
  //! Sends the bytes of `parts`, one after another, as one message: the
  //! receiver gets them as send() would have sent them gathered. The endpoint
  //! keeps each part's owner until the message is taken, and the MPI endpoint
  //! sends each part from where it is, so a large result goes without a copy
  //! (PartsWriter). The default gathers the parts and calls send(). Throws as
  //! send() does.
  //! @code
  //!   tessera::PartsWriter w;
  //!   tessera::to_wire(value, w);
  //!   comm.send_parts(1, /*tag=*/3, w.parts());
  //! @endcode
  virtual void send_parts(int dest, int tag, const std::vector<SharedBytes>& parts);
  //! The next message that arrived from any rank with any tag, or nothing when
  //! none has; never blocks.
  //! @code
  //!   while (auto m = comm.try_receive()) handle(m->source, m->tag, m->bytes);
  //! @endcode
  virtual std::optional<Message> try_receive() = 0;
  //! The next message that arrived from rank `source`, taken only when
  //! `take(tag, size in bytes)` returns true; otherwise it stays where it is,
  //! still the next from `source`, and nothing is returned. Never blocks. A
  //! rank short of memory leaves a large message in the transport this way
  //! while it goes on taking other ranks' messages (tessera::get across ranks
  //! defers the results it cannot hold yet).
  //! @code
  //!   auto m = comm.try_receive_from(1, [&](int tag, size_t bytes) { return bytes <= room; });
  //! @endcode
  virtual std::optional<Message> try_receive_from(int source, FunctionRef<bool(int tag, size_t bytes)> take) = 0;
  //! Advances this rank's sends and returns how many the transport has not yet
  //! taken (their buffers still held); never blocks. A rank that drops its
  //! endpoint first waits until this is 0, which needs its peers to receive.
  virtual size_t unfinished_sends() = 0;
  //! The bytes of this rank's sends that its endpoint still keeps: sent and
  //! not yet taken by the transport (thread ranks: by the receiving rank),
  //! parts that several sends share (send_parts over MPI) counted once;
  //! advances the sends as unfinished_sends() does, never blocks. A run across
  //! ranks counts them against the rank's memory_limit.
  virtual size_t unfinished_send_bytes() = 0;
};

//! Returns when every rank has called it (an allgather whose values are ignored).
void barrier(Communicator& comm);

//! Every rank's string, by rank (lengths by allgather, then one alltoallv). Collective.
std::vector<std::string> allgather_strings(Communicator& comm, const std::string& text);

//! Every rank's string, by rank, on rank `root` only (the others send theirs
//! and get an empty vector): what one rank collects, such as each rank's
//! trace, without every rank holding every string. Throws ValueError for a
//! `root` outside [0, size()). Collective.
//! @code
//!   auto traces = tessera::gather_strings(comm, my_trace, 0);   // on rank 0: size() strings
//! @endcode
std::vector<std::string> gather_strings(Communicator& comm, const std::string& text, int root);

//! Runs `step` on this rank, then agrees with the others: when `step` threw on
//! any rank, throws tessera::Error on every rank, naming each rank that failed
//! and its message ("rank 1 of 4: cannot open ..."); a rank never waits for a
//! peer that has given up. Collective.
void agree_on_errors(Communicator& comm, FunctionRef<void()> step);

//! `n` (>= 1) ranks that are threads of this process: rank r's endpoint is
//! element r, to be used by one thread. Throws ValueError for n < 1.
std::vector<std::shared_ptr<Communicator>> thread_communicators(int n);

}  // namespace tessera
