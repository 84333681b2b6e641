// Signal-processing builtins: discrete Fourier transform, short-time Fourier transform and the
// Hann, Hamming and Blackman windows, the MelWeightMatrix filter bank. Their output shapes depend
// on tensor data (a window's size, an STFT's frame step and length, a DFT's run-time axis or
// length), so each allocates its result and the compiler binds its dims with one match_cast
// (docs/design.md, "VM: functions, control flow, data-dependent shapes"). Sums run in double
// precision. Semantics: ONNX operator spec, sections DFT (opset 17 and 20), STFT (opset 17),
// HannWindow, HammingWindow and BlackmanWindow (opset 17). Tensors of complex values carry a last
// dim of 2 (real, imaginary); real signals a last dim of 1.
#include <cmath>
#include <numbers>

#include "builtin_args.h"

namespace relax::runtime::builtin_args {
namespace {

// The single element of an integer tensor, or `def` when the argument is not a tensor.
int64_t ScalarInt(const Args& a, size_t i, int64_t def, const std::string& what) {
  const NDArray* t = std::get_if<NDArray>(&a[i]);
  if (!t || !t->defined()) {
    if (const int64_t* v = std::get_if<int64_t>(&a[i])) return *v;
    return def;
  }
  if (t->numel() != 1) RELAX_THROW(what << " must have exactly one element");
  return IntElem(*t, 0, what);
}

std::vector<double> ToDoubles(const NDArray& t, const std::string& what) {
  std::vector<double> v(t.numel());
  DispatchNumeric(t.dtype(), what, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<const T*>(t.data())[i];
    } else {
      RELAX_THROW(what << " must be a float tensor, got " << DTypeToString(t.dtype()));
    }
  });
  return v;
}

NDArray FromDoubles(const std::vector<double>& v, std::vector<int64_t> shape, DLDataType dt,
                    const std::string& what) {
  NDArray out = NDArray::Empty(std::move(shape), dt);
  DispatchNumeric(dt, what, [&](auto z) {
    using T = decltype(z);
    for (size_t i = 0; i < v.size(); ++i) static_cast<T*>(out.data())[i] = static_cast<T>(v[i]);
  });
  return out;
}

// The twiddle factors cos and sin of sign * 2 pi j / len, j in [0, len).
struct Twiddles {
  std::vector<double> c, s;
  Twiddles(int64_t len, double sign) : c(len), s(len) {
    for (int64_t j = 0; j < len; ++j) {
      double ang = sign * 2 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(len);
      c[j] = std::cos(ang);
      s[j] = std::sin(ang);
    }
  }
};

// Discrete Fourier transform of `len` complex samples (re/im at stride `stride`, zero past
// `avail`) into `bins` complex outputs at stride `out_stride`; `scale` multiplies every output.
void Dft(const double* re, const double* im, int64_t stride, int64_t avail, int64_t len,
         int64_t bins, const Twiddles& tw, double scale, double* out_re, double* out_im,
         int64_t out_stride) {
  for (int64_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    for (int64_t t = 0; t < std::min(avail, len); ++t) {
      int64_t j = (k * t) % len;
      double xr = re[t * stride], xi = im ? im[t * stride] : 0;
      sr += xr * tw.c[j] - xi * tw.s[j];
      si += xr * tw.s[j] + xi * tw.c[j];
    }
    out_re[k * out_stride] = sr * scale;
    out_im[k * out_stride] = si * scale;
  }
}

// vm.builtin.dft(x, dft_length (tensor or int; <= 0: the axis length), axis (tensor or int),
// int inverse, int onesided, string what) -> x's dtype, shape of x with the axis dim the
// transform length (onesided: length / 2 + 1) and a last dim of 2.
Value DftBuiltin(const Args& a) {
  const char* fn = "vm.builtin.dft";
  CheckArgc(fn, a, 6);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const std::string& what = AsStr(fn, a, 5);
  bool inverse = AsInt(fn, a, 3) != 0, onesided = AsInt(fn, a, 4) != 0;
  const auto& s = x.shape();
  int64_t r = x.ndim();
  if (r < 2 || (s.back() != 1 && s.back() != 2))
    RELAX_THROW(what << "input must have rank >= 2 and a last dim of 1 (real) or 2 (complex), got "
                     << ShapeToString(s));
  int64_t axis = ScalarInt(a, 2, 1, what + "axis");
  if (axis < -r || axis >= r - 1 || axis == -1)
    RELAX_THROW(what << "axis " << axis << " out of range for rank " << r
                     << " (the last dim holds the complex parts)");
  if (axis < 0) axis += r;
  int64_t n = s[axis];
  int64_t len = ScalarInt(a, 1, 0, what + "dft_length");
  if (len < 0) RELAX_THROW(what << "dft_length " << len << " must be positive");
  if (len == 0) len = n;
  if (len == 0) RELAX_THROW(what << "the transform length is 0");
  if (onesided && inverse) RELAX_THROW(what << "onesided inverse DFT is not supported");
  if (onesided && s.back() != 1) RELAX_THROW(what << "onesided DFT needs a real input");
  int64_t bins = onesided ? len / 2 + 1 : len, c = s.back();
  int64_t outer = Extent(s, 0, axis), inner = Extent(s, axis + 1, r - 1);
  std::vector<double> xv = ToDoubles(x, what + "input");
  std::vector<double> yv(outer * bins * inner * 2);
  const Twiddles tw(len, inverse ? 1.0 : -1.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const double* base = xv.data() + (o * n * inner + i) * c;
      double* ob = yv.data() + (o * bins * inner + i) * 2;
      Dft(base, c == 2 ? base + 1 : nullptr, inner * c, n, len, bins, tw,
          inverse ? 1.0 / static_cast<double>(len) : 1.0, ob, ob + 1, inner * 2);
    }
  std::vector<int64_t> os = s;
  os[axis] = bins;
  os.back() = 2;
  return FromDoubles(yv, os, x.dtype(), what);
}

// vm.builtin.stft(signal (B, L, 1|2), frame_step, window (tensor, or an int: none),
// frame_length (tensor, or an int: none, then the window's length), int onesided, string what) ->
// (B, frames, bins, 2) with frames = (L - frame_length) / frame_step + 1 and bins = frame_length
// (onesided: frame_length / 2 + 1); frame f is the DFT of signal[f * step + t] * window[t].
Value Stft(const Args& a) {
  const char* fn = "vm.builtin.stft";
  CheckArgc(fn, a, 6);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const std::string& what = AsStr(fn, a, 5);
  bool onesided = AsInt(fn, a, 4) != 0;
  const auto& s = x.shape();
  if (x.ndim() != 3 || (s[2] != 1 && s[2] != 2))
    RELAX_THROW(what << "signal must be (batch, length, 1 or 2), got " << ShapeToString(s));
  int64_t step = ScalarInt(a, 1, 0, what + "frame_step");
  if (step <= 0) RELAX_THROW(what << "frame_step " << step << " must be positive");
  const NDArray* wt = std::get_if<NDArray>(&a[2]);
  std::vector<double> w;
  if (wt && wt->defined()) {
    if (wt->ndim() != 1) RELAX_THROW(what << "window must be 1-D");
    w = ToDoubles(*wt, what + "window");
  }
  int64_t fl = std::holds_alternative<NDArray>(a[3])
                   ? ScalarInt(a, 3, -1, what + "frame_length")
                   : (w.empty() ? -1 : static_cast<int64_t>(w.size()));
  if (fl <= 0) RELAX_THROW(what << "needs a window or a positive frame_length, got " << fl);
  if (!w.empty() && static_cast<int64_t>(w.size()) != fl)
    RELAX_THROW(what << "window length " << w.size() << " differs from frame_length " << fl);
  if (w.empty()) w.assign(fl, 1.0);
  if (onesided && s[2] != 1) RELAX_THROW(what << "onesided STFT needs a real signal");
  int64_t batch = s[0], len = s[1], c = s[2];
  if (fl > len)
    RELAX_THROW(what << "frame_length " << fl << " is longer than the signal (" << len << ")");
  int64_t frames = (len - fl) / step + 1, bins = onesided ? fl / 2 + 1 : fl;
  std::vector<double> xv = ToDoubles(x, what + "signal");
  std::vector<double> yv(batch * frames * bins * 2), fr(fl), fi(fl);
  const Twiddles tw(fl, -1.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < fl; ++t) {
        const double* p = xv.data() + ((b * len) + f * step + t) * c;
        fr[t] = p[0] * w[t];
        fi[t] = c == 2 ? p[1] * w[t] : 0;
      }
      double* ob = yv.data() + (b * frames + f) * bins * 2;
      Dft(fr.data(), fi.data(), 1, fl, fl, bins, tw, 1.0, ob, ob + 1, 2);
    }
  return FromDoubles(yv, {batch, frames, bins, 2}, x.dtype(), what);
}

// vm.builtin.window(size (one int element), int kind (0 Hann, 1 Hamming, 2 Blackman),
// int periodic, string dtype, string what) -> 1-D tensor of `size` window values; the cosine
// period is size (periodic) or size - 1 (symmetric).
Value Window(const Args& a) {
  const char* fn = "vm.builtin.window";
  CheckArgc(fn, a, 5);
  const std::string& what = AsStr(fn, a, 4);
  int64_t n = ScalarInt(a, 0, -1, what + "size"), kind = AsInt(fn, a, 1);
  bool periodic = AsInt(fn, a, 2) != 0;
  if (n < 0) RELAX_THROW(what << "window size " << n << " must be >= 0");
  double period = static_cast<double>(periodic ? n : n - 1);
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) {
    // A symmetric window of size 1 has period 0: 0 / 0 is NaN, as the operator's formula (and
    // onnxruntime and onnx.reference) give.
    double t = 2 * std::numbers::pi * static_cast<double>(i) / period;
    if (kind == 0) {
      v[i] = 0.5 - 0.5 * std::cos(t);
    } else if (kind == 1) {
      const double alpha = 25.0 / 46.0;
      v[i] = alpha - (1 - alpha) * std::cos(t);
    } else {
      v[i] = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t);
    }
  }
  return FromDoubles(v, {n}, ParseDType(AsStr(fn, a, 3)), what);
}

// vm.builtin.mel_weight_matrix(num_mel_bins, dft_length, sample_rate (one int element each),
// lower_edge_hertz, upper_edge_hertz (one float element each), string dtype, string what) ->
// (dft_length / 2 + 1, num_mel_bins) triangular filter bank (ONNX operator spec,
// MelWeightMatrix, opset 17): num_mel_bins + 2 points equally spaced on the mel scale
// (mel = 2595 log10(1 + hz / 700), computed in float32 as the reference does) between the edges,
// mapped to spectrogram bins floor((dft_length + 1) * hz / sample_rate); filter i rises from
// point i to point i + 1 and falls to point i + 2.
Value MelWeightMatrix(const Args& a) {
  const char* fn = "vm.builtin.mel_weight_matrix";
  CheckArgc(fn, a, 7);
  const std::string& what = AsStr(fn, a, 6);
  int64_t mels = ScalarInt(a, 0, -1, what + "num_mel_bins");
  int64_t dft = ScalarInt(a, 1, -1, what + "dft_length");
  int64_t rate = ScalarInt(a, 2, -1, what + "sample_rate");
  auto scalar = [&](size_t i, const char* name) {
    const NDArray& t = AsCpuTensor(fn, a, i);
    if (t.numel() != 1) RELAX_THROW(what << name << " must have exactly one element");
    return static_cast<float>(FloatElem(t, 0, what + name));
  };
  float lo = scalar(3, "lower_edge_hertz"), hi = scalar(4, "upper_edge_hertz");
  if (mels < 0) RELAX_THROW(what << "num_mel_bins " << mels << " must be >= 0");
  if (dft <= 0) RELAX_THROW(what << "dft_length " << dft << " must be > 0");
  if (rate <= 0) RELAX_THROW(what << "sample_rate " << rate << " must be > 0");
  const int64_t bins = dft / 2 + 1;
  auto to_mel = [](float hz) { return 2595.0f * std::log10(1.0f + hz / 700.0f); };
  const float lo_mel = to_mel(lo), step = (to_mel(hi) - lo_mel) / static_cast<float>(mels + 2);
  std::vector<int64_t> pt(static_cast<size_t>(mels + 2));
  for (int64_t k = 0; k < mels + 2; ++k) {
    double mel = static_cast<double>(k) * static_cast<double>(step) + static_cast<double>(lo_mel);
    double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    pt[k] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> out(static_cast<size_t>(bins * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    if (j < 0 || j >= bins)
      RELAX_THROW(what << "mel filter " << i << " reaches spectrogram bin " << j << ", outside [0, "
                       << bins << "): the edge frequencies exceed what dft_length and sample_rate "
                       << "resolve");
    return out[static_cast<size_t>(j * mels + i)];
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = pt[i], center = pt[i + 1], right = pt[i + 2];
    if (center == left) {
      at(center, i) = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j)
        at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  return FromDoubles(out, {bins, mels}, ParseDType(AsStr(fn, a, 5)), what);
}

}  // namespace

void AddSignalBuiltins(BuiltinTable* t) {
  (*t)["vm.builtin.mel_weight_matrix"] = MelWeightMatrix;
  (*t)["vm.builtin.dft"] = DftBuiltin;
  (*t)["vm.builtin.stft"] = Stft;
  (*t)["vm.builtin.window"] = Window;
}

}  // namespace relax::runtime::builtin_args
