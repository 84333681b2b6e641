// NumPy .npy reader/writer with strict, file-naming error reporting.
#include "relax/runtime/npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "relax/support/error.h"
#include "relax/support/file.h"
#include "relax/support/output_file.h"

namespace relax::runtime {
namespace {

constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

// Maps the type part of a descr ("f4", "b1", ...) to a dtype; false if unsupported.
bool DescrToDType(const std::string& t, DLDataType* out) {
  static const struct {
    const char* name;
    const char* dtype;
  } kTable[] = {{"f4", "float32"}, {"f8", "float64"}, {"f2", "float16"}, {"i1", "int8"},
                {"i2", "int16"},   {"i4", "int32"},   {"i8", "int64"},   {"u1", "uint8"},
                {"u2", "uint16"},  {"u4", "uint32"},  {"u8", "uint64"},  {"b1", "bool"}};
  for (const auto& e : kTable) {
    if (t == e.name) {
      *out = ParseDType(e.dtype);
      return true;
    }
  }
  return false;
}

std::string DTypeToDescr(DLDataType dt) {
  // Storage-only types have no NumPy dtype: their bit patterns are saved (BitPatternDType).
  std::string s = DTypeToString(BitPatternDType(dt));
  if (s == "float32") return "<f4";
  if (s == "float64") return "<f8";
  if (s == "float16") return "<f2";
  if (s == "int8") return "|i1";
  if (s == "int16") return "<i2";
  if (s == "int32") return "<i4";
  if (s == "int64") return "<i8";
  if (s == "uint8") return "|u1";
  if (s == "uint16") return "<u2";
  if (s == "uint32") return "<u4";
  if (s == "uint64") return "<u8";
  if (s == "bool") return "|b1";
  return "";
}

// A tiny parser for the Python dict literal of an npy header.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  void Parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    Expect('{');
    while (true) {
      Skip();
      if (Peek() == '}') {
        ++i_;
        break;
      }
      std::string key = ParseString();
      Expect(':');
      Skip();
      if (key == "descr") {
        if (Peek() != '\'' && Peek() != '"')
          Fail("'descr' must be a string (structured dtypes are not supported)");
        *descr = ParseString();
        have_descr = true;
      } else if (key == "fortran_order") {
        *fortran = ParseBool();
        have_fortran = true;
      } else if (key == "shape") {
        *shape = ParseTuple();
        have_shape = true;
      } else {
        Fail("unexpected key '" + key + "'");
      }
      Skip();
      if (Peek() == ',') {
        ++i_;
        continue;
      }
      Expect('}');
      break;
    }
    if (!have_descr || !have_fortran || !have_shape)
      Fail("header lacks one of 'descr', 'fortran_order', 'shape'");
  }

 private:
  [[noreturn]] void Fail(const std::string& msg) const {
    RELAX_THROW("cannot parse .npy header of '" << path_ << "': " << msg);
  }
  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void Expect(char c) {
    Skip();
    if (Peek() != c) Fail(std::string("expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }
  std::string ParseString() {
    Skip();
    char q = Peek();
    if (q != '\'' && q != '"') Fail("expected a string at offset " + std::to_string(i_));
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) out.push_back(s_[i_++]);
    if (i_ >= s_.size()) Fail("unterminated string");
    ++i_;
    return out;
  }
  bool ParseBool() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    Fail("'fortran_order' must be True or False");
  }
  std::vector<int64_t> ParseTuple() {
    Expect('(');
    std::vector<int64_t> dims;
    while (true) {
      Skip();
      if (Peek() == ')') {
        ++i_;
        return dims;
      }
      if (Peek() < '0' || Peek() > '9') Fail("bad shape entry at offset " + std::to_string(i_));
      int64_t v = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, Peek() - '0', &v))
          Fail("shape dim overflows int64");
        ++i_;
      }
      if (Peek() == 'L') ++i_;
      dims.push_back(v);
      Skip();
      if (Peek() == ',') {
        ++i_;
      } else if (Peek() != ')') {
        Fail("expected ',' or ')' in shape");
      }
    }
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

}  // namespace

NDArray LoadNpy(const std::string& path) {
  CheckRegularFile(path, ".npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) RELAX_THROW("cannot open .npy file '" << path << "': " << std::strerror(errno));
  char pre[8];
  in.read(pre, 8);
  if (in.gcount() < 6 || std::memcmp(pre, kNpyMagic, 6) != 0)
    RELAX_THROW("'" << path << "' is not a .npy file (bad magic)");
  if (in.gcount() < 8) RELAX_THROW("'" << path << "' is truncated: incomplete .npy header");
  int major = static_cast<unsigned char>(pre[6]);
  uint64_t header_len;
  if (major == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    if (in.gcount() != 2) RELAX_THROW("'" << path << "' is truncated: incomplete .npy header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    if (in.gcount() != 4) RELAX_THROW("'" << path << "' is truncated: incomplete .npy header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint64_t>(b[3]) << 24);
  } else {
    RELAX_THROW("'" << path << "': unsupported .npy format version " << major << "."
                    << static_cast<int>(static_cast<unsigned char>(pre[7])));
  }
  if (header_len > (1u << 24)) RELAX_THROW("'" << path << "': .npy header too large");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (static_cast<uint64_t>(in.gcount()) != header_len)
    RELAX_THROW("'" << path << "' is truncated: .npy header is " << header_len
                    << " bytes but the file ends after " << in.gcount());
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  HeaderParser(header, path).Parse(&descr, &fortran, &shape);
  if (fortran)
    RELAX_THROW("'" << path << "': fortran_order=True is not supported (save a C-order array)");
  if (descr.size() < 2) RELAX_THROW("'" << path << "': bad dtype descr '" << descr << "'");
  char order = descr[0];
  std::string type = descr.substr(1);
  DLDataType dt;
  if (!DescrToDType(type, &dt))
    RELAX_THROW("'" << path << "': unsupported dtype '" << descr
                    << "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)");
  if (order == '>' && DTypeBytes(dt) > 1)
    RELAX_THROW("'" << path << "': big-endian dtype '" << descr << "' is not supported");
  if (order != '<' && order != '|' && order != '=' && !(order == '>' && DTypeBytes(dt) == 1))
    RELAX_THROW("'" << path << "': bad byte order in dtype '" << descr << "'");
  NDArray arr;
  try {
    arr = NDArray::Empty(shape, dt);
  } catch (const Error& e) {
    RELAX_THROW("'" << path << "': " << e.what());
  }
  size_t nbytes = arr.nbytes();
  in.read(static_cast<char*>(arr.data()), static_cast<std::streamsize>(nbytes));
  if (static_cast<size_t>(in.gcount()) != nbytes)
    RELAX_THROW("'" << path << "' is truncated: expected " << nbytes << " data bytes for shape "
                    << ShapeToString(shape) << " " << DTypeToString(dt) << ", got " << in.gcount());
  return arr;
}

void SaveNpy(const std::string& path, const NDArray& array) {
  if (!array.defined()) RELAX_THROW("cannot save '" << path << "': undefined tensor");
  if (array.device().device_type != kDLCPU)
    RELAX_THROW("cannot save '" << path << "': only cpu tensors can be saved");
  std::string descr = DTypeToDescr(array.dtype());
  if (descr.empty())
    RELAX_THROW("cannot save '" << path << "': dtype " << DTypeToString(array.dtype())
                                << " has no .npy equivalent");
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape().size(); ++i) {
    h << array.shape()[i];
    if (array.shape().size() == 1 || i + 1 < array.shape().size()) h << ",";
    if (i + 1 < array.shape().size()) h << " ";
  }
  h << "), }";
  std::string header = h.str();
  // Pad with spaces so magic + version + len + header (ending in '\n') is a multiple of 64.
  bool v2 = header.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kNpyMagic, 6);
  out.push_back(v2 ? 2 : 1);
  out.push_back(0);
  uint64_t hl = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out.push_back(static_cast<char>((hl >> (8 * i)) & 0xff));
  out += header;
  // A new temporary renamed over `path`: whatever is there (a symlink included) is replaced,
  // never written through, and readers never see a partial file.
  OutputFile f(path, ".npy file");
  f.Write(out);
  f.Write(array.data(), static_cast<size_t>(array.nbytes()));
  f.Commit();
}

}  // namespace relax::runtime
