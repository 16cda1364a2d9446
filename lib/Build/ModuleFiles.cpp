//===- ModuleFiles.cpp - a module's files, all or none --------------------===//
#include "ModuleFiles.h"

#include <fmt/format.h>

#include <cerrno>
#include <atomic>
#include <csignal>
#include <cstring>
#include <fstream>
#include <signal.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nxc::build {
namespace {

constexpr const char *kPrefix = ".nxc-tmp-";

/// The temporaries of this process, for the signal handler (which may only
/// call async-signal-safe functions: unlink, signal, raise).
constexpr int kMaxTemporaries = 64;
char pending[kMaxTemporaries][4096];
volatile sig_atomic_t pendingCount = 0;

/// Who owns the temporaries: nobody (0), commit() renaming them into place
/// (1), or the signal handler removing them (2). A signal during the renames
/// waits for them to finish (a partial set would be left otherwise), then
/// ends the process; commit() does not start while the handler removes.
std::atomic<int> owner{0};
volatile sig_atomic_t deferredSignal = 0;

extern "C" void removeTemporariesAndDie(int sig) {
  int idle = 0;
  if (!owner.compare_exchange_strong(idle, 2)) {
    if (idle == 1) deferredSignal = sig; // commit() raises it when the set is complete
    return;
  }
  for (int i = 0; i < pendingCount; ++i)
    if (pending[i][0]) unlink(pending[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void installHandlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, removeTemporariesAndDie);
}

void forget(const std::string &path) {
  for (int i = 0; i < pendingCount; ++i)
    if (path == pending[i]) pending[i][0] = 0;
}

/// Whether `name` is a temporary of a process that no longer runs.
bool stale(const std::string &name) {
  if (name.rfind(kPrefix, 0) != 0) return false;
  size_t start = std::strlen(kPrefix), end = name.find('-', start);
  if (end == std::string::npos || end == start) return false;
  long pid = 0;
  for (size_t i = start; i < end; ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 100000000) return false;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid != getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

} // namespace

ModuleFiles::ModuleFiles(fs::path dir) : dir_(std::move(dir)) {
  installHandlers();
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (stale(name)) fs::remove(it->path(), ec);
  }
}

ModuleFiles::~ModuleFiles() {
  std::error_code ec;
  for (auto &[tmp, final] : files_) {
    fs::remove(tmp, ec);
    forget(tmp);
  }
}

std::string ModuleFiles::temporary(const std::string &name) {
  std::string tmp = (dir_ / fmt::format(FMT_STRING("{}{}-{}"), kPrefix, getpid(), name)).string();
  files_.push_back({tmp, (dir_ / name).string()});
  if (pendingCount < kMaxTemporaries && tmp.size() < sizeof pending[0]) {
    std::memcpy(pending[pendingCount], tmp.c_str(), tmp.size() + 1);
    pendingCount = pendingCount + 1;
  }
  return tmp;
}

Status ModuleFiles::write(const std::string &name, const std::string &bytes) {
  std::string tmp = temporary(name);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (out) out.write(bytes.data(), (std::streamsize)bytes.size());
  if (out) out.close();
  if (!out)
    return error(Loc{}, fmt::format(FMT_STRING("cannot write '{}': {}"), (dir_ / name).string(), std::strerror(errno)));
  return okStatus();
}

void ModuleFiles::scratch(const std::string &path) {
  files_.push_back({path, ""});
  if (pendingCount < kMaxTemporaries && path.size() < sizeof pending[0]) {
    std::memcpy(pending[pendingCount], path.c_str(), path.size() + 1);
    pendingCount = pendingCount + 1;
  }
}

Result<std::string> ModuleFiles::writeScratch(const std::string &name, const std::string &bytes) {
  NXC_CHECK(write(name, bytes));
  files_.back().second.clear(); // removed, never renamed
  return files_.back().first;
}

Status ModuleFiles::commit() {
  int idle = 0;
  while (!owner.compare_exchange_strong(idle, 1)) { // a signal handler is removing the temporaries: it ends us
    idle = 0;
    pause();
  }
  Status status = okStatus();
  for (auto &[tmp, final] : files_) {
    std::error_code ec;
    if (final.empty()) {
      fs::remove(tmp, ec);
      forget(tmp);
      continue;
    }
    fs::rename(tmp, final, ec);
    if (ec) {
      status = error(Loc{}, fmt::format(FMT_STRING("cannot write '{}': {}"), final, ec.message()));
      break;
    }
    forget(tmp);
  }
  if (status) files_.clear();
  owner.store(0);
  if (int sig = deferredSignal) { // arrived during the renames: now the set is whole
    deferredSignal = 0;
    std::raise(sig);
  }
  return status;
}

} // namespace nxc::build
