#include "rules/serving/shell_words.h"
#include "rules/serving/launch_env.h"
#include "text/templated.h"

#include <iterator>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpuguard {

using nlohmann::json;

bool isDynamicWord(std::string_view s) { return s.find('$') != std::string_view::npos || text::looksTemplated(s); }

std::string_view commandBaseName(std::string_view s) {
  auto slash = s.rfind('/');
  return slash == std::string_view::npos ? s : s.substr(slash + 1);
}

namespace {

// Scripts longer than this are not read (no real launch script is).
constexpr std::size_t kMaxScript = 256 * 1024;

using Token = ShellWord;
using Command = ShellCommand;

bool isShell(std::string_view s) {
  const std::string_view b = commandBaseName(s);
  return b == "sh" || b == "bash" || b == "dash" || b == "ash" || b == "zsh" || b == "ksh";
}

// Splits a shell script into simple commands (`;`, `&&`, `||`, `|`, `&`,
// newlines and parentheses separate them) of words with quotes removed.
// Expansions are kept as written and mark the word dynamic.
std::vector<Command> splitScript(std::string_view s, const FieldPath& path) {
  std::vector<Command> commands(1);
  Token word;
  bool inWord = false;
  auto endWord = [&] {
    if (inWord) {
      word.path = path;
      commands.back().push_back(std::move(word));
    }
    word = Token{};
    inWord = false;
  };
  auto endCommand = [&] {
    endWord();
    if (!commands.back().empty()) commands.emplace_back();
  };
  // Appends s[i..] up to the bracket closing the one at s[i] ($( ... ), ${ ... }).
  auto takeGroup = [&](std::size_t& i, char open, char close) {
    int depth = 0;
    for (; i < s.size(); ++i) {
      word.text += s[i];
      if (s[i] == open) ++depth;
      else if (s[i] == close && --depth == 0) return;
    }
  };

  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      if (i + 1 < s.size() && s[i + 1] == '\n') {
        ++i;  // line continuation
      } else if (i + 1 < s.size()) {
        word.text += s[++i];
        inWord = true;
      }
    } else if (c == '\'') {
      inWord = true;
      for (++i; i < s.size() && s[i] != '\''; ++i) word.text += s[i];
    } else if (c == '"') {
      inWord = true;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && std::string_view("\"\\$`\n").find(s[i + 1]) != std::string_view::npos) {
          if (s[i + 1] != '\n') word.text += s[i + 1];
          ++i;
        } else {
          if (s[i] == '$' || s[i] == '`') word.dynamic = true;
          word.text += s[i];
        }
      }
    } else if (c == '$') {
      inWord = true;
      word.dynamic = true;
      if (i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '{')) {
        word.text += '$';
        ++i;
        takeGroup(i, s[i], s[i] == '(' ? ')' : '}');
      } else {
        word.text += c;
      }
    } else if (c == '`') {
      inWord = true;
      word.dynamic = true;
      word.text += c;
      for (++i; i < s.size() && s[i] != '`'; ++i) word.text += s[i];
      word.text += '`';
    } else if (c == '#' && !inWord) {
      while (i < s.size() && s[i] != '\n') ++i;
      endCommand();
    } else if (c == ' ' || c == '\t' || c == '\r') {
      endWord();
    } else if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      endCommand();
    } else if (c == '<' || c == '>') {
      endWord();
    } else {
      word.text += c;
      inWord = true;
    }
  }
  endCommand();
  if (commands.back().empty()) commands.pop_back();
  return commands;
}

std::vector<Token> listTokens(const json& list, const FieldPath& path, const EnvValues& env) {
  std::vector<Token> out;
  if (!list.is_array()) return out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    Token t;
    if (v.is_string()) t.text = expandEnvReferences(v.get<std::string>(), env);
    else if (v.is_number_integer() || v.is_number_unsigned()) t.text = v.dump();
    else continue;
    t.dynamic = isDynamicWord(t.text);
    t.path = path.index(i);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

ContainerCommands containerCommands(const ContainerRef& container) {
  const json& c = *container.container;
  auto command = c.find("command");
  auto args = c.find("args");
  ContainerCommands out;
  out.hasCommand = command != c.end() && command->is_array() && !command->empty();
  const EnvValues env = literalEnvValues(c);
  if (out.hasCommand) out.argv = listTokens(*command, container.path.field("command"), env);
  if (args != c.end()) {
    std::vector<Token> a = listTokens(*args, container.path.field("args"), env);
    out.argv.insert(out.argv.end(), std::make_move_iterator(a.begin()), std::make_move_iterator(a.end()));
  }
  // A shell runs its -c script (none when it runs no -c script).
  const ShellCommand& argv = out.argv;
  std::size_t first = 0;
  if (!argv.empty() && commandBaseName(argv[0].text) == "env") first = 1;
  if (argv.size() > first && isShell(argv[first].text)) {
    out.runsShell = true;
    for (std::size_t i = first + 1; i + 1 < argv.size(); ++i) {
      const std::string& opt = argv[i].text;
      if (opt.size() < 2 || opt[0] != '-' || opt[1] == '-') break;
      if (opt.find('c') != std::string::npos) {
        if (argv[i + 1].text.size() <= kMaxScript) out.script = splitScript(argv[i + 1].text, argv[i + 1].path);
        break;
      }
    }
  }
  return out;
}

}  // namespace gpuguard
