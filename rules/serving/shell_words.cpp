#include "rules/serving/shell_words.h"

#include "rules/serving/launch_env.h"
#include "text/templated.h"

#include <algorithm>
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
class ScriptSplitter {
 public:
  ScriptSplitter(std::string_view script, const FieldPath& path) : s_(script), path_(path) {}

  std::vector<Command> split() && {
    for (i_ = 0; i_ < s_.size(); ++i_) take(s_[i_]);
    endCommand();
    if (commands_.back().empty()) commands_.pop_back();
    return std::move(commands_);
  }

 private:
  void take(char c) {
    if (c == '\\') {
      escaped();
    } else if (c == '\'') {
      inWord_ = true;
      for (++i_; i_ < s_.size() && s_[i_] != '\''; ++i_) word_.text += s_[i_];
    } else if (c == '"') {
      doubleQuoted();
    } else if (c == '$') {
      expansion();
    } else if (c == '`') {
      inWord_ = true;
      word_.dynamic = true;
      word_.text += c;
      for (++i_; i_ < s_.size() && s_[i_] != '`'; ++i_) word_.text += s_[i_];
      word_.text += '`';
    } else if (c == '#' && !inWord_) {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      endCommand();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '<' || c == '>') {
      endWord();
    } else if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      endCommand();
    } else {
      word_.text += c;
      inWord_ = true;
    }
  }

  void escaped() {
    if (i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
      ++i_;  // line continuation
    } else if (i_ + 1 < s_.size()) {
      word_.text += s_[++i_];
      inWord_ = true;
    }
  }

  void doubleQuoted() {
    inWord_ = true;
    for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size() && std::string_view("\"\\$`\n").find(s_[i_ + 1]) != std::string_view::npos) {
        if (s_[i_ + 1] != '\n') word_.text += s_[i_ + 1];
        ++i_;
      } else {
        if (s_[i_] == '$' || s_[i_] == '`') word_.dynamic = true;
        word_.text += s_[i_];
      }
    }
  }

  void expansion() {
    inWord_ = true;
    word_.dynamic = true;
    if (i_ + 1 < s_.size() && (s_[i_ + 1] == '(' || s_[i_ + 1] == '{')) {
      word_.text += '$';
      ++i_;
      takeGroup(s_[i_], s_[i_] == '(' ? ')' : '}');
    } else {
      word_.text += '$';
    }
  }

  // Appends s[i..] up to the bracket closing the one at s[i] ($( ... ), ${ ... }).
  void takeGroup(char open, char close) {
    int depth = 0;
    for (; i_ < s_.size(); ++i_) {
      word_.text += s_[i_];
      if (s_[i_] == open) ++depth;
      else if (s_[i_] == close && --depth == 0) return;
    }
  }

  void endWord() {
    if (inWord_) {
      word_.path = path_;
      commands_.back().push_back(std::move(word_));
    }
    word_ = Token{};
    inWord_ = false;
  }

  void endCommand() {
    endWord();
    if (!commands_.back().empty()) commands_.emplace_back();
  }

  std::string_view s_;
  const FieldPath& path_;
  std::size_t i_ = 0;
  std::vector<Command> commands_ = std::vector<Command>(1);
  Token word_;
  bool inWord_ = false;
};

std::vector<Command> splitScript(std::string_view s, const FieldPath& path) { return ScriptSplitter(s, path).split(); }

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

// Whether the list at `it` holds a string with a '$' (what expandEnvReferences changes).
bool holdsDollar(json::const_iterator it, json::const_iterator end) {
  if (it == end || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [](const json& v) {
    return v.is_string() && v.get_ref<const std::string&>().find('$') != std::string::npos;
  });
}

}  // namespace

ContainerCommands containerCommands(const ContainerRef& container) {
  const json& c = *container.container;
  auto command = c.find("command");
  auto args = c.find("args");
  ContainerCommands out;
  out.hasCommand = command != c.end() && command->is_array() && !command->empty();
  // Only a word with a '$' can name an env var ($(VAR)): without one the
  // env's values are not read at all.
  const bool mayExpand = holdsDollar(command, c.end()) || holdsDollar(args, c.end());
  const EnvValues env = mayExpand ? literalEnvValues(c) : EnvValues{};
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
