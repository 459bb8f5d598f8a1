// Cache: the public map of precomputed values, over an Abseil table that stays
// out of the public headers (Debian's Abseil has no stable ABI).
#include <absl/container/flat_hash_map.h>

#include "tessera/scheduler/options.hpp"

namespace tessera {

struct Cache::Map {
  absl::flat_hash_map<Key, Value> values;
};

Cache::Cache() = default;
Cache::Cache(const Cache& other) : map_(other.map_ ? std::make_unique<Map>(*other.map_) : nullptr) {}
Cache::Cache(Cache&& other) noexcept = default;
Cache& Cache::operator=(const Cache& other) {
  if (this != &other) map_ = other.map_ ? std::make_unique<Map>(*other.map_) : nullptr;
  return *this;
}
Cache& Cache::operator=(Cache&& other) noexcept = default;
Cache::~Cache() = default;

bool Cache::emplace(const Key& key, Value value) {
  if (!map_) map_ = std::make_unique<Map>();
  return map_->values.try_emplace(key, std::move(value)).second;
}

void Cache::insert_or_assign(const Key& key, Value value) {
  if (!map_) map_ = std::make_unique<Map>();
  map_->values.insert_or_assign(key, std::move(value));
}

bool Cache::erase(const Key& key) { return map_ && map_->values.erase(key) != 0; }

const Value* Cache::find(const Key& key) const {
  if (!map_) return nullptr;
  auto it = map_->values.find(key);
  return it == map_->values.end() ? nullptr : &it->second;
}

size_t Cache::size() const { return map_ ? map_->values.size() : 0; }

void Cache::for_each(const std::function<void(const Key&, const Value&)>& f) const {
  if (!map_) return;
  for (const auto& [key, value] : map_->values) f(key, value);
}

}  // namespace tessera
