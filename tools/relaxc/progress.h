// The progress display of `relaxc compile --progress=auto|always|never`: after the first 2 s of
// a compile, the stage and the kernels compiled, on stderr. On a terminal one line is redrawn in
// place (at most 10 times a second) and cleared at the end; elsewhere (`always` into a file or
// pipe) plain lines are printed, at most one a second and only when the stage or count changed.
#ifndef RELAX_TOOLS_RELAXC_PROGRESS_H_
#define RELAX_TOOLS_RELAXC_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <streambuf>
#include <string>
#include <thread>

#include "relax/driver/compile.h"

namespace relax::tools {

class ProgressDisplay {
 public:
  enum class Mode { kAuto, kAlways, kNever };
  /// "auto", "always" or "never" (the option's values, checked by CLI11).
  static Mode ParseMode(const std::string& text);

  /// Starts the display (kAuto: only when stderr is a terminal; kNever: never). While it runs,
  /// std::cerr and std::cout go through it: anything written to them first clears a drawn line,
  /// and no line is drawn while one of them has an unfinished line.
  explicit ProgressDisplay(Mode mode, std::chrono::milliseconds delay = std::chrono::seconds(2));
  /// Finish().
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  /// The compile's current stage (driver::CompileOptions::progress); thread-safe and cheap.
  void Update(const driver::CompileProgress& p);
  /// A stage of relaxc's own ("writing").
  void Update(const std::string& stage) { Update(driver::CompileProgress{stage, "", 0, 0}); }
  /// Stops the display: clears a drawn line and gives std::cerr and std::cout their buffers back.
  void Finish();
  /// Whether it shows anything at all (false for kNever, and for kAuto off a terminal).
  bool enabled() const { return enabled_; }

 private:
  class ClearingBuf;
  void Run();
  std::string Describe() const;      // "codegen: kernels 41/120" (mu_ held)
  void Clear();                      // erases a drawn line (mu_ held)
  void Write(const std::string& s);  // to the real stderr (mu_ held)
  void Forward(ClearingBuf* buf, const char* s, std::streamsize n);  // a stream's bytes

  bool enabled_ = false, terminal_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds delay_;
  size_t width_ = 80;  // the terminal's columns
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  driver::CompileProgress state_;
  size_t drawn_ = 0;          // columns of the line drawn now (terminal); 0: none
  std::string last_printed_;  // the last plain line's description
  std::chrono::steady_clock::time_point last_print_;
  std::unique_ptr<ClearingBuf> err_buf_, out_buf_;
  std::streambuf* real_err_ = nullptr;
  std::streambuf* real_out_ = nullptr;
  std::thread ticker_;
};

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_PROGRESS_H_
