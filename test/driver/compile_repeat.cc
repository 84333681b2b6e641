// compile_repeat: compiles the given models again and again in one process through the compiler
// library (relax::driver::Compile) and prints the resident set size after compile 10 and after
// the last, so that growth per compile shows (issue 35: RSS after compile 50 <= RSS after
// compile 10 + 5 %). Built in the ASan build too (build/san), where LeakSanitizer checks the
// same loop at exit.
//
//   compile_repeat [--count N] [--check-rss] MODEL.onnx...
//
// Exit status 1 when a compile fails, or with --check-rss when RSS grew by more than 5 %.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "relax/driver/compile.h"

namespace {

// VmRSS of /proc/self/status, in KiB (0 when unreadable).
long RssKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 50;
  bool check = false;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--count" && i + 1 < argc) {
      count = std::atoi(argv[++i]);
    } else if (a == "--check-rss") {
      check = true;
    } else {
      models.push_back(a);
    }
  }
  if (models.empty() || count < 10) {
    std::cerr << "usage: compile_repeat [--count N>=10] [--check-rss] MODEL.onnx...\n";
    return 2;
  }
  long after10 = 0;
  size_t bytes = 0;
  for (int i = 1; i <= count; ++i) {
    const std::string& m = models[static_cast<size_t>(i - 1) % models.size()];
    try {
      relax::driver::CompileOptions o;
      bytes += relax::driver::Compile(m, o).Bytes().size();
    } catch (const std::exception& e) {
      std::cerr << "error: compile " << i << " of '" << m << "': " << e.what() << "\n";
      return 1;
    }
    if (i == 10) after10 = RssKiB();
  }
  long last = RssKiB();
  std::cout << "compiles: " << count << " (" << models.size() << " models, " << bytes
            << " artifact bytes)\nRSS after compile 10: " << after10 << " KiB\nRSS after compile "
            << count << ": " << last << " KiB ("
            << (after10 ? 100.0 * (last - after10) / after10 : 0) << " %)\n";
  if (check && last > after10 + after10 / 20) {
    std::cerr << "error: RSS grew by more than 5 % between compile 10 and compile " << count
              << "\n";
    return 1;
  }
  return 0;
}
