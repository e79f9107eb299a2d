// The gatejit subcommands. Each registers its flags on a CLI11 subcommand and
// returns a function that runs it (exit code).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "gatejit/status.h"

namespace gatejit::tool {

using Runner = std::function<int()>;

Runner add_compile_command(CLI::App &app);   // compile (through the disk cache)
Runner add_inspect_command(CLI::App &app);   // inspect FILE (hsaco, PTX or bundle)
Runner add_ir_command(CLI::App &app);        // ir --stage ...
Runner add_explain_command(CLI::App &app);   // explain <contract flags>
Runner add_cache_command(CLI::App &app);     // cache stats|list|verify|clear
Runner add_precompile_command(CLI::App &app);  // precompile SPEC.json -> bundle
Runner add_bundle_command(CLI::App &app);      // bundle extract BUNDLE -o DIR
Runner add_plan_command(CLI::App &app);        // plan <contract flags> (no compile)
Runner add_emulate_command(CLI::App &app);     // emulate <contract flags>: run on the emulator, check every element

// Prints "gatejit: error: <message>" to stderr; returns 1.
int fail(const Status &s);

}  // namespace gatejit::tool
