// CompositeError: the errors of several engines, printed as ipyparallel prints them.
#include "tessera/spmd/error.hpp"

#include <typeinfo>

#include <absl/strings/str_cat.h>

#include "tessera/graph/value.hpp"

namespace tessera::spmd {
namespace {

// Replaces each error that is itself a CompositeError by the errors it holds, so
// nested broadcasts report one flat list (as ipyparallel's collect_exceptions does).
std::vector<RemoteError> flattened(std::vector<RemoteError> errors) {
  std::vector<RemoteError> out;
  out.reserve(errors.size());
  for (RemoteError& r : errors) {
    try {
      if (r.error) std::rethrow_exception(r.error);
    } catch (const CompositeError& nested) {
      out.insert(out.end(), nested.errors().begin(), nested.errors().end());
      continue;
    } catch (...) {
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string composite_message(const std::string& method, const std::vector<RemoteError>& errors) {
  std::string s = absl::StrCat("one or more exceptions raised in: ", method);
  for (size_t i = 0; i < errors.size() && i < CompositeError::tb_limit; ++i) {
    absl::StrAppend(&s, "\n", errors[i].str());
  }
  if (errors.size() > CompositeError::tb_limit) {
    absl::StrAppend(&s, "\n... ", errors.size() - CompositeError::tb_limit, " more exceptions ...");
  }
  return s;
}

}  // namespace

std::string RemoteError::str() const {
  return absl::StrCat("[", engine_id, ":", method, "] ", type, ": ", message);
}

RemoteError make_remote_error(int engine_id, std::string method, std::exception_ptr e) {
  RemoteError r{engine_id, std::move(method), "", "", e};
  try {
    std::rethrow_exception(e);
  } catch (const RemoteException& ex) {
    r.type = ex.type();
    r.message = ex.what();
  } catch (const std::exception& ex) {
    r.type = tessera::detail::type_name(typeid(ex));
    r.message = ex.what();
  } catch (...) {
    r.type = "unknown";
    r.message = "an exception not derived from std::exception";
  }
  return r;
}

CompositeError::CompositeError(std::string method, std::vector<RemoteError> errors)
    : CompositeError(std::move(method), flattened(std::move(errors)), 0) {}

CompositeError::CompositeError(std::string method, std::vector<RemoteError> errors, int)
    : Error(composite_message(method, errors)), method_(std::move(method)), errors_(std::move(errors)) {}

void CompositeError::raise_exception(size_t i) const {
  if (i >= errors_.size()) {
    throw Error(absl::StrCat("CompositeError::raise_exception: there is no exception with index ", i,
                             "; there are ", errors_.size()));
  }
  std::rethrow_exception(errors_[i].error);
}

}  // namespace tessera::spmd
