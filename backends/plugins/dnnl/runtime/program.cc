// Parser of the dnnl plugin's region payload (format: program.h). Every malformed record is an
// error naming its line; nothing here throws.
#include "program.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace relax::backends::plugins::dnnl_rt {

namespace {

constexpr int kMaxValues = 1 << 20;

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *v = x;
  return true;
}

bool ParseDouble(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(s.c_str(), &end);
  return errno == 0 && *end == '\0';
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

class Parser {
 public:
  explicit Parser(Program* p) : p_(p) {}

  bool Line(int line_no, const std::string& line, std::string* error) {
    std::istringstream in(line);
    std::vector<std::string> tok;
    for (std::string t; in >> t;) tok.push_back(t);
    if (tok.empty()) return true;
    auto fail = [&](const std::string& msg) {
      *error = "line " + std::to_string(line_no) + ": " + msg;
      return false;
    };
    if (!header_seen_) {
      if (tok.size() != 2 || tok[0] != "relax-dnnl") return fail("expected 'relax-dnnl 1'");
      if (tok[1] != "1") return fail("unsupported payload version " + tok[1]);
      header_seen_ = true;
      return true;
    }
    if (tok[0] == "v") return Value(tok, fail);
    if (tok[0] == "conv2d" || tok[0] == "matmul") return StepLine(tok, fail);
    return fail("unknown record '" + tok[0] + "'");
  }

  bool Finish(std::string* error) {
    if (!header_seen_) {
      *error = "empty payload";
      return false;
    }
    for (const Step& s : p_->steps)
      for (int id : {s.src, s.wei, s.dst})
        if (!Known(id)) {
          *error = "a step uses value " + std::to_string(id) + ", which has no 'v' record";
          return false;
        }
    for (const Step& s : p_->steps)
      for (const PostOp& po : s.posts)
        for (int id : po.ids)
          if (!Known(id)) {
            *error = "a post-op uses value " + std::to_string(id) + ", which has no 'v' record";
            return false;
          }
    return true;
  }

 private:
  bool Known(int id) const {
    return id >= 0 && id < static_cast<int>(p_->values.size()) && p_->values[id].kind != 0;
  }

  template <typename Fail>
  bool Id(const std::string& s, int* id, Fail& fail) {
    int64_t v = 0;
    if (!ParseInt(s, &v) || v < 0 || v >= kMaxValues) return fail("bad value id '" + s + "'");
    *id = static_cast<int>(v);
    return true;
  }

  template <typename Fail>
  bool Value(const std::vector<std::string>& tok, Fail& fail) {
    int id = 0;
    if (tok.size() < 3 || !Id(tok[1], &id, fail)) return fail("bad value record");
    if (static_cast<int>(p_->values.size()) <= id) p_->values.resize(id + 1);
    ValueInfo& v = p_->values[id];
    if (v.kind != 0) return fail("value " + tok[1] + " declared twice");
    int64_t k = 0;
    if (tok[2] == "t" && tok.size() == 3) {
      v.kind = 't';
      return true;
    }
    if (tok.size() < 4 || !ParseInt(tok[3], &k) || k < 0 || k >= kMaxValues)
      return fail("bad value record");
    v.index = static_cast<int>(k);
    if (tok[2] == "p" && tok.size() == 5 && (tok[4] == "c" || tok[4] == "d")) {
      v.kind = 'p';
      v.constant = tok[4] == "c";
      if (v.index + 1 > p_->num_params) p_->num_params = v.index + 1;
      return true;
    }
    if (tok[2] == "o" && tok.size() == 4) {
      v.kind = 'o';
      if (v.index + 1 > p_->num_outputs) p_->num_outputs = v.index + 1;
      return true;
    }
    return fail("bad value record");
  }

  template <typename Fail>
  bool StepLine(const std::vector<std::string>& tok, Fail& fail) {
    Step s;
    size_t first_post = 0;
    if (tok[0] == "conv2d") {
      s.kind = Step::kConv2d;
      if (tok.size() < 13) return fail("conv2d needs 12 operands");
      int64_t n[8];
      for (int i = 0; i < 8; ++i)
        if (!ParseInt(tok[4 + i], &n[i])) return fail("bad conv2d operand '" + tok[4 + i] + "'");
      int64_t g = 0;
      if (!ParseInt(tok[12], &g) || g < 1) return fail("bad conv2d groups '" + tok[12] + "'");
      s.stride[0] = n[0], s.stride[1] = n[1];
      for (int i = 0; i < 4; ++i) s.pad[i] = n[2 + i];
      s.dilation[0] = n[6], s.dilation[1] = n[7];
      s.groups = g;
      for (int i = 0; i < 2; ++i)
        if (s.stride[i] < 1 || s.dilation[i] < 1)
          return fail("conv2d strides/dilations must be >= 1");
      for (int i = 0; i < 4; ++i)
        if (s.pad[i] < 0) return fail("conv2d pads must be >= 0");
      first_post = 13;
    } else {
      s.kind = Step::kMatmul;
      if (tok.size() < 5) return fail("matmul needs 4 operands");
      if (tok[4] != "0" && tok[4] != "1") return fail("bad matmul transpose flag");
      s.trans_b = tok[4] == "1";
      first_post = 5;
    }
    if (!Id(tok[1], &s.src, fail) || !Id(tok[2], &s.wei, fail) || !Id(tok[3], &s.dst, fail))
      return false;
    for (size_t i = first_post; i < tok.size(); ++i) {
      std::vector<std::string> f = Split(tok[i], ':');
      PostOp po;
      auto ids = [&](size_t count) {
        if (f.size() < count + 1) return false;
        for (size_t k = 1; k <= count; ++k) {
          int id = 0;
          if (!Id(f[k], &id, fail)) return false;
          po.ids.push_back(id);
        }
        return true;
      };
      auto floats = [&](size_t at, float* a, float* b) {
        double x = 0, y = 0;
        if (f.size() != at + 2 || !ParseDouble(f[at], &x) || !ParseDouble(f[at + 1], &y))
          return false;
        *a = static_cast<float>(x), *b = static_cast<float>(y);
        return true;
      };
      bool ok = true;
      if (f[0] == "bias") {
        po.kind = PostOp::kBias, ok = f.size() == 2 && ids(1);
      } else if (f[0] == "add") {
        po.kind = PostOp::kAdd, ok = f.size() == 2 && ids(1);
      } else if (f[0] == "bn") {
        po.kind = PostOp::kBatchNorm;
        ok = f.size() == 6 && ids(4) && ParseDouble(f[5], &po.eps) && po.eps >= 0;
      } else if (f[0] == "relu" && f.size() == 1) {
        po.kind = PostOp::kRelu;
      } else if (f[0] == "sigmoid" && f.size() == 1) {
        po.kind = PostOp::kSigmoid;
      } else if (f[0] == "hardswish" && f.size() == 1) {
        po.kind = PostOp::kHardSwish;
      } else if (f[0] == "gelu_erf" && f.size() == 1) {
        po.kind = PostOp::kGeluErf;
      } else if (f[0] == "gelu_tanh" && f.size() == 1) {
        po.kind = PostOp::kGeluTanh;
      } else if (f[0] == "clip") {
        po.kind = PostOp::kClip, ok = floats(1, &po.a, &po.b);
      } else if (f[0] == "hardsigmoid") {
        po.kind = PostOp::kHardSigmoid, ok = floats(1, &po.a, &po.b);
      } else {
        ok = false;
      }
      if (!ok) return fail("bad post-op '" + tok[i] + "'");
      s.posts.push_back(po);
    }
    p_->steps.push_back(std::move(s));
    return true;
  }

  Program* p_;
  bool header_seen_ = false;
};

}  // namespace

bool ParseProgram(const std::string& text, Program* out, std::string* error) {
  *out = Program();
  Parser parser(out);
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);)
    if (!parser.Line(++line_no, line, error)) return false;
  return parser.Finish(error);
}

}  // namespace relax::backends::plugins::dnnl_rt
