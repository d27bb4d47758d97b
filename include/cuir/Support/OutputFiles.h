//===- OutputFiles.h - Outputs that appear whole or not at all --*- C++ -*-===//
//
// Every file CuIR writes for the user is staged beside its final path and
// renamed into place only when the whole job succeeded, together with the
// other files of its set. A janitor process removes the staged files of a
// process that dies first (SIGKILL included) and finishes a commit that was
// under way, so an interrupted run leaves neither temporaries nor half a set.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_OUTPUTFILES_H
#define CUIR_SUPPORT_OUTPUTFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::cuir {

/// Starts the janitor of this process's staged outputs. Call once, first
/// thing in main, before any thread starts; without it staged files are
/// still removed on failure and on SIGINT/SIGTERM (through LLVM's signal
/// handlers), but not on SIGKILL.
void startOutputJanitor();

/// Files and directories staged beside their destinations and moved into
/// place together by commit(). Whatever is not committed is removed when the
/// transaction is destroyed.
class OutputTransaction {
public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction &) = delete;
  OutputTransaction &operator=(const OutputTransaction &) = delete;
  ~OutputTransaction();

  /// A new temporary file in the directory of `destination` (created if
  /// needed), renamed onto `destination` by commit().
  llvm::Expected<std::string> stageFile(llvm::StringRef destination);

  /// A staged directory's list of files (paths relative to the destination,
  /// one a line) that the commit removes: those of the set it replaces that
  /// it does not have.
  static constexpr llvm::StringLiteral kRemoveListName = ".cuir-remove";

  /// A new temporary directory in `destinationDir` (created if needed):
  /// every file under it lands at the same relative path under
  /// `destinationDir` on commit(), but for kRemoveListName.
  llvm::Expected<std::string> stageDirectory(llvm::StringRef destinationDir,
                                             llvm::StringRef stem);

  /// The staged directory for `destinationDir`, if one was staged.
  std::optional<std::string>
  getStagedDirectory(llvm::StringRef destinationDir) const;

  /// Moves every staged file into place, with the destination directories
  /// locked against concurrent commits and SIGINT/SIGTERM held back; the
  /// janitor completes the moves if the process dies half-way.
  llvm::Error commit();

  /// Removes everything staged, and the directories created for it.
  void discard();

private:
  struct Staged {
    std::string temp;
    std::string destination;
    bool isDirectory;
  };
  std::vector<Staged> staged;
  /// Directories created for the outputs, the outermost first: removed
  /// again (when empty) unless the transaction commits.
  std::vector<std::string> createdDirs;
};

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_OUTPUTFILES_H
