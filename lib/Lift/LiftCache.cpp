//===- LiftCache.cpp - Content-addressed cache of verified lifts ----------===//

#include "cuir/Lift/LiftCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace mlir::cuir::lift;
using llvm::StringRef;
using json = nlohmann::json;

StringRef mlir::cuir::lift::getLiftCheckName(LiftCheck check) {
  switch (check) {
  case LiftCheck::None:
    return "none";
  case LiftCheck::Semantic:
    return "semantic";
  case LiftCheck::Project:
    return "project";
  }
  llvm_unreachable("unknown lift check");
}

std::optional<LiftCheck> mlir::cuir::lift::parseLiftCheck(StringRef name) {
  for (LiftCheck check :
       {LiftCheck::None, LiftCheck::Semantic, LiftCheck::Project})
    if (name == getLiftCheckName(check))
      return check;
  return std::nullopt;
}

std::string mlir::cuir::lift::computeContentHash(StringRef text) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)),
                     /*LowerCase=*/true);
}

std::string mlir::cuir::lift::computeLiftKey(unsigned dialectVersion,
                                             StringRef sourceText) {
  llvm::SHA256 hash;
  hash.update("cuir-lift-v" + std::to_string(dialectVersion) + "\n");
  hash.update(sourceText);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

std::string mlir::cuir::lift::computeTransferKey(unsigned dialectVersion,
                                                 StringRef referenceText,
                                                 StringRef sourceCuIR) {
  llvm::SHA256 hash;
  // The reference's size separates it from the CuIR that follows.
  hash.update("cuir-transfer-v" + std::to_string(dialectVersion) + "\n" +
              std::to_string(referenceText.size()) + "\n");
  hash.update(referenceText);
  hash.update(sourceCuIR);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

static bool isKey(StringRef key) {
  return key.size() == 64 && llvm::all_of(key, [](char c) {
           return llvm::isDigit(c) || (c >= 'a' && c <= 'f');
         });
}

llvm::Expected<LiftCacheIndex> LiftCacheIndex::load(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError("cannot read the lift-cache index '" + path +
                                   "': " + buffer.getError().message());
  StringRef text = (*buffer)->getBuffer();
  json root = json::parse(text.begin(), text.end(), nullptr, false);
  auto bad = [&](const llvm::Twine &what) {
    return llvm::createStringError("lift-cache index '" + path + "': " + what);
  };
  if (root.is_discarded() || !root.is_object())
    return bad("not a JSON object");
  auto version = root.find("version");
  if (version == root.end() || !version->is_number_integer() ||
      version->get<int64_t>() != 1)
    return bad("\"version\" must be 1");
  auto entries = root.find("entries");
  if (entries == root.end() || !entries->is_array())
    return bad("no \"entries\" list");

  LiftCacheIndex index;
  index.path = path.str();
  StringRef dir = llvm::sys::path::parent_path(path);
  auto resolve = [&](StringRef relative) {
    llvm::SmallString<256> full(relative);
    if (!llvm::sys::path::is_absolute(full)) {
      full = dir;
      llvm::sys::path::append(full, relative);
    }
    return std::string(full);
  };
  unsigned i = 0;
  for (const json &entry : *entries) {
    auto field = [&](const char *name) -> std::optional<std::string> {
      if (!entry.is_object())
        return std::nullopt;
      auto it = entry.find(name);
      if (it == entry.end() || !it->is_string())
        return std::nullopt;
      return it->get<std::string>();
    };
    std::optional<std::string> key = field("key"), source = field("source"),
                               cuir = field("cuir");
    if (!key || !source || !cuir)
      return bad("entry " + llvm::Twine(i) +
                 " needs the strings \"key\", \"source\" and \"cuir\"");
    if (!isKey(*key))
      return bad("entry " + llvm::Twine(i) + " (" + *source + "): key '" +
                 *key + "' is not 64 lowercase hex digits");
    if (index.lookup(*key))
      return bad("entry " + llvm::Twine(i) + " (" + *source + "): key " + *key +
                 " is listed twice");
    index.entries.push_back({*key, resolve(*source), resolve(*cuir)});
    ++i;
  }
  return index;
}

const BundledLift *LiftCacheIndex::lookup(StringRef key) const {
  for (const BundledLift &entry : entries)
    if (entry.key == key)
      return &entry;
  return nullptr;
}

StringRef mlir::cuir::lift::getBundledIndexPath() {
  return CUIR_BUNDLED_LIFT_CACHE_INDEX;
}

std::string mlir::cuir::lift::getDefaultUserCacheDir() {
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("CUIR_LIFT_CACHE"))
    if (!dir->empty())
      return *dir;
  llvm::SmallString<256> dir;
  if (!llvm::sys::path::cache_directory(dir) ||
      !llvm::sys::path::is_absolute(dir)) {
    // An empty or relative XDG_CACHE_HOME is to be ignored (XDG base
    // directory spec), not taken relative to the working directory.
    dir.clear();
    if (!llvm::sys::path::home_directory(dir))
      return "";
    llvm::sys::path::append(dir, ".cache");
  }
  llvm::sys::path::append(dir, "cuir", "lift");
  return std::string(dir);
}

std::string mlir::cuir::lift::getUserCachePath(StringRef dir, StringRef key) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".mlir");
  return std::string(path);
}

std::string mlir::cuir::lift::getUserVariantCachePath(StringRef dir,
                                                      StringRef key) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".variant.mlir");
  return std::string(path);
}

llvm::Error mlir::cuir::lift::writeFileAtomically(StringRef path,
                                                  StringRef contents) {
  StringRef dir = llvm::sys::path::parent_path(path);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return llvm::createStringError("cannot create the directory '" + dir +
                                     "': " + ec.message());
  // writeToOutput writes a temporary file next to `path` and renames it.
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << contents;
    return llvm::Error::success();
  });
}
