// `--config FILE` for the services (transitd, cip11d, cip11-runner): a TOML
// file whose keys are the long flag names without their dashes, read by
// CLI11; a flag given on the command line wins over the file, and a key no
// flag knows refuses the start, named, so a typo cannot pass unnoticed.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>

namespace cowboy::apps {

/// Adds --config to `app`; `example` names the packaged file (packaging/<service>.toml).
inline void add_config_file(CLI::App& app, const std::string& example) {
  app.set_config("--config", "", "read options from a TOML file (keys are the long flag names; " + example + ")");
  app.allow_config_extras(CLI::config_extras_mode::error);
}

/// Parses the command line and the --config file. nullopt: go on; else the
/// exit status, the refusal printed ("<program>: --config: a key no flag knows,
/// refused (INI was not able to parse KEY); see <example>", status 1).
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* program,
                                             const std::string& example) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {  // CLI11 says "INI was not able to parse <key>"
    std::fprintf(stderr, "%s: --config: a key no flag knows, refused (%s); see %s\n", program, e.what(),
                 example.c_str());
    return 1;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

}  // namespace cowboy::apps
