// relax-opt: reads text IR (a file or stdin), runs registered passes with
// instrumentation and prints the resulting text IR to stdout.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "../cli_main.h"
#include "relax/codegen/codegen.h"
#include "relax/codegen/fatal_error.h"
#include "relax/driver/model_input.h"
#include "relax/lower/flatten_buffer.h"
#include "relax/lower/vm_codegen.h"
#include "relax/parser/parser.h"
#include "relax/support/error.h"
#include "relax/support/file.h"
#include "relax/support/utf8.h"
#include "relax/target/target.h"
#include "relax/transform/pass.h"

namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Splits at lines that are exactly "// -----" (lit-style split-input-file); returns
// each chunk with its starting line so messages keep file positions.
std::vector<std::pair<std::string, int>> SplitInput(const std::string& text) {
  std::vector<std::pair<std::string, int>> chunks;
  std::string cur;
  int line = 1, start = 1;
  std::istringstream is(text);
  std::string l;
  while (std::getline(is, l)) {
    if (l == "// -----") {
      chunks.push_back({cur, start});
      cur.clear();
      start = line + 1;
    } else {
      cur += l + "\n";
    }
    ++line;
  }
  chunks.push_back({cur, start});
  return chunks;
}

}  // namespace

int main(int argc, char** argv) {
  relax::codegen::InstallFatalErrorHandlers();
  std::string passes_help = "Registered passes:\n";
  for (const relax::Pass* p : relax::ListPasses())
    passes_help += "  " + p->name + "  " + p->description + "\n";
  CLI::App app{"relax-opt: run relaxc passes on text IR"};
  app.footer(passes_help);
  std::string passes, input = "-", print_after;
  bool print_after_all = false, time_passes = false, no_verify = false, split = false;
  std::string emit = "ir", target = "cpu";
  std::vector<std::string> pass_options;
  app.add_option("--passes", passes, "Comma-separated pass list (run in order)");
  app.add_option("--pass-option", pass_options,
                 "A pass option KEY=VALUE for the PassContext (repeatable), e.g. "
                 "fold-constants.max-elements=1024")
      ->allow_extra_args(false);  // one KEY=VALUE per occurrence
  app.add_option("input", input, "Input .rx file ('-' = stdin)");
  app.add_option("--target", target,
                 "Target whose schedule rules the schedule pass applies and whose codegen "
                 "--emit=mlir|llvm|so "
                 "runs (cpu, vulkan, 'cuda -arch=sm_90', 'cpu -mtriple=aarch64-linux-gnu')")
      ->capture_default_str();
  app.add_flag("--print-ir-after-all", print_after_all, "Print the IR after every pass (stderr)");
  app.add_option("--print-ir-after", print_after,
                 "Print the IR after the named passes (comma-separated)");
  app.add_flag("--time-passes", time_passes, "Print per-pass timing (stderr)");
  app.add_flag("--no-verify", no_verify, "Skip the well-formedness check after each pass");
  app.add_flag("--split-input-file", split,
               "Treat '// -----' lines as separators; process each chunk on its own");
  app.add_option("--emit", emit,
                 "What to print after the passes: ir (text IR), mlir (the TIR -> MLIR bridge's "
                 "output for every PrimFunc, after flatten-buffer; GPU targets: the device kernels "
                 "of split-host-device too), llvm (optimized LLVM IR; cuda: the kernels' NVVM IR "
                 "too), vm "
                 "(the VM bytecode listing), so (the linked kernel library, for llvm-objdump)")
      ->check(CLI::IsMember({"ir", "mlir", "llvm", "vm", "so"}));
  if (int rc; !relax::tools::ParseArgs(app, argc, argv, &rc)) return rc;

  std::string text;
  std::string filename = input;
  if (input == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
    filename = "<stdin>";
  } else {
    try {
      text = relax::ReadRegularFile(input, "IR file");
    } catch (const relax::Error& e) {
      std::cerr << "error: " << relax::EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
      return 1;
    }
  }

  std::vector<std::pair<std::string, int>> chunks;
  if (split)
    chunks = SplitInput(text);
  else
    chunks.push_back({text, 1});

  relax::PassContext pctx;
  try {
    relax::driver::ParsePassOptions(pass_options, &pctx.options);
    relax::CheckPassOptions(pctx);
    pctx.target = relax::Target::Parse(target).ToString();
  } catch (const std::exception& e) {
    std::cerr << "error: " << relax::EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
    return 2;
  }
  for (const auto& n : SplitCommas(print_after))
    if (!relax::FindPass(n)) {
      std::cerr << "error: --print-ir-after: unknown pass '" << n << "'\n";
      return 2;
    }
  for (const auto& n : SplitCommas(passes))
    if (!relax::FindPass(n)) {
      std::string known;
      for (const relax::Pass* p : relax::ListPasses())
        known += (known.empty() ? "" : ", ") + p->name;
      std::cerr << "error: unknown pass '" << n << "' (registered passes: " << known << ")\n";
      return 2;
    }

  int rc = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i) std::cout << "// -----\n";
    try {
      // Pad with newlines so line numbers match the whole file.
      std::string src =
          std::string(static_cast<size_t>(chunks[i].second - 1), '\n') + chunks[i].first;
      relax::IRModule mod = relax::ParseModule(src, filename);
      relax::PassInstrumentOptions opts;
      opts.print_after_all = print_after_all;
      for (const auto& n : SplitCommas(print_after)) opts.print_after.insert(n);
      opts.time_passes = time_passes;
      opts.verify_each = !no_verify;
      relax::PassRunner runner(opts, pctx);
      if (!no_verify) relax::VerifyWellFormed(mod);
      runner.Run(&mod, SplitCommas(passes));
      runner.Finish();
      if (emit == "ir") {
        std::cout << relax::ToString(mod);
      } else if (emit == "vm") {
        std::cout << relax::VMCodegen(mod).exec.ToText();
      } else {
        relax::FlattenModuleBuffers(&mod);
        std::ostringstream dump;
        relax::CodegenOptions copts;
        (emit == "mlir" ? copts.dump_mlir : copts.dump_llvm) = &dump;
        // The --target's codegen: host code for its -mtriple and -mcpu, and on GPU targets the
        // device kernels of split-host-device (their MLIR before lowering, for --emit=mlir).
        std::string so = relax::BuildSharedObject(mod, relax::Target::Parse(target), copts);
        if (emit == "so")
          std::cout << so;
        else
          std::cout << dump.str();
      }
    } catch (const relax::Error& e) {
      // Parse errors start "file:line:col: error: ..."; others get the plain prefix (a
      // linker's message may contain ": error: " further on).
      std::string msg = e.what();
      static const std::regex kLocated(R"(^[^\s:]+:\d+:\d+: error: )");
      if (!std::regex_search(msg, kLocated)) msg = "error: " + msg;
      std::cerr << msg << "\n";
      rc = 1;
    }
  }
  std::cout.flush();
  if (!std::cout) {  // a full disk or a closed stdout must not look like success
    std::cerr << "error: cannot write the output to stdout\n";
    return 1;
  }
  return rc;
}
