#include <charconv>

#include "command.hpp"

namespace tessera::tool {

bool Args::flag(std::string_view name) {
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (*it == name) {
      args_.erase(it);
      return true;
    }
  }
  return false;
}

std::optional<std::string> Args::option(std::string_view name) {
  const std::string with_equals = std::string(name) + "=";
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (it->rfind(with_equals, 0) == 0) {
      std::string value = it->substr(with_equals.size());
      args_.erase(it);
      return value;
    }
    if (*it == name) {
      if (it + 1 == args_.end()) throw UsageError(std::string(name) + " needs a value");
      std::string value = *(it + 1);
      args_.erase(it, it + 2);
      return value;
    }
  }
  return std::nullopt;
}

long Args::int_option(std::string_view name, long fallback, long min, long max) {
  const auto text = option(name);
  if (!text) return fallback;
  long v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < min || v > max) {
    throw UsageError(std::string(name) + " expects an integer from " + std::to_string(min) + " to " +
                     std::to_string(max) + ", got '" + *text + "'");
  }
  return v;
}

std::string Args::positional(std::string_view what) {
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (it->empty() || (*it)[0] != '-' || *it == "-") {
      std::string v = *it;
      args_.erase(it);
      return v;
    }
  }
  throw UsageError("missing " + std::string(what));
}

void Args::done() const {
  if (!args_.empty()) throw UsageError("unexpected argument '" + args_.front() + "'");
}

}  // namespace tessera::tool
