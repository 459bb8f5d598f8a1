// Private: the zero bytes that bring an offset to a multiple of an alignment,
// what SpillWriter::align writes and SpillReader::align skips (every writer
// and reader of a spilled value's form pads alike, or the form does not read).
#pragma once

#include <cstddef>

namespace tessera::base {

//! The bytes from `offset` to the next multiple of `alignment` (0 when it is one).
constexpr size_t padding_to(size_t alignment, size_t offset) { return (alignment - offset % alignment) % alignment; }

}  // namespace tessera::base
