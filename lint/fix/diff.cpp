// unifiedDiff (fix.h).
#include <algorithm>

#include "lint/fix/fix.h"

namespace gpuguard::lint {

// ---------------------------------------------------------------------------
// Unified diff (Myers' O(ND) algorithm on lines, after trimming the common
// head and tail).

namespace {

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.push_back(text.substr(start, end - start));
    start = end;
  }
  return out;
}

enum class Op { Keep, Del, Add };

// The edit script from a to b (both already without common head and tail).
std::vector<Op> myers(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  const long max = n + m;
  constexpr long kMaxD = 2000;  // beyond this, replace the whole middle
  std::vector<std::vector<long>> trace;
  std::vector<long> v(2 * static_cast<std::size_t>(max) + 2, 0);
  const long off = max + 1;
  long found = -1;
  constexpr std::size_t kMaxTrace = 16u << 20;  // entries kept for the backtrack
  for (long d = 0; d <= std::min(max, kMaxD) && (static_cast<std::size_t>(d) + 1) * v.size() <= kMaxTrace; ++d) {
    trace.push_back(v);
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  std::vector<Op> ops;
  if (found < 0) {
    ops.assign(static_cast<std::size_t>(n), Op::Del);
    ops.insert(ops.end(), static_cast<std::size_t>(m), Op::Add);
    return ops;
  }
  long x = n, y = m;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& pv = trace[static_cast<std::size_t>(d)];
    const long k = x - y;
    const long prevK = (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) ? k + 1 : k - 1;
    const long prevX = pv[off + prevK];
    const long prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push_back(Op::Keep);
      --x, --y;
    }
    ops.push_back(x == prevX ? Op::Add : Op::Del);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push_back(Op::Keep);
    --x, --y;
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

void emitLine(std::string& out, char mark, std::string_view line) {
  out += mark;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unifiedDiff(std::string_view before, std::string_view after, const std::string& name) {
  if (before == after) return "";
  const std::vector<std::string_view> a = splitLines(before), b = splitLines(after);
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  const std::vector<std::string_view> midA(a.begin() + static_cast<long>(head), a.end() - static_cast<long>(tail));
  const std::vector<std::string_view> midB(b.begin() + static_cast<long>(head), b.end() - static_cast<long>(tail));
  std::vector<Op> ops(head, Op::Keep);
  for (Op op : myers(midA, midB)) ops.push_back(op);
  ops.insert(ops.end(), tail, Op::Keep);

  std::string out = "--- a/" + name + "\n+++ b/" + name + "\n";
  constexpr std::size_t kContext = 3;
  // Walk the script, cutting hunks around changes.
  std::size_t i = 0;
  std::size_t ai = 0, bi = 0;  // line indexes at ops[i]
  while (i < ops.size()) {
    if (ops[i] == Op::Keep) {
      ++i, ++ai, ++bi;
      continue;
    }
    // A change at ops[i]: the hunk starts kContext lines before.
    const std::size_t back = std::min(kContext, std::min(ai, bi));
    std::size_t start = i - back, hunkA = ai - back, hunkB = bi - back;
    // Extend while changes are within 2*kContext of each other.
    std::size_t end = i, keepRun = 0, lastChange = i;
    for (std::size_t j = i; j < ops.size(); ++j) {
      if (ops[j] == Op::Keep) {
        if (++keepRun > 2 * kContext) break;
      } else {
        keepRun = 0;
        lastChange = j;
      }
    }
    end = std::min(ops.size(), lastChange + 1 + kContext);
    std::size_t countA = 0, countB = 0;
    for (std::size_t j = start; j < end; ++j) {
      if (ops[j] != Op::Add) ++countA;
      if (ops[j] != Op::Del) ++countB;
    }
    out += "@@ -" + std::to_string(countA ? hunkA + 1 : hunkA) + (countA == 1 ? "" : "," + std::to_string(countA)) +
           " +" + std::to_string(countB ? hunkB + 1 : hunkB) + (countB == 1 ? "" : "," + std::to_string(countB)) +
           " @@\n";
    std::size_t x = hunkA, y = hunkB;
    for (std::size_t j = start; j < end; ++j) {
      switch (ops[j]) {
        case Op::Keep: emitLine(out, ' ', a[x++]); ++y; break;
        case Op::Del: emitLine(out, '-', a[x++]); break;
        case Op::Add: emitLine(out, '+', b[y++]); break;
      }
    }
    ai = x, bi = y, i = end;
  }
  return out;
}

}  // namespace gpuguard::lint