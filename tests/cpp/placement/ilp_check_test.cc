// An independent check of the latency objective: the makespan minimisation
// written as a mixed-integer program (big-M constraints over start times,
// the queues' program order and one copy per value and destination, queued
// before its first reader) and solved by GLPK's glpsol, against the latency
// solver's exact optimum (every combination, or Stone's cut on a chain;
// and, with exhaustive search off, branch and bound) and the simulator on
// the program's own answer.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "placement/latency_solver.h"
#include "placement/makespan.h"
#include "placement/stone_cut.h"
#include "schedule_problems.h"
#include "support/test_paths.h"

namespace switchyard {
namespace makespan_test {

// A linear constraint: sum of coefficient * variable >= (or =) rhs.
struct Row {
  std::map<std::string, double> terms;
  double rhs = 0;
  bool equal = false;
  Row& add(const std::string& variable, double coefficient) {
    terms[variable] += coefficient;
    return *this;
  }
};

struct MixedIntegerProgram {
  std::vector<Row> rows;
  std::vector<std::string> binaries;
  std::map<std::string, std::pair<double, double>> bounds;

  // CPLEX LP format, as glpsol --lp reads it; the objective is `makespan`.
  std::string lp_text() const {
    std::ostringstream out;
    out.precision(17);
    out << "Minimize\n obj: makespan\nSubject To\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      out << " r" << i << ":";
      for (const auto& [variable, coefficient] : rows[i].terms)
        if (coefficient != 0) out << (coefficient < 0 ? " - " : " + ") << std::abs(coefficient) << " " << variable;
      out << (rows[i].equal ? " = " : " >= ") << rows[i].rhs << "\n";
    }
    out << "Bounds\n";
    for (const auto& [variable, range] : bounds) out << " " << range.first << " <= " << variable << " <= " << range.second << "\n";
    out << "Binary\n";
    for (const auto& b : binaries) out << " " << b << "\n";
    out << "End\n";
    return out.str();
  }
};

std::string x(int group, int device) { return "x" + std::to_string(group) + "_" + std::to_string(device); }
std::string start(int step) { return "s" + std::to_string(step); }

// The makespan model of makespan.h as a MIP over two or more devices.
MixedIntegerProgram makespan_program(const ScheduleProblem& p, const LatencyGroups& g) {
  const int devices = p.num_devices, steps = p.num_steps();
  std::vector<int> position(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) position[size_t(p.step_at(i))] = i;
  double big = 0;  // every item one after another: no start is later
  for (int s = 0; s < steps; ++s) {
    double slowest = 0;
    for (double t : p.compute[size_t(s)])
      if (t != kCannotRun) slowest = std::max(slowest, t);
    big += slowest;
    for (const ScheduleInput& in : p.inputs[size_t(s)]) big += devices * p.copy[0][1].time(in.bytes) + 1;
  }
  MixedIntegerProgram m;
  for (int group = 0; group < g.num_groups(); ++group) {
    Row one{.rhs = 1, .equal = true};
    for (int d = 0; d < devices; ++d) {
      one.add(x(group, d), 1);
      m.binaries.push_back(x(group, d));
      const int fixed = g.fixed[size_t(group)];
      const bool can = fixed >= 0 ? fixed == d : bool(g.allowed[size_t(group)][size_t(d)]);
      m.bounds[x(group, d)] = {0, can ? 1 : 0};
    }
    m.rows.push_back(one);
  }
  auto on = [&](int step, int d) { return x(g.group_of_step[size_t(step)], d); };
  // finish(step) = start + its time on the device it is on.
  auto add_finish = [&](Row& row, int step, double sign) {
    row.add(start(step), sign);
    for (int d = 0; d < devices; ++d)
      if (p.compute[size_t(step)][size_t(d)] != kCannotRun) row.add(on(step, d), sign * p.compute[size_t(step)][size_t(d)]);
  };
  for (int s = 0; s < steps; ++s) {
    Row last;
    last.add("makespan", 1);
    add_finish(last, s, -1);
    m.rows.push_back(last);
  }
  // Each device's queue in program order: on the same device, a later step
  // starts after an earlier one finishes.
  for (int i = 0; i < steps; ++i)
    for (int j = i + 1; j < steps; ++j)
      for (int d = 0; d < devices; ++d) {
        const int u = p.step_at(i), w = p.step_at(j);
        Row row{.rhs = -2 * big};
        row.add(start(w), 1);
        add_finish(row, u, -1);
        row.add(on(u, d), -big).add(on(w, d), -big);
        m.rows.push_back(row);
      }
  // Copies: per value and destination, queued just before the first reader
  // there (in that reader's input order), after the producer and every
  // earlier step on the destination; that reader starts after it arrives.
  std::map<int, int> producer_of;
  std::map<int, int64_t> bytes_of;
  std::map<int, std::vector<int>> readers_of;  // in program order, each once
  for (int i = 0; i < steps; ++i) {
    const int s = p.step_at(i);
    for (const ScheduleInput& in : p.inputs[size_t(s)]) {
      if (position[size_t(in.producer)] > i) continue;
      auto& readers = readers_of[in.value];
      if (std::find(readers.begin(), readers.end(), s) != readers.end()) continue;
      if (readers.empty()) bytes_of[in.value] = in.bytes;
      readers.push_back(s);
      producer_of[in.value] = in.producer;
    }
  }
  auto copy_start = [](int value, int d) { return "c" + std::to_string(value) + "_" + std::to_string(d); };
  auto first = [](int value, int reader, int d) {
    return "z" + std::to_string(value) + "_" + std::to_string(reader) + "_" + std::to_string(d);
  };
  // copy end = its start + the time from the producer's device.
  auto add_copy_end = [&](Row& row, int value, int d, double sign) {
    row.add(copy_start(value, d), sign);
    for (int e = 0; e < devices; ++e)
      if (e != d) row.add(on(producer_of[value], e), sign * p.copy[size_t(e)][size_t(d)].time(bytes_of[value]));
  };
  for (const auto& [value, readers] : readers_of) {
    const int producer = producer_of[value];
    for (size_t k = 0; k < readers.size(); ++k) {
      const int r = readers[k];
      for (int d = 0; d < devices; ++d) {
        // z = 1 when r is on d, the producer is not, and no earlier reader is.
        const std::string z = first(value, r, d);
        m.binaries.push_back(z);
        m.bounds[z] = {0, 1};
        Row must{.rhs = 0};
        must.add(z, 1).add(on(r, d), -1).add(on(producer, d), 1);
        for (size_t earlier = 0; earlier < k; ++earlier) must.add(on(readers[earlier], d), 1);
        m.rows.push_back(must);
        // While z = 1: the copy starts after the producer and every earlier step on d.
        Row after_producer{.rhs = -big};
        after_producer.add(copy_start(value, d), 1).add(z, -big);
        add_finish(after_producer, producer, -1);
        m.rows.push_back(after_producer);
        for (int i = 0; i < position[size_t(r)]; ++i) {
          const int u = p.step_at(i);
          Row after_queue{.rhs = -2 * big};
          after_queue.add(copy_start(value, d), 1).add(z, -big).add(on(u, d), -big);
          add_finish(after_queue, u, -1);
          m.rows.push_back(after_queue);
        }
        Row reader_waits{.rhs = -big};
        reader_waits.add(start(r), 1).add(z, -big);
        add_copy_end(reader_waits, value, d, -1);
        m.rows.push_back(reader_waits);
      }
    }
  }
  // Copies queued for the same reader go in its input order.
  for (int s = 0; s < steps; ++s) {
    std::vector<int> queued;
    for (const ScheduleInput& in : p.inputs[size_t(s)])
      if (position[size_t(in.producer)] < position[size_t(s)] &&
          std::find(queued.begin(), queued.end(), in.value) == queued.end())
        queued.push_back(in.value);
    for (size_t a = 0; a < queued.size(); ++a)
      for (size_t b = a + 1; b < queued.size(); ++b)
        for (int d = 0; d < devices; ++d) {
          Row in_order{.rhs = -2 * big};
          in_order.add(copy_start(queued[b], d), 1).add(first(queued[a], s, d), -big).add(first(queued[b], s, d), -big);
          add_copy_end(in_order, queued[a], d, -1);
          m.rows.push_back(in_order);
        }
  }
  return m;
}

struct MipSolution {
  double makespan = 0;
  std::map<std::string, double> values;
};

// Runs glpsol; its report names each column, the solution file has full precision.
MipSolution solve_with_glpsol(const MixedIntegerProgram& m, const std::string& dir) {
  const std::string lp = dir + "/model.lp", solution = dir + "/model.sol", report = dir + "/model.txt";
  std::ofstream(lp) << m.lp_text();
  const std::string command = "glpsol --lp " + lp + " -w " + solution + " -o " + report + " > /dev/null";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("glpsol failed on " + lp);
  MipSolution out;
  std::vector<std::string> names;
  std::ifstream report_in(report);
  const std::regex column(R"(^\s*(\d+)\s+([a-z][a-z0-9_]*)\s+\*?\s+\S+)");
  bool in_columns = false;
  for (std::string line; std::getline(report_in, line);) {
    if (line.find("Column name") != std::string::npos) in_columns = true;
    std::smatch match;
    if (in_columns && std::regex_search(line, match, column)) names.push_back(match[2]);
  }
  std::ifstream solution_in(solution);
  for (std::string line; std::getline(solution_in, line);) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "s") {
      std::string mip, status;
      int rows, columns;
      fields >> mip >> rows >> columns >> status >> out.makespan;
      if (status != "o") throw std::runtime_error("glpsol did not find an optimum: status " + status);
    } else if (kind == "j") {
      size_t index;
      double value;
      fields >> index >> value;
      if (index >= 1 && index <= names.size()) out.values[names[index - 1]] = value;
    }
  }
  return out;
}

class LatencyIlpCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v glpsol > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "glpsol is not on PATH (Debian's glpk-utils; scripts/setup.sh installs it): the ILP check cannot run";
    std::filesystem::create_directories(dir);
  }
  const std::string dir = switchyard::testing::binary_dir() + "/ilp_check_scratch";
};

// Without exhaustive search, local search then branch and bound proves the optimum too.
void expect_branch_and_bound_finds(const ScheduleProblem& p, const LatencyGroups& g, double optimum) {
  LatencyPlan plan = minimise_makespan(p, g, {}, {.default_device = 0, .exhaustive_limit = 0});
  ASSERT_TRUE(plan.exact) << plan.method;
  EXPECT_NEAR(plan.makespan, optimum, 1e-3) << plan.method;
}

TEST_F(LatencyIlpCheck, MixedIntegerOptimumEqualsTheSolversOnRandomGraphs) {
  std::mt19937 rng(17);
  int chains = 0;
  for (int trial = 0; trial < 60; ++trial) {
    LatencyGroups g;
    ScheduleProblem p = random_problem(rng, &g);
    LatencyPlan plan = minimise_makespan(p, g, {}, {});
    ASSERT_TRUE(plan.exact);
    MipSolution mip = solve_with_glpsol(makespan_program(p, g), dir);
    expect_branch_and_bound_finds(p, g, mip.makespan);
    // Binaries are integral within glpsol's tolerance (1e-5) times big-M.
    EXPECT_NEAR(mip.makespan, plan.makespan, 1e-3) << "trial " << trial << "\n" << makespan_program(p, g).lp_text();
    // The program's own placement, simulated, is what it claims.
    std::vector<int> device(size_t(p.num_steps()));
    for (int s = 0; s < p.num_steps(); ++s) device[size_t(s)] = mip.values[x(g.group_of_step[size_t(s)], 1)] > 0.5;
    EXPECT_NEAR(simulate_makespan(p, device), mip.makespan, 1e-3) << "trial " << trial;
    chains += runs_serially(p);
  }
  std::printf("ILP check: 60 random graphs (%d of them chains solved by Stone's cut)\n", chains);
}

// Steps tied into groups (as place nodes tie operators) and a device that
// cannot run some of them.
TEST_F(LatencyIlpCheck, GroupsAndUnsupportedDevicesAgree) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 20; ++trial) {
    LatencyGroups ignored;
    ScheduleProblem p = random_problem(rng, &ignored);
    LatencyGroups g;
    const int groups = std::max(1, p.num_steps() / 2);
    g.fixed.assign(size_t(groups), -1);
    g.allowed.assign(size_t(groups), {1, 1});
    for (int s = 0; s < p.num_steps(); ++s) g.group_of_step.push_back(int(rng() % unsigned(groups)));
    const int unsupported = int(rng() % unsigned(p.num_steps()));
    p.compute[size_t(unsupported)][1] = kCannotRun;
    g.allowed[size_t(g.group_of_step[size_t(unsupported)])][1] = 0;
    LatencyPlan plan = minimise_makespan(p, g, {}, {});
    ASSERT_TRUE(plan.exact);
    MipSolution mip = solve_with_glpsol(makespan_program(p, g), dir);
    expect_branch_and_bound_finds(p, g, mip.makespan);
    EXPECT_NEAR(mip.makespan, plan.makespan, 1e-3) << "trial " << trial;
    EXPECT_EQ(plan.step_device[size_t(unsupported)], 0);
  }
}

// Three devices (brute force in the other tests takes two): up to 7 steps,
// so every combination is tried, against the MIP over three devices.
TEST_F(LatencyIlpCheck, ThreeDevicesAgree) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> time(0.1, 5);
  for (int trial = 0; trial < 15; ++trial) {
    const int steps = 3 + int(rng() % 5);
    ScheduleProblem p = problem(3, std::vector<double>(size_t(steps), 0), 0.05 * double(rng() % 10), 0.001);
    for (auto& on_device : p.compute)
      for (double& t : on_device) t = time(rng);
    for (int s = 1; s < steps; ++s) read(p, s, int(rng() % unsigned(s)), 1000);
    LatencyGroups g = free_groups(p);
    g.fixed[0] = int(rng() % 3);
    LatencyPlan plan = minimise_makespan(p, g, {}, {});
    ASSERT_TRUE(plan.exact);
    MipSolution mip = solve_with_glpsol(makespan_program(p, g), dir);
    expect_branch_and_bound_finds(p, g, mip.makespan);
    EXPECT_NEAR(mip.makespan, plan.makespan, 1e-3) << "trial " << trial;
  }
}

}  // namespace makespan_test
}  // namespace switchyard
