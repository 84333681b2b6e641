// Data layouts as strings ("NCHW", "NCHW16c", "OIHW16i16o"): one letter per axis, an uppercase
// letter a primal axis, a lowercase letter preceded by its factor a sub-axis of the primal axis
// with the same letter (NCHW16c: channel c = C * 16 + c16, the 16 channels of a block innermost).
// Used by relax.layout_transform (lib/op/layout.cc) and the alter-layout pass.
#ifndef RELAX_OP_LAYOUT_H_
#define RELAX_OP_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace relax {

struct LayoutAxis {
  char primal = 0;     // the uppercase letter this axis is (a part of)
  int64_t factor = 0;  // 0: the primal axis (its outer part when split); > 0: a sub-axis
};

struct Layout {
  std::vector<LayoutAxis> axes;
  /// Parses `s`; relax::Error naming `s` when malformed (a sub-axis without its primal axis, a
  /// letter twice, a factor < 1 or > 4096, a character other than a letter or digit).
  static Layout Parse(const std::string& s);
  std::string str() const;
  size_t ndim() const { return axes.size(); }
  /// The position of primal axis `p` (its outer part when split), or -1.
  int Find(char p) const;
  /// The factor of `p`'s sub-axis, 0 when `p` is not split.
  int64_t Factor(char p) const;
  /// The primal letters in order of appearance.
  std::string Primals() const;
};

/// "NCHW" with primal axis `axis` split by `factor` into an outer axis in place and a sub-axis
/// appended last ("NCHW", 'C', 16 -> "NCHW16c").
std::string SplitLayout(const std::string& primal, char axis, int64_t factor);

/// The bytes of a static tensor (`shape` in layout `src`, row-major, `elem_bytes` per element)
/// in layout `dst`, as relax.layout_transform computes it (a constant transformed at compile
/// time); `out_shape` receives the new shape. relax::Error when the layouts do not match the
/// shape or each other.
std::vector<uint8_t> TransformLayoutData(const std::vector<uint8_t>& data, size_t elem_bytes,
                                         const std::vector<int64_t>& shape, const Layout& src,
                                         const Layout& dst, std::vector<int64_t>* out_shape);

}  // namespace relax

#endif  // RELAX_OP_LAYOUT_H_
