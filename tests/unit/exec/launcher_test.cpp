// How zeppelin-bench learns its rank, world and place on the node from each launcher's variables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/common/error.hpp"
#include "core/exec/launch/launcher.hpp"

namespace zb {
namespace {

using Env = std::map<std::string, std::string>;

Launch detect(const Env& env) {
  return detect_launch([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string refusal(const Env& env) {
  try {
    (void)detect(env);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(Launcher, NoLauncherIsOneProcess) {
  const Launch l = detect({});
  EXPECT_FALSE(l.multi_process());
  EXPECT_EQ(l.rank, 0);
  EXPECT_EQ(l.world_size, 1);
  EXPECT_EQ(describe(l), "a single process (no launcher)");
}

TEST(Launcher, OpenMpiGivesRankWorldAndLocalRank) {
  const Launch l = detect({{"OMPI_COMM_WORLD_SIZE", "16"},
                           {"OMPI_COMM_WORLD_RANK", "11"},
                           {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                           {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}});
  EXPECT_EQ(l.launcher, "mpirun (Open MPI)");
  EXPECT_EQ(l.rank, 11);
  EXPECT_EQ(l.world_size, 16);
  EXPECT_EQ(l.local_rank, 3);
  EXPECT_EQ(l.local_size, 8);
  EXPECT_EQ(describe(l), "rank 11 of 16 (local 3 of 8) under mpirun (Open MPI)");
}

TEST(Launcher, SrunStepGivesLocalSizeFromTheCompressedTaskList) {
  // Three nodes with 4, 4 and 3 tasks; this task is the second of the third node.
  const Launch l = detect({{"SLURM_STEP_NUM_TASKS", "11"},
                           {"SLURM_PROCID", "9"},
                           {"SLURM_LOCALID", "1"},
                           {"SLURM_NODEID", "2"},
                           {"SLURM_STEP_TASKS_PER_NODE", "4(x2),3"},
                           {"SLURM_NTASKS", "64"}});
  EXPECT_EQ(l.launcher, "srun (Slurm)");
  EXPECT_EQ(l.rank, 9);
  EXPECT_EQ(l.world_size, 11);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_size, 3);
}

TEST(Launcher, AnSbatchShellIsNotAWorld) {
  // sbatch's own shell: SLURM_PROCID=0 and the allocation's task count, but no job step.
  const Launch l = detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "64"}, {"SLURM_LOCALID", "0"}});
  EXPECT_FALSE(l.multi_process());
  EXPECT_EQ(l.world_size, 1);
}

TEST(Launcher, PmixWithASize) {
  const Launch l =
      detect({{"PMIX_RANK", "5"}, {"PMIX_SIZE", "8"}, {"PMIX_LOCAL_RANK", "1"}, {"PMIX_LOCAL_SIZE", "4"}});
  EXPECT_EQ(l.launcher, "PMIx");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.local_size, 4);
}

TEST(Launcher, HydraPmi) {
  const Launch l =
      detect({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "2"}});
  EXPECT_EQ(l.launcher, "PMI");
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.world_size, 4);
  EXPECT_EQ(l.local_size, 2);
}

TEST(Launcher, OpenMpiWinsOverSlurmWhenMpirunRunsInsideAnAllocation) {
  const Launch l = detect({{"OMPI_COMM_WORLD_SIZE", "2"},
                           {"OMPI_COMM_WORLD_RANK", "1"},
                           {"SLURM_STEP_NUM_TASKS", "1"},
                           {"SLURM_PROCID", "0"}});
  EXPECT_EQ(l.launcher, "mpirun (Open MPI)");
  EXPECT_EQ(l.world_size, 2);
}

TEST(Launcher, RefusesHalfConfiguredOrContradictoryVariables) {
  EXPECT_THAT(refusal({{"OMPI_COMM_WORLD_SIZE", "four"}}),
              testing::HasSubstr("OMPI_COMM_WORLD_SIZE=\"four\""));
  EXPECT_THAT(refusal({{"OMPI_COMM_WORLD_SIZE", "-2"}}), testing::HasSubstr("not a non-negative integer"));
  EXPECT_THAT(refusal({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "4"}}),
              testing::HasSubstr("outside a world of 4"));
  EXPECT_THAT(refusal({{"OMPI_COMM_WORLD_SIZE", "4"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}),
              testing::HasSubstr("local rank 2 of 2"));
  EXPECT_THAT(
      refusal({{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x"}}),
      testing::HasSubstr("not a Slurm task count list"));
  EXPECT_THAT(refusal({{"SLURM_STEP_NUM_TASKS", "8"},
                       {"SLURM_PROCID", "1"},
                       {"SLURM_NODEID", "3"},
                       {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}}),
              testing::HasSubstr("SLURM_NODEID"));
  EXPECT_THAT(refusal({{"PMI_SIZE", "0"}}), testing::HasSubstr("0 processes"));
}

}  // namespace
}  // namespace zb
