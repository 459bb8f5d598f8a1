// One exchange of point-to-point messages that every Communicator must pass,
// run by each rank on its own thread (thread_communicators) or process (MPI).
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tessera/comm/communicator.hpp"

namespace tessera::testing {

// Byte i of message `seq` from `source`: a pattern a swapped, cut or mixed-up
// message does not keep.
inline std::byte message_byte(int source, int seq, size_t i) {
  return static_cast<std::byte>((source * 131 + seq * 31 + static_cast<int>(i) * 7) & 0xff);
}

// Every rank sends `per_peer` messages to every rank (itself included), of the
// sizes in `sizes` in turn, tagged seq % (kMaxTag + 1), with an allgather in the
// middle that the messages must not disturb; then receives until it has all of
// them and checks that each sender's arrived in order, whole. Returns once the
// rank's own sends are taken.
inline void exchange_in_order(Communicator& comm, int per_peer, const std::vector<size_t>& sizes) {
  const int n = comm.size();
  auto message = [&](int source, int seq) {
    std::vector<std::byte> b(sizes[static_cast<size_t>(seq) % sizes.size()]);
    for (size_t i = 0; i < b.size(); ++i) b[i] = message_byte(source, seq, i);
    return b;
  };
  for (int seq = 0; seq < per_peer; ++seq) {
    for (int q = 0; q < n; ++q) comm.send(q, seq % (Communicator::kMaxTag + 1), message(comm.rank(), seq));
    if (seq == per_peer / 2) CHECK(comm.allgather(comm.rank() + 1)[static_cast<size_t>(n - 1)] == n);
  }
  std::vector<int> next(static_cast<size_t>(n), 0);
  int missing = n * per_peer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (missing > 0 && std::chrono::steady_clock::now() < deadline) {
    std::optional<Message> m = comm.try_receive();
    if (!m) {
      comm.unfinished_sends();  // progress, so that peers' receives of large messages complete
      std::this_thread::yield();
      continue;
    }
    REQUIRE(m->source >= 0);
    REQUIRE(m->source < n);
    int& seq = next[static_cast<size_t>(m->source)];
    CHECK(m->tag == seq % (Communicator::kMaxTag + 1));
    CHECK((m->bytes == message(m->source, seq)));
    ++seq;
    --missing;
  }
  CHECK(missing == 0);
  while (comm.unfinished_sends() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  CHECK(comm.unfinished_sends() == 0);
  CHECK(!comm.try_receive().has_value());
  barrier(comm);  // nobody sends again before every rank has checked that nothing is left
}

}  // namespace tessera::testing
