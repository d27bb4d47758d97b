//===- OutputFiles.cpp - Outputs that appear whole or not at all ----------===//
//
// The janitor is a child forked before any thread starts. The parent tells
// it, over a socket, which temporaries exist and, during a commit, which
// renames are due. When the socket reaches end of file (the parent exited or
// was killed), the janitor finishes an unfinished commit and removes the
// temporaries that are left. A clean exit leaves it nothing to do.
//
//===----------------------------------------------------------------------===//

#include "cuir/Support/OutputFiles.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <csignal>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace mlir::cuir;
using llvm::StringRef;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

//===----------------------------------------------------------------------===//
// The janitor's protocol: a letter, then one or two length-prefixed paths.
//   T <path>          remove <path> (file or directory) if the parent dies
//   E <path>          remove the directory <path> if it is left empty
//   U <path>          forget <path>
//   M <from> <to>     a rename of the commit that is starting
//   C / D             the commit starts / is done
//===----------------------------------------------------------------------===//

int janitorSocket = -1;
std::mutex janitorMutex;

void tellJanitor(char op, llvm::ArrayRef<StringRef> paths = {}) {
  if (janitorSocket < 0)
    return;
  std::string record(1, op);
  for (StringRef p : paths)
    record += std::to_string(p.size()) + ":" + p.str();
  std::lock_guard<std::mutex> lock(janitorMutex);
  for (StringRef rest = record; !rest.empty();) {
    ssize_t n = ::send(janitorSocket, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n <= 0) { // The janitor is gone: carry on without it.
      ::close(janitorSocket);
      janitorSocket = -1;
      return;
    }
    rest = rest.drop_front(n);
  }
}

void removeTree(StringRef p) {
  if (fs::is_directory(p))
    (void)fs::remove_directories(p, /*IgnoreErrors=*/true);
  else
    (void)fs::remove(p);
}

/// Parses one length-prefixed path at the front of `text`.
std::optional<std::string> takePath(StringRef &text) {
  auto [length, rest] = text.split(':');
  size_t n;
  if (length.getAsInteger(10, n) || rest.size() < n)
    return std::nullopt;
  text = rest.drop_front(n);
  return rest.take_front(n).str();
}

/// What the janitor does when its parent is gone.
void cleanUpAfter(StringRef log) {
  std::vector<std::string> tracked, created;
  std::vector<std::pair<std::string, std::string>> moves;
  bool committing = false;
  while (!log.empty()) {
    char op = log.front();
    log = log.drop_front();
    std::optional<std::string> a, b;
    if (op == 'T' || op == 'E' || op == 'U' || op == 'M')
      if (!(a = takePath(log)))
        break;
    if (op == 'M' && !(b = takePath(log)))
      break;
    switch (op) {
    case 'T':
      tracked.push_back(*a);
      break;
    case 'E':
      created.push_back(*a);
      break;
    case 'U':
      llvm::erase(tracked, *a);
      llvm::erase(created, *a);
      break;
    case 'M':
      moves.emplace_back(*a, *b);
      break;
    case 'C':
      committing = true;
      break;
    case 'D':
      committing = false;
      moves.clear();
      break;
    default:
      log = "";
    }
  }
  // A commit that started is finished: every staged file was complete.
  if (committing)
    for (auto &[from, to] : moves)
      if (fs::exists(from))
        (void)fs::rename(from, to);
  for (const std::string &p : tracked)
    removeTree(p);
  for (const std::string &dir : llvm::reverse(created))
    (void)fs::remove(dir); // Only if empty.
}

[[noreturn]] void runJanitor(int socket) {
  // Out of the job's process group, and deaf to the signals aimed at it, so
  // that it outlives what it cleans up after.
  ::setsid();
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
    std::signal(sig, SIG_IGN);
  int devNull = ::open("/dev/null", O_RDWR);
  for (int fd : {0, 1, 2})
    ::dup2(devNull, fd);
  std::string log;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(socket, buffer, sizeof(buffer), 0);
    if (n > 0) {
      log.append(buffer, n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    break;
  }
  cleanUpAfter(log);
  ::_exit(0);
}

std::string makeAbsolute(StringRef p) {
  llvm::SmallString<256> full(p);
  (void)fs::make_absolute(full);
  path::remove_dots(full, /*remove_dot_dot=*/true);
  return std::string(full);
}

/// Creates `dir` and its missing parents, appending those it created, the
/// outermost first, to `created`.
llvm::Error createDirectoryOf(StringRef dir,
                              std::vector<std::string> &created) {
  std::vector<std::string> missing;
  for (StringRef d = dir; !d.empty() && !fs::exists(d);
       d = path::parent_path(d))
    missing.push_back(d.str());
  // The janitor hears of each directory before it exists: no signal,
  // SIGKILL included, can fall between the two.
  for (const std::string &d : llvm::reverse(missing))
    tellJanitor('E', {d});
  if (std::error_code ec = fs::create_directories(dir)) {
    for (const std::string &d : missing)
      tellJanitor('U', {d});
    return llvm::createStringError("cannot create the directory '" + dir +
                                   "': " + ec.message());
  }
  for (const std::string &d : llvm::reverse(missing))
    created.push_back(d);
  return llvm::Error::success();
}

/// Creates a new file or directory at a fresh name made from `model` (its
/// '%' replaced by random characters). As for directories, the janitor hears
/// of the name before it exists.
llvm::Expected<std::string> createTracked(const llvm::Twine &model,
                                          bool isDirectory) {
  for (int attempt = 0;; ++attempt) {
    llvm::SmallString<256> temp;
    fs::createUniquePath(model, temp, /*MakeAbsolute=*/false);
    tellJanitor('T', {temp});
    // Without a janitor, LLVM's handlers remove the file on SIGINT/SIGTERM.
    // With one they are not wanted: they remove it even when the signal is
    // ignored (nohup), and the run then goes on to fail.
    bool onSignal = !isDirectory && janitorSocket < 0;
    if (onSignal)
      llvm::sys::RemoveFileOnSignal(temp);
    std::error_code ec;
    if (isDirectory) {
      ec = fs::create_directory(temp, /*IgnoreExisting=*/false);
    } else {
      int fd;
      ec = fs::openFileForWrite(temp, fd, fs::CD_CreateNew);
      if (!ec)
        ::close(fd);
    }
    if (!ec)
      return std::string(temp);
    if (onSignal)
      llvm::sys::DontRemoveFileOnSignal(temp);
    tellJanitor('U', {temp});
    if (ec != std::errc::file_exists || attempt == 63)
      return llvm::createStringError(ec, "%s", ec.message().c_str());
  }
}

/// Holds an exclusive flock on each directory, and SIGINT/SIGTERM back,
/// while a commit renames.
class CommitGuard {
public:
  explicit CommitGuard(const std::set<std::string> &dirs) {
    for (const std::string &dir : dirs) {
      int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        continue;
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      locks.push_back(fd);
    }
    sigset_t held;
    sigemptyset(&held);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
      sigaddset(&held, sig);
    ::pthread_sigmask(SIG_BLOCK, &held, &previous);
  }
  ~CommitGuard() {
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    for (int fd : locks)
      ::close(fd); // Releases the lock.
  }

private:
  std::vector<int> locks;
  sigset_t previous;
};

/// The files named by the remove list `listPath`, under `destination`.
void appendRemovals(StringRef listPath, StringRef destination,
                    std::vector<std::string> &removals) {
  auto buffer = llvm::MemoryBuffer::getFile(listPath);
  if (!buffer)
    return;
  llvm::SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    llvm::SmallString<256> p(destination);
    path::append(p, line);
    if (fs::is_regular_file(p))
      removals.push_back(std::string(p));
  }
}

} // namespace

void mlir::cuir::startOutputJanitor() {
  if (janitorSocket >= 0)
    return;
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    return;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(sockets[0]);
    runJanitor(sockets[1]);
  }
  ::close(sockets[1]);
  if (pid < 0) {
    ::close(sockets[0]);
    return;
  }
  janitorSocket = sockets[0];
}

//===----------------------------------------------------------------------===//
// OutputTransaction
//===----------------------------------------------------------------------===//

OutputTransaction::~OutputTransaction() { discard(); }

llvm::Expected<std::string>
OutputTransaction::stageFile(StringRef destination) {
  std::string dest = makeAbsolute(destination);
  // A link stays a link: the file it names is replaced.
  if (fs::is_symlink_file(dest)) {
    llvm::SmallString<256> target;
    if (std::error_code ec = fs::real_path(dest, target))
      return llvm::createStringError(
          "cannot write '" + destination + "': it is a link to '" + dest +
          "' that cannot be followed: " + ec.message());
    dest = std::string(target);
  }
  StringRef dir = path::parent_path(dest);
  if (llvm::Error err = createDirectoryOf(dir, createdDirs))
    return std::move(err);
  fs::file_status status;
  if (!fs::status(dest, status) &&
      status.type() != fs::file_type::regular_file)
    return llvm::createStringError(
        "cannot write '" + destination + "': it is not a regular file (" +
        (fs::is_directory(status) ? "a directory" : "a device or pipe") +
        "), which an output never replaces");
  llvm::Expected<std::string> temp =
      createTracked(dir + "/." + path::filename(dest) + ".cuir-tmp-%%%%%%",
                    /*isDirectory=*/false);
  if (!temp)
    return llvm::createStringError("cannot create a temporary file beside '" +
                                   destination +
                                   "': " + llvm::toString(temp.takeError()));
  // The output keeps the permissions of the file it replaces.
  if (fs::exists(status))
    (void)fs::setPermissions(*temp, status.permissions());
  staged.push_back({*temp, dest, /*isDirectory=*/false});
  return *temp;
}

llvm::Expected<std::string>
OutputTransaction::stageDirectory(StringRef destinationDir, StringRef stem) {
  std::string dir = makeAbsolute(destinationDir.empty() ? "." : destinationDir);
  if (std::optional<std::string> existing = getStagedDirectory(dir))
    return *existing;
  if (llvm::Error err = createDirectoryOf(dir, createdDirs))
    return std::move(err);
  llvm::Expected<std::string> temp =
      createTracked(dir + "/.cuir-" + stem + "-%%%%%%", /*isDirectory=*/true);
  if (!temp)
    return llvm::createStringError("cannot create a temporary directory in '" +
                                   destinationDir +
                                   "': " + llvm::toString(temp.takeError()));
  staged.push_back({*temp, dir, /*isDirectory=*/true});
  return *temp;
}

std::optional<std::string>
OutputTransaction::getStagedDirectory(StringRef destinationDir) const {
  std::string dir = makeAbsolute(destinationDir.empty() ? "." : destinationDir);
  for (const Staged &s : staged)
    if (s.isDirectory && s.destination == dir)
      return s.temp;
  return std::nullopt;
}

llvm::Error OutputTransaction::commit() {
  // Every rename of the set, planned before anything moves.
  std::vector<std::pair<std::string, std::string>> moves;
  std::vector<std::string> removals;
  std::set<std::string> dirs;
  for (const Staged &s : staged) {
    if (!s.isDirectory) {
      moves.emplace_back(s.temp, s.destination);
      dirs.insert(path::parent_path(s.destination).str());
      continue;
    }
    dirs.insert(s.destination);
    std::error_code ec;
    for (fs::recursive_directory_iterator it(s.temp, ec), end; it != end && !ec;
         it.increment(ec)) {
      if (it->type() == fs::file_type::directory_file)
        continue;
      StringRef rel = StringRef(it->path()).drop_front(s.temp.size() + 1);
      if (rel == kRemoveListName) {
        appendRemovals(it->path(), s.destination, removals);
        continue;
      }
      llvm::SmallString<256> dest(s.destination);
      path::append(dest, rel);
      fs::file_status status;
      if (!fs::status(dest, status) &&
          status.type() != fs::file_type::regular_file)
        return llvm::createStringError("cannot write '" + dest +
                                       "': it is not a regular file");
      if (llvm::Error err = createDirectoryOf(path::parent_path(dest), createdDirs))
        return err;
      moves.emplace_back(it->path(), std::string(dest));
    }
    if (ec)
      return llvm::createStringError("cannot list '" + s.temp +
                                     "': " + ec.message());
  }

  {
    CommitGuard guard(dirs);
    for (auto &[from, to] : moves)
      tellJanitor('M', {from, to});
    tellJanitor('C');
    for (auto &[from, to] : moves) {
      if (std::error_code ec = fs::rename(from, to)) {
        tellJanitor('D');
        return llvm::createStringError(
            "cannot move the output into place at '" + to +
            "': " + ec.message());
      }
    }
    tellJanitor('D');
    for (const std::string &p : removals)
      (void)fs::remove(p);
  }
  // What is left are the emptied staging directories; the directories
  // created for the outputs stay.
  for (const std::string &dir : createdDirs)
    tellJanitor('U', {dir});
  createdDirs.clear();
  discard();
  return llvm::Error::success();
}

void OutputTransaction::discard() {
  for (const Staged &s : staged) {
    removeTree(s.temp);
    if (!s.isDirectory)
      llvm::sys::DontRemoveFileOnSignal(s.temp);
    tellJanitor('U', {s.temp});
  }
  staged.clear();
  for (const std::string &dir : llvm::reverse(createdDirs)) {
    (void)fs::remove(dir); // Only if empty.
    tellJanitor('U', {dir});
  }
  createdDirs.clear();
}
