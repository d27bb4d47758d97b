//===- Reference.cpp - Reference attention for the interpreter ------------===//

#include "Reference.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::cuir::interp;

Output mlir::cuir::interp::builtinReference(const Problem &p) {
  Output out;
  out.o.assign(p.B * p.Nq * p.Hq * p.d, 0.0);
  out.lse.assign(p.B * p.Hq * p.Nq, 0.0);
  out.hasLse = true;
  int64_t group = p.Hq / p.Hkv;
  std::vector<double> s(p.Nkv);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.Hq; ++h) {
      int64_t hk = h / group;
      for (int64_t i = 0; i < p.Nq; ++i) {
        const float *qi = &p.q[((b * p.Nq + i) * p.Hq + h) * p.d];
        double mx = -INFINITY;
        int64_t last = p.causal ? std::min(p.Nkv - 1, i + p.Nkv - p.Nq)
                                : p.Nkv - 1;
        for (int64_t j = 0; j <= last; ++j) {
          const float *kj = &p.k[((b * p.Nkv + j) * p.Hkv + hk) * p.d];
          double dot = 0;
          for (int64_t c = 0; c < p.d; ++c)
            dot += double(qi[c]) * double(kj[c]);
          s[j] = dot * p.scale;
          mx = std::max(mx, s[j]);
        }
        double *oi = &out.o[((b * p.Nq + i) * p.Hq + h) * p.d];
        double &lse = out.lse[(b * p.Hq + h) * p.Nq + i];
        if (last < 0) {
          lse = INFINITY;
          continue;
        }
        double sum = 0;
        for (int64_t j = 0; j <= last; ++j) {
          s[j] = std::exp(s[j] - mx);
          sum += s[j];
        }
        for (int64_t j = 0; j <= last; ++j) {
          const float *vj = &p.v[((b * p.Nkv + j) * p.Hkv + hk) * p.d];
          double w = s[j] / sum;
          for (int64_t c = 0; c < p.d; ++c)
            oi[c] += w * double(vj[c]);
        }
        lse = mx + std::log(sum);
      }
    }
  return out;
}

namespace {
/// The rows of a head of a problem in [B, N, H, d] layout.
struct HeadRows {
  const float *base;
  int64_t N, H, d;
  const float *row(int64_t b, int64_t n, int64_t h) const {
    return base + ((b * N + n) * H + h) * d;
  }
};
} // namespace

Gradients mlir::cuir::interp::builtinBackward(const Problem &p,
                                              const Output &fwd) {
  Gradients g;
  g.dq.assign(p.B * p.Nq * p.Hq * p.d, 0.0);
  g.dk.assign(p.B * p.Nkv * p.Hkv * p.d, 0.0);
  g.dv.assign(g.dk.size(), 0.0);
  HeadRows Q{p.q.data(), p.Nq, p.Hq, p.d}, K{p.k.data(), p.Nkv, p.Hkv, p.d},
      V{p.v.data(), p.Nkv, p.Hkv, p.d}, dO{p.dO.data(), p.Nq, p.Hq, p.d};
  int64_t group = p.Hq / p.Hkv;
  auto dot = [&](const float *x, const float *y) {
    double s = 0;
    for (int64_t c = 0; c < p.d; ++c)
      s += double(x[c]) * double(y[c]);
    return s;
  };
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.Hq; ++h)
      for (int64_t i = 0; i < p.Nq; ++i) {
        int64_t hk = h / group, row = (b * p.Nq + i) * p.Hq + h;
        int64_t last =
            p.causal ? std::min(p.Nkv - 1, i + p.Nkv - p.Nq) : p.Nkv - 1;
        const double *oi = &fwd.o[row * p.d];
        const float *qi = Q.row(b, i, h), *doi = dO.row(b, i, h);
        double D = 0, lse = fwd.lse[(b * p.Hq + h) * p.Nq + i];
        for (int64_t c = 0; c < p.d; ++c)
          D += double(doi[c]) * oi[c];
        for (int64_t j = 0; j <= last; ++j) {
          const float *kj = K.row(b, j, hk), *vj = V.row(b, j, hk);
          double P = std::exp(dot(qi, kj) * p.scale - lse);
          double dS = P * (dot(doi, vj) - D) * p.scale;
          double *dkj = &g.dk[((b * p.Nkv + j) * p.Hkv + hk) * p.d];
          double *dvj = &g.dv[((b * p.Nkv + j) * p.Hkv + hk) * p.d];
          for (int64_t c = 0; c < p.d; ++c) {
            g.dq[row * p.d + c] += dS * double(kj[c]);
            dkj[c] += dS * double(qi[c]);
            dvj[c] += P * double(doi[c]);
          }
        }
      }
  return g;
}

//===----------------------------------------------------------------------===//
// PyTorch references through .npy files and JSON
//===----------------------------------------------------------------------===//

nlohmann::json mlir::cuir::interp::jsonNumber(double x) {
  // 1e17 and above print with an exponent, which Python reads as a float.
  if (std::trunc(x) == x && std::fabs(x) < 1e17)
    return static_cast<int64_t>(x);
  return x;
}

std::string mlir::cuir::interp::dumpJson(const nlohmann::json &value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    nlohmann::json::error_handler_t::replace);
}

std::string mlir::cuir::interp::dumpJson(const nlohmann::ordered_json &value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace);
}

std::string mlir::cuir::interp::referenceMetaJson(const Problem &p) {
  // The values are finite numbers or strings, so Python reads whatever the
  // user passed.
  nlohmann::json params = {{"causal", p.causal}};
  if (p.params.is_object())
    params.update(p.params);
  nlohmann::json meta = {{"scale", jsonNumber(p.scale)},
                         {"params", std::move(params)}};
  if (p.tensors.is_object() && !p.tensors.empty())
    meta["tensors"] = p.tensors;
  // A backward problem: the runner computes O, LSE and the gradients.
  if (!p.dO.empty())
    meta["backward"] = true;
  if (!p.trainable.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto &entry : p.trainable)
      names.push_back(entry.first);
    meta["trainable"] = std::move(names);
  }
  return dumpJson(meta);
}

/// A .npy file of 4-byte elements of the numpy type `descr`.
static bool writeNpy4(StringRef path, StringRef descr, ArrayRef<int64_t> shape,
                      const void *data, size_t count) {
  std::string header =
      "{'descr': '" + descr.str() + "', 'fortran_order': False, 'shape': (";
  for (int64_t d : shape)
    header += std::to_string(d) + ", ";
  header += "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return false;
  os << "\x93NUMPY" << char(1) << char(0);
  uint16_t len = header.size();
  os << char(len & 0xff) << char(len >> 8) << header;
  os.write(reinterpret_cast<const char *>(data), count * 4);
  return !os.has_error();
}

bool mlir::cuir::interp::writeNpy(StringRef path, ArrayRef<int64_t> shape,
                                  ArrayRef<float> data) {
  return writeNpy4(path, "<f4", shape, data.data(), data.size());
}

bool mlir::cuir::interp::writeNpy(StringRef path, ArrayRef<int64_t> shape,
                                  ArrayRef<int32_t> data) {
  return writeNpy4(path, "<i4", shape, data.data(), data.size());
}

namespace {

/// Reads a float32 or float64 .npy file of `expected` elements.
FailureOr<std::vector<double>> readNpy(StringRef path, int64_t expected,
                                       std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read " + path.str();
    return failure();
  }
  StringRef data = (*buf)->getBuffer();
  if (data.size() < 10 || !data.starts_with("\x93NUMPY")) {
    error = path.str() + " is not a .npy file";
    return failure();
  }
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    hstart = 10;
  } else {
    hlen = uint8_t(data[8]) | (uint8_t(data[9]) << 8) |
           (uint32_t(uint8_t(data[10])) << 16) |
           (uint32_t(uint8_t(data[11])) << 24);
    hstart = 12;
  }
  StringRef header = data.substr(hstart, hlen);
  bool f8 = header.contains("'<f8'");
  if (!f8 && !header.contains("'<f4'")) {
    error = path.str() + " must hold float32 or float64 values";
    return failure();
  }
  if (header.contains("'fortran_order': True")) {
    error = path.str() + " must be in C order";
    return failure();
  }
  size_t elem = f8 ? 8 : 4;
  StringRef payload = data.substr(hstart + hlen);
  if (payload.size() != size_t(expected) * elem) {
    error = path.str() + " holds " + std::to_string(payload.size() / elem) +
            " values, expected " + std::to_string(expected);
    return failure();
  }
  std::vector<double> out(expected);
  for (int64_t i = 0; i < expected; ++i) {
    if (f8) {
      double d;
      std::memcpy(&d, payload.data() + i * 8, 8);
      out[i] = d;
    } else {
      float f;
      std::memcpy(&f, payload.data() + i * 4, 4);
      out[i] = f;
    }
  }
  return out;
}

/// Loads the user's file, transposes between the kernel's [B, N, H, d] and
/// torch's [B, H, N, d], and calls `reference`.
const char *kRunner = R"PY(
import importlib.util, json, sys
import numpy as np
import torch
d = sys.argv[1]
spec = importlib.util.spec_from_file_location("cuir_reference", sys.argv[2])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
if not hasattr(mod, "reference"):
    sys.exit(f"{sys.argv[2]} defines no function 'reference(q, k, v, scale, **params)'")
meta = json.load(open(f"{d}/meta.json"))
def load(name):
    return torch.from_numpy(np.load(f"{d}/{name}.npy")).permute(0, 2, 1, 3).contiguous()
q, k, v = load("q"), load("k"), load("v")
for name, t in meta.get("tensors", {}).items():
    data = [float(x) if isinstance(x, str) else x for x in t["data"]]
    meta["params"][name] = torch.tensor(data, dtype=getattr(torch, t["dtype"])).reshape(t["shape"])
def save(name, t, torch_layout=True):
    t = t.detach().to(torch.float64)
    if torch_layout:
        t = t.permute(0, 2, 1, 3)
    np.save(f"{d}/{name}.npy", t.contiguous().numpy())
if meta.get("backward"):
    # float64 leaves, so that autograd gives float64 gradients.
    q, k, v = (t.to(torch.float64).requires_grad_() for t in (q, k, v))
    do = load("d_o").to(torch.float64)
    # Trainable parameters: float64 leaves too, of their shapes.
    trainable = meta.get("trainable", [])
    leaves = []
    for name in trainable:
        leaf = torch.as_tensor(meta["params"][name], dtype=torch.float64).clone().requires_grad_()
        meta["params"][name] = leaf
        leaves.append(leaf)
    out = mod.reference(q, k, v, meta["scale"], **meta["params"])
    if isinstance(out, (tuple, list)) and len(out) >= 2:
        o, lse = out[0], out[1]
    elif torch.is_tensor(out):
        # O alone: a normaliser without a log-sum-exp (sigmoid), whose backward does not read it; LSE = 0.
        o, lse = out, torch.zeros(out.shape[:-1], dtype=torch.float64)
    else:
        sys.exit(f"{sys.argv[2]}: for a backward, 'reference' must return (O, LSE), or O for a normaliser "
                 f"without a log-sum-exp")
    if hasattr(mod, "reference_backward") and trainable:
        sys.exit(f"{sys.argv[2]}: 'reference_backward' gives no gradients of {', '.join(trainable)}; "
                 f"the kernel computes them: define 'reference' alone (autograd)")
    if hasattr(mod, "reference_backward"):
        grads = mod.reference_backward(q.detach(), k.detach(), v.detach(), o.detach(), lse.detach(), do,
                                       meta["scale"], **meta["params"])
    else:
        grads = torch.autograd.grad(o, (q, k, v, *leaves), do, allow_unused=True)
        for name, g, x in zip(trainable, grads[3:], leaves):
            np.save(f"{d}/grad_{name}.npy", (torch.zeros_like(x) if g is None else g).detach().contiguous().numpy())
        grads = grads[:3]
    if not isinstance(grads, (tuple, list)) or len(grads) != 3:
        sys.exit(f"{sys.argv[2]}: 'reference_backward' must return (dq, dk, dv)")
    save("o", o)
    save("lse", lse, torch_layout=False)
    for name, g, x in zip(("dq", "dk", "dv"), grads, (q, k, v)):
        save(name, torch.zeros_like(x) if g is None else g)
    sys.exit(0)
out = mod.reference(q, k, v, meta["scale"], **meta["params"])
lse = None
if isinstance(out, (tuple, list)):
    out, lse = out[0], out[1]
o = out.detach().to(torch.float64).permute(0, 2, 1, 3).contiguous().numpy()
np.save(f"{d}/o.npy", o)
if lse is not None:
    np.save(f"{d}/lse.npy", lse.detach().to(torch.float64).contiguous().numpy())
)PY";

/// The useful part of a Python failure's stderr, as one line: its last line
/// (the exception) and the innermost frame in the user's file, e.g.
/// ": ZeroDivisionError: division by zero (at ref.py:7)".
std::string summarizePythonError(StringRef stderrText, StringRef path) {
  SmallVector<StringRef> lines;
  stderrText.split(lines, '\n', -1, /*KeepEmpty=*/false);
  while (!lines.empty() && lines.back().trim().empty())
    lines.pop_back();
  if (lines.empty())
    return "";
  std::string summary = ": " + lines.back().trim().str();
  // Traceback frames read `  File "<absolute path>", line <n>, in <f>`.
  for (StringRef line : llvm::reverse(lines)) {
    StringRef rest = line.trim();
    if (!rest.consume_front("File \""))
      continue;
    auto [file, tail] = rest.split("\", line ");
    bool same = false;
    if (tail.empty() || llvm::sys::fs::equivalent(file, path, same) || !same)
      continue;
    summary += " (at " + path.str() + ":" +
               tail.take_while(llvm::isDigit).str() + ")";
    break;
  }
  return summary;
}

} // namespace

/// Runs the runner on `p` in a temporary directory, then `readResults`
/// with the directory's file names, before the directory is removed.
static LogicalResult runReferenceProcess(
    const Problem &p, StringRef path, StringRef python, Location loc,
    function_ref<LogicalResult(function_ref<std::string(StringRef)>)>
        readResults) {
  SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("cuir-reference", dir))
    return emitError(loc) << "cannot create a temporary directory: "
                          << ec.message();
  auto file = [&](StringRef name) {
    SmallString<128> f(dir);
    llvm::sys::path::append(f, name);
    return std::string(f);
  };
  llvm::scope_exit cleanup([&] {
    for (StringRef name :
         {"q.npy", "k.npy", "v.npy", "d_o.npy", "o.npy", "lse.npy", "dq.npy",
          "dk.npy", "dv.npy", "meta.json", "runner.py", "stdout", "stderr"})
      llvm::sys::fs::remove(file(name));
    for (const auto &entry : p.trainable)
      llvm::sys::fs::remove(file("grad_" + entry.first + ".npy"));
    llvm::sys::fs::remove(dir);
  });
  if (!writeNpy(file("q.npy"), {p.B, p.Nq, p.Hq, p.d}, p.q) ||
      !writeNpy(file("k.npy"), {p.B, p.Nkv, p.Hkv, p.d}, p.k) ||
      !writeNpy(file("v.npy"), {p.B, p.Nkv, p.Hkv, p.d}, p.v) ||
      (!p.dO.empty() &&
       !writeNpy(file("d_o.npy"), {p.B, p.Nq, p.Hq, p.d}, p.dO)))
    return emitError(loc) << "cannot write the inputs to " << dir;
  {
    std::error_code ec;
    llvm::raw_fd_ostream meta(file("meta.json"), ec);
    llvm::raw_fd_ostream runner(file("runner.py"), ec);
    if (ec)
      return emitError(loc) << "cannot write to " << dir;
    meta << referenceMetaJson(p) << "\n";
    runner << kRunner;
  }
  std::string out = file("stdout"), err = file("stderr");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out),
                                          StringRef(err)};
  std::string errMsg;
  std::string runnerPath = file("runner.py"), dirStr = std::string(dir);
  SmallVector<StringRef> args = {python, runnerPath, dirStr, path};
  int rc = llvm::sys::ExecuteAndWait(python, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/600, 0, &errMsg);
  if (rc != 0) {
    std::string stderrText;
    if (auto buf = llvm::MemoryBuffer::getFile(err))
      stderrText = (*buf)->getBuffer().str();
    return emitError(loc) << "the PyTorch reference '" << path << "' failed ("
                          << (errMsg.empty() ? "exit code " + std::to_string(rc)
                                             : errMsg)
                          << ")" << summarizePythonError(stderrText, path);
  }
  return readResults(file);
}

/// The reference's O and, if it wrote one, LSE.
static FailureOr<Output>
readForwardOutput(const Problem &p, function_ref<std::string(StringRef)> file,
                  Location loc) {
  Output result;
  std::string error;
  auto o = readNpy(file("o.npy"), p.B * p.Nq * p.Hq * p.d, error);
  if (failed(o))
    return emitError(loc) << "the PyTorch reference's output: " << error
                          << " (expected shape [B, Hq, Nq, d] = [" << p.B
                          << ", " << p.Hq << ", " << p.Nq << ", " << p.d
                          << "])";
  result.o = std::move(*o);
  if (llvm::sys::fs::exists(file("lse.npy"))) {
    auto lse = readNpy(file("lse.npy"), p.B * p.Hq * p.Nq, error);
    if (failed(lse))
      return emitError(loc) << "the PyTorch reference's LSE: " << error;
    result.lse = std::move(*lse);
    result.hasLse = true;
  }
  return result;
}

FailureOr<Output> mlir::cuir::interp::pytorchReference(const Problem &p,
                                                       StringRef path,
                                                       StringRef python,
                                                       Location loc) {
  Output result;
  if (failed(runReferenceProcess(p, path, python, loc, [&](auto file) {
        FailureOr<Output> o = readForwardOutput(p, file, loc);
        if (succeeded(o))
          result = std::move(*o);
        return success(succeeded(o));
      })))
    return failure();
  return result;
}

FailureOr<BackwardOutput> mlir::cuir::interp::pytorchBackward(const Problem &p,
                                                              StringRef path,
                                                              StringRef python,
                                                              Location loc) {
  BackwardOutput result;
  auto read = [&](function_ref<std::string(StringRef)> file) -> LogicalResult {
    FailureOr<Output> o = readForwardOutput(p, file, loc);
    if (failed(o))
      return failure();
    result.forward = std::move(*o);
    int64_t nq = p.B * p.Nq * p.Hq * p.d, nkv = p.B * p.Nkv * p.Hkv * p.d;
    std::pair<StringRef, std::vector<double> *> grads[] = {
        {"dq", &result.grads.dq},
        {"dk", &result.grads.dk},
        {"dv", &result.grads.dv}};
    for (auto [name, dst] : grads) {
      std::string error;
      auto g =
          readNpy(file((name + ".npy").str()), name == "dq" ? nq : nkv, error);
      if (failed(g))
        return emitError(loc)
               << "the PyTorch reference's " << name << ": " << error
               << " (expected the shape of "
               << (name == "dq" ? "q" : name.drop_front()) << ")";
      *dst = std::move(*g);
    }
    for (const auto &[name, count] : p.trainable) {
      std::string error;
      auto g = readNpy(file("grad_" + name + ".npy"), count, error);
      if (failed(g))
        return emitError(loc) << "the PyTorch reference's gradient of '" << name
                              << "': " << error;
      result.grads.params[name] = std::move(*g);
    }
    return success();
  };
  if (failed(runReferenceProcess(p, path, python, loc, read)))
    return failure();
  return result;
}
