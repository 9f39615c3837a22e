// The words a container runs, as a launcher sees them: command and args
// after the kubelet expanded $(VAR) from the container's literal env, and the
// simple commands of a `sh -c` script split the way a POSIX shell splits
// them, quotes removed. Shared by the launchers the rules read
// (rules/serving/launch.cpp: vLLM, SGLang, TGI, torchrun). Facts:
// kubernetes-gpu-semantics.md §12, §15.8.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rules/k8s/field_path.h"
#include "rules/pod_specs.h"

namespace gpuguard {

struct ShellWord {
  std::string text;
  bool dynamic = false;  // holds an expansion: $(VAR), ${VAR}, $VAR, `cmd`, {{ tpl }}
  FieldPath path;        // the command/args element holding it
};
using ShellCommand = std::vector<ShellWord>;

// Whether a word holds an expansion the kubelet leaves to the shell (or a
// template left to render).
bool isDynamicWord(std::string_view s);

// "/usr/bin/torchrun" -> "torchrun".
std::string_view commandBaseName(std::string_view s);

// One branch of a construct of which at most one branch runs: if/elif/else,
// case, or the commands of an and-or list around `||`.
struct ShellBranch {
  unsigned construct = 0;  // numbered in script order
  unsigned branch = 0;
};
// The branches a simple command sits in, outermost first.
using ShellBranchPath = std::vector<ShellBranch>;

struct ContainerCommands {
  bool hasCommand = false;    // the container sets `command` (else the image's entrypoint runs)
  ShellCommand argv;          // command then args, expanded from literal env
  // The simple commands of `sh -c SCRIPT`, when argv runs one. Here-document
  // bodies are not among them: they are data the shell feeds to a command.
  std::vector<ShellCommand> script;
  std::vector<ShellBranchPath> scriptBranches;  // for each command of `script`
  bool runsShell = false;     // argv starts a shell (`env` aside): then `script` is what runs

  // What runs: the script's commands, or argv as the one command (a view,
  // so that argv is not copied; valid while this object lives).
  std::span<const ShellCommand> commands() const {
    return runsShell ? std::span<const ShellCommand>(script) : std::span<const ShellCommand>(&argv, 1);
  }
};

ContainerCommands containerCommands(const ContainerRef& container);

// Where the program argv runs starts, past `env`, `tini` and `dumb-init`
// and their options (argv.size() when nothing we can read runs).
std::size_t wrappedProgram(const ShellCommand& argv);

// The index of the -c script of the shell at argv[shell], read with the
// shell's option syntax (`bash -o pipefail -c`, `bash -lc --`, `bash --login
// -c`); none when the shell runs no -c script.
std::optional<std::size_t> shellScriptIndex(const ShellCommand& argv, std::size_t shell);

// Whether two of the given script commands (indexes into `script`) sit in
// different branches of one if/elif/else, case or `||` list, so that at most
// one of them runs, and which one the manifest does not say. Linear in the
// commands and their nesting.
bool anyTwoInAlternativeBranches(const ContainerCommands& commands, std::span<const std::size_t> indexes);

}  // namespace gpuguard
