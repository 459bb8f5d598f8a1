// Point-to-point messages over MPI (world_communicator): the exchange every
// Communicator passes (tests/comm/point_to_point_checks.hpp), with whole
// messages and with messages split into pieces, as those past 2^31 bytes are;
// parts shared by sends to several ranks count once among the bytes in flight.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

#include "comm/point_to_point_checks.hpp"
#include "mpi/communicator_pieces.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/mpi/communicator.hpp"

using namespace tessera;

TEST_CASE("MPI: messages between each pair of ranks arrive in order, whole, beside the collectives") {
  const auto comm = mpi::world_communicator();
  testing::exchange_in_order(*comm, 50, {0, 1, 17, 4096, 1 << 20});
}

TEST_CASE("MPI: a message longer than a piece goes in pieces and arrives whole") {
  const auto comm = mpi::detail::world_communicator_in_pieces(7);
  testing::exchange_in_order(*comm, 50, {0, 6, 7, 8, 15, 100, 1001});
}

TEST_CASE("MPI: a message sent in parts arrives whole, in order with the others, also when its parts go in pieces") {
  testing::exchange_in_order(*mpi::world_communicator(), 50, {0, 1, 17, 4096, 1 << 20}, /*in_parts=*/true);
  testing::exchange_in_order(*mpi::detail::world_communicator_in_pieces(7), 50, {0, 6, 7, 8, 15, 100, 1001}, true);
}

TEST_CASE("MPI: try_receive_from leaves a message it does not take in MPI, first from its sender, and takes it later whole") {
  testing::receive_from_when_taken(*mpi::world_communicator(), size_t{1} << 20);
}

TEST_CASE("MPI: try_receive_from leaves a message in pieces it does not take, and takes it later whole") {
  testing::receive_from_when_taken(*mpi::detail::world_communicator_in_pieces(7), 100);
}

// A result for several ranks is serialized once and its parts go to each: the
// bytes its sends keep are that one copy, not one per rank. The receivers take
// the message only after rank 0 looked, so its sends are still in flight then
// (a message this large is not sent eagerly).
TEST_CASE("MPI: parts sent to several ranks count once in unfinished_send_bytes, until every rank took them") {
  const auto comm = mpi::world_communicator();
  constexpr size_t kBytes = size_t{4} << 20;
  if (comm->rank() == 0) {
    const SharedBytes part = SharedBytes::from(std::vector<std::byte>(kBytes, std::byte{7}));
    for (int q = 1; q < comm->size(); ++q) comm->send_parts(q, 1, {part});
    const size_t in_flight = comm->unfinished_send_bytes();
    CAPTURE(comm->size());
    CHECK(in_flight <= kBytes);
  }
  barrier(*comm);
  if (comm->rank() != 0) {
    std::optional<Message> m;
    while (!(m = comm->try_receive())) {
    }
    CHECK(m->bytes.size == kBytes);
    CHECK(m->bytes.data.get()[kBytes - 1] == std::byte{7});
  }
  barrier(*comm);
  if (comm->rank() == 0) {
    for (int i = 0; i < 10000 && comm->unfinished_send_bytes() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(comm->unfinished_send_bytes() == 0);
  }
}

TEST_CASE("MPI: send refuses a rank or a tag out of range") {
  const auto comm = mpi::world_communicator();
  const int n = comm->size();
  CHECK_THROWS_WITH_AS(comm->send(n, 0, {}),
                       ("send: expected a destination rank in [0, " + std::to_string(n) + "), found " +
                        std::to_string(n)).c_str(),
                       ValueError);
  CHECK_THROWS_WITH_AS(comm->send(0, 8192, {}), "send: expected a tag in [0, 8191], found 8192", ValueError);
  barrier(*comm);
  CHECK(!comm->try_receive().has_value());
}
