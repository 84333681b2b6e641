// ProgressDisplay (progress.h): a ticker thread draws the compile's stage on stderr; std::cerr and
// std::cout pass through a buffer that erases the drawn line before their own text.
#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace relax::tools {

// A stream buffer that hands every byte to the display, which clears its line first and then
// writes the bytes to the stream's real buffer.
class ProgressDisplay::ClearingBuf : public std::streambuf {
 public:
  ClearingBuf(ProgressDisplay* display, std::streambuf* real) : display_(display), real_(real) {}
  std::streambuf* real() const { return real_; }
  bool at_line_start = true;  // the last byte written was a newline (guarded by mu_)

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    char ch = traits_type::to_char_type(c);
    display_->Forward(this, &ch, 1);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    display_->Forward(this, s, n);
    return n;
  }
  int sync() override { return real_->pubsync(); }

 private:
  ProgressDisplay* display_;
  std::streambuf* real_;
};

ProgressDisplay::Mode ProgressDisplay::ParseMode(const std::string& text) {
  return text == "always" ? Mode::kAlways : text == "never" ? Mode::kNever : Mode::kAuto;
}

ProgressDisplay::ProgressDisplay(Mode mode, std::chrono::milliseconds delay)
    : start_(std::chrono::steady_clock::now()), delay_(delay) {
  terminal_ = ::isatty(STDERR_FILENO) == 1;
  enabled_ = mode == Mode::kAlways || (mode == Mode::kAuto && terminal_);
  if (!enabled_) return;
  struct winsize ws {};
  if (terminal_ && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
    width_ = ws.ws_col;
  real_err_ = std::cerr.rdbuf();
  real_out_ = std::cout.rdbuf();
  err_buf_ = std::make_unique<ClearingBuf>(this, real_err_);
  out_buf_ = std::make_unique<ClearingBuf>(this, real_out_);
  std::cerr.rdbuf(err_buf_.get());
  std::cout.rdbuf(out_buf_.get());
  ticker_ = std::thread([this] { Run(); });
}

ProgressDisplay::~ProgressDisplay() { Finish(); }

void ProgressDisplay::Update(const driver::CompileProgress& p) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  state_ = p;
}

void ProgressDisplay::Finish() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  ticker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  Clear();
  std::cerr.rdbuf(real_err_);
  std::cout.rdbuf(real_out_);
}

std::string ProgressDisplay::Describe() const {
  std::string s = state_.stage.empty() ? std::string("starting") : state_.stage;
  if (!state_.unit.empty())
    s +=
        ": " + state_.unit + " " + std::to_string(state_.done) + "/" + std::to_string(state_.total);
  return s;
}

void ProgressDisplay::Clear() {
  if (drawn_ == 0) return;
  Write("\r" + std::string(drawn_, ' ') + "\r");
  drawn_ = 0;
}

void ProgressDisplay::Write(const std::string& s) {
  real_err_->sputn(s.data(), static_cast<std::streamsize>(s.size()));
  real_err_->pubsync();
}

void ProgressDisplay::Forward(ClearingBuf* buf, const char* s, std::streamsize n) {
  std::lock_guard<std::mutex> lock(mu_);
  Clear();
  if (n <= 0) return;
  buf->real()->sputn(s, n);
  buf->at_line_start = s[n - 1] == '\n';
}

void ProgressDisplay::Run() {
  using namespace std::chrono;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, milliseconds(100));
    if (stop_) break;
    const auto now = steady_clock::now();
    // Nothing for short compiles, nor inside a line another writer has not finished.
    if (now - start_ < delay_ || !err_buf_->at_line_start || !out_buf_->at_line_start) continue;
    char elapsed[32];
    std::snprintf(elapsed, sizeof(elapsed), "%.1f s", duration<double>(now - start_).count());
    const std::string desc = Describe();
    std::string line = std::string("[relaxc] ") + elapsed + "  " + desc;
    if (terminal_) {
      if (line.size() >= width_) line.resize(width_ - 1);
      std::string out = "\r" + line;
      if (drawn_ > line.size()) out += std::string(drawn_ - line.size(), ' ');
      Write(out);
      drawn_ = out.size() - 1;
    } else if (desc != last_printed_ && now - last_print_ >= seconds(1)) {
      Write(line + "\n");
      last_printed_ = desc;
      last_print_ = now;
    }
  }
}

}  // namespace relax::tools
