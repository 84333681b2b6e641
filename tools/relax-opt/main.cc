// relax-opt: runs passes on text IR (the parser lands with the IR-tooling work;
// for now it lists the registered passes).
#include <CLI/CLI.hpp>
#include <iostream>

#include "relax/transform/pass.h"

int main(int argc, char** argv) {
  std::string passes_help = "Registered passes:\n";
  for (const relax::Pass* p : relax::ListPasses()) passes_help += "  " + p->name + "  " + p->description + "\n";
  CLI::App app{"relax-opt: run relaxc passes on text IR\n" + passes_help};
  std::string passes, input;
  app.add_option("--passes", passes, "Comma-separated pass list");
  app.add_option("input", input, "Input .rx file");
  CLI11_PARSE(app, argc, argv);
  std::cerr << "error: the text IR parser is not implemented yet\n";
  return 1;
}
