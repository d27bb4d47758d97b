//===- LiftCache.h - Content-addressed cache of verified lifts --*- C++ -*-===//
//
// A verified lift is stored under a key that hashes the dialect version and
// the CUDA source text:
//
//   key = hex(SHA-256("cuir-lift-v" + <CuIRDialect::kVersion> + "\n" + text))
//
// Two places hold lifts:
//   - the bundled index (kernels/lift-cache.json) of the kernels that ship
//     with CuIR: {"version": 1, "entries": [{"key": ..., "source": ...,
//     "cuir": ...}]}, paths relative to the index's directory;
//   - the user cache: <dir>/<key>.mlir, written atomically after every
//     accepted LLM lift (CUIR_LIFT_CACHE, default ~/.cache/cuir/lift). The
//     entry records the check it passed (module attribute cuir.lift_check);
//     an entry is never replaced by a lift that passed a weaker check.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIFT_LIFTCACHE_H
#define CUIR_LIFT_LIFTCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::cuir::lift {

/// How far a lift was checked, weakest first.
enum class LiftCheck {
  /// Parsed, verified, its locations checked: nothing says what it computes
  /// (`check=none`, for kernels that are not attention kernels).
  None,
  /// Also run by the interpreter against standard attention (`check=semantic`).
  Semantic,
  /// A lift the project bundles and checks (kernels/lift-cache.json).
  Project,
};

/// "none", "semantic", "project".
llvm::StringRef getLiftCheckName(LiftCheck check);

/// The check named `name`, or none if it names none.
std::optional<LiftCheck> parseLiftCheck(llvm::StringRef name);

/// Whether a lift that passed `candidate` may replace a cache entry that
/// passed `existing`: never one that passed a stronger check.
inline bool mayReplace(LiftCheck existing, LiftCheck candidate) {
  return candidate >= existing;
}

/// hex(SHA-256(text)): names the exact Source CuIR file a lift used.
std::string computeContentHash(llvm::StringRef text);

/// The cache key of a source text (64 lowercase hex digits).
std::string computeLiftKey(unsigned dialectVersion, llvm::StringRef sourceText);

/// The cache key of a variant that an LLM wrote for a PyTorch reference and
/// a Source CuIR module (its text without locations):
///   hex(SHA-256("cuir-transfer-v" + <version> + "\n" + <size of reference>
///               + "\n" + reference + sourceCuIR))
std::string computeTransferKey(unsigned dialectVersion,
                               llvm::StringRef referenceText,
                               llvm::StringRef sourceCuIR);

/// One lift of the bundled index, with paths resolved against the index's
/// directory.
struct BundledLift {
  std::string key;
  std::string sourcePath;
  std::string cuirPath;
};

class LiftCacheIndex {
public:
  /// Loads and checks an index file: its version, and for every entry a
  /// 64-hex-digit key and the two paths. Errors name the file and the entry.
  static llvm::Expected<LiftCacheIndex> load(llvm::StringRef path);

  /// The entry for `key`, or null.
  const BundledLift *lookup(llvm::StringRef key) const;

  llvm::ArrayRef<BundledLift> getEntries() const { return entries; }
  llvm::StringRef getPath() const { return path; }

private:
  std::string path;
  std::vector<BundledLift> entries;
};

/// The bundled index of this build (kernels/lift-cache.json of the source
/// tree CuIR was configured from).
llvm::StringRef getBundledIndexPath();

/// The user cache directory: `CUIR_LIFT_CACHE` if set, else
/// $XDG_CACHE_HOME/cuir/lift or ~/.cache/cuir/lift; empty if there is no home
/// directory.
std::string getDefaultUserCacheDir();

/// `<dir>/<key>.mlir`.
std::string getUserCachePath(llvm::StringRef dir, llvm::StringRef key);

/// `<dir>/<key>.variant.mlir`: a variant accepted by `--transfer=llm:...`,
/// itself a variant file that `--transfer=<file>` reads.
std::string getUserVariantCachePath(llvm::StringRef dir, llvm::StringRef key);

/// Writes `contents` to `path` atomically (a temporary file in the same
/// directory, then a rename), creating the directory if needed. A reader
/// never sees a partial file.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef contents);

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_LIFTCACHE_H
