// The interrupt handler does only async-signal-safe work: it records the
// signal and sends SIGTERM to every registered child's process group. The
// compile itself notices at its next check and unwinds through its
// destructors, which remove what it had written.
#include "toolchain/interrupt.h"

#include <signal.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "support/error.h"

namespace switchyard {

namespace {

// More slots than compile jobs ever run at once; a child that finds no free
// slot is stopped only by its own process group's signals.
constexpr int kChildSlots = 256;
std::atomic<pid_t> g_children[kChildSlots];
std::atomic<int> g_signal{0};
std::once_flag g_installed;

void stop_children() {
  for (std::atomic<pid_t>& slot : g_children)
    if (pid_t group = slot.load(); group > 0) kill(-group, SIGTERM);
}

void on_interrupt(int signo) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signo);
  stop_children();
}

}  // namespace

void install_interrupt_handlers() {
  std::call_once(g_installed, [] {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = on_interrupt;
    action.sa_flags = SA_RESTART;  // other code never sees EINTR; children's deaths end the waits
    sigemptyset(&action.sa_mask);
    for (int signo : {SIGINT, SIGTERM, SIGHUP}) sigaction(signo, &action, nullptr);
  });
}

int interrupting_signal() { return g_signal.load(); }

std::string interruption_message(const std::string& activity, const std::string& consequence) {
  int signo = g_signal.load();
  const char* name = sigabbrev_np(signo);
  std::string signal = name ? "SIG" + std::string(name) : "signal " + std::to_string(signo);
  return activity + " interrupted by " + signal + ": " + consequence;
}

void throw_if_interrupted() {
  if (g_signal.load()) throw Error(ErrorKind::kBackend, interruption_message());
}

void register_child(pid_t process_group) {
  for (std::atomic<pid_t>& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, process_group)) break;
  }
  if (g_signal.load()) kill(-process_group, SIGTERM);  // the interrupt came before the slot was filled
}

void unregister_child(pid_t process_group) {
  for (std::atomic<pid_t>& slot : g_children) {
    pid_t mine = process_group;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace switchyard
