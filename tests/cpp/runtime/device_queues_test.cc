// The events and workers of device queues that run at once
// (runtime/device_queues.h), without a compiler, so CI's ThreadSanitizer
// stage (names with "Concurrent") checks their ordering.
#include "runtime/device_queues.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace switchyard {
namespace device_queues_test {

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

// Requests handed out with submit (run_async's path) pipeline: queue 1's
// step of request k waits until queue 0 has begun request k+1, which only
// ends if queue 0 takes request k+1 while queue 1 still works on request k.
TEST(DeviceQueuesConcurrent, SubmittedRequestsPipelineAcrossTheQueues) {
  QueueWorkers workers(std::vector<std::vector<int>>(2));
  constexpr int kRequests = 20;
  std::vector<int> stage1(kRequests, 0), stage2(kRequests, 0);
  std::vector<std::unique_ptr<RunEvents>> events;
  for (int r = 0; r < kRequests; ++r) events.push_back(std::make_unique<RunEvents>(2));
  std::mutex done_mutex;
  std::condition_variable all_done;
  int done = 0;
  for (int r = 0; r < kRequests; ++r)
    workers.submit([&, r](int queue) {
      RunEvents& own = *events[size_t(r)];
      if (queue == 0) {
        stage1[size_t(r)] = r + 1;
        own.signal(0);  // stage 1 of r done
        own.signal(1);  // and request r is under way on queue 0
      } else if (own.wait(0) && (r + 1 == kRequests || events[size_t(r + 1)]->wait(1))) {
        stage2[size_t(r)] = stage1[size_t(r)] * 2;
      }
      std::lock_guard<std::mutex> lock(done_mutex);
      if (++done == 2 * kRequests) all_done.notify_one();
    });
  std::unique_lock<std::mutex> lock(done_mutex);
  ASSERT_TRUE(all_done.wait_for(lock, std::chrono::seconds(60), [&] { return done == 2 * kRequests; }))
      << "queue 1 waited for a request queue 0 never began";
  for (int r = 0; r < kRequests; ++r) EXPECT_EQ(stage2[size_t(r)], 2 * (r + 1)) << "request " << r;
}

}  // namespace device_queues_test
}  // namespace switchyard
