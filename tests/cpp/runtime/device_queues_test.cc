// The events and workers of device queues that run at once
// (runtime/device_queues.h), without a compiler, so CI's ThreadSanitizer
// stage (names with "Concurrent") checks their ordering.
#include "runtime/device_queues.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace switchyard {
namespace {

// Queue 0 writes plain memory and signals; queue 1 waits and reads it. A
// missing release or acquire is a data race ThreadSanitizer reports.
TEST(DeviceQueuesConcurrent, AnEventOrdersTheWritesBeforeItForItsWaiter) {
  QueueWorkers workers(std::vector<std::vector<int>>(2));
  for (int round = 0; round < 200; ++round) {
    std::vector<int> data(64, 0);
    RunEvents events(1);
    int seen = -1;
    workers.run([&](int queue) {
      if (queue == 0) {
        for (int& value : data) value = round;
        events.signal(0);
      } else if (events.wait(0)) {
        seen = 0;
        for (int value : data) seen += value == round;
      }
    });
    EXPECT_EQ(seen, 64) << "round " << round;
  }
}

// A queue that stops (a failed run) releases the queue waiting for it.
TEST(DeviceQueuesConcurrent, AStoppedRunReleasesEveryWaiter) {
  QueueWorkers workers(std::vector<std::vector<int>>(3));
  RunEvents events(2);
  std::vector<int> waited(3, -1);
  workers.run([&](int queue) {
    if (queue == 0) {
      events.stop();
      return;
    }
    waited[size_t(queue)] = events.wait(queue - 1) ? 1 : 0;
  });
  EXPECT_EQ(waited[1], 0);
  EXPECT_EQ(waited[2], 0);
}

// Runs from several callers at once, each with its own events, all finish:
// every worker takes the runs in the order they were handed out.
TEST(DeviceQueuesConcurrent, RunsFromSeveralCallersNeverWaitForEachOther) {
  QueueWorkers workers(std::vector<std::vector<int>>(2));
  constexpr int kCallers = 4, kRuns = 50;
  std::vector<int> ordered(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRuns; ++r) {
        RunEvents events(2);
        int first = 0, second = 0;
        workers.run([&](int queue) {
          if (queue == 0) {
            first = r + 1;
            events.signal(0);
            if (events.wait(1)) ordered[size_t(c)] += second == first;
          } else if (events.wait(0)) {
            second = first;
            events.signal(1);
          }
        });
      }
    });
  for (std::thread& caller : callers) caller.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(ordered[size_t(c)], kRuns) << "caller " << c;
}

}  // namespace
}  // namespace switchyard
