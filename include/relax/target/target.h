// Target: what a compilation generates code for, parsed once from the `--target` string
// ("cpu", "cpu -mcpu=skylake") into a kind (the name of a registered Backend) and attributes.
#ifndef RELAX_TARGET_TARGET_H_
#define RELAX_TARGET_TARGET_H_

#include <map>
#include <string>

namespace relax {

/// A compilation target: backend kind plus `-key=value` attributes.
struct Target {
  std::string kind = "cpu";
  /// Attribute name (without the leading '-') -> value, e.g. {"mcpu", "skylake"}.
  std::map<std::string, std::string> attrs;

  /// The value of attribute `key`, or `fallback` when it is not set.
  std::string Attr(const std::string& key, const std::string& fallback = "") const;
  /// The canonical text form: kind, then the attributes sorted by name ("cpu -mcpu=skylake").
  std::string ToString() const;

  /// Parses "KIND [-key=value]...". The kind must name a registered Backend
  /// (relax/target/backend.h) and each key one of the attributes it declares; the backend then
  /// validates the values (e.g. that LLVM knows the CPU of -mcpu). Errors (relax::Error): empty
  /// string, unknown kind (the message lists the registered ones), unknown or malformed
  /// attribute, a repeated attribute, a value the backend rejects.
  static Target Parse(const std::string& s);
};

}  // namespace relax

#endif  // RELAX_TARGET_TARGET_H_
