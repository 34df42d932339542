#!/usr/bin/env bash
# The test suite, against the real LLVM 22 (default build) and LLVM 19 (feature llvm19).
# Needs scripts/setup.sh done; nothing beside the checkout (tests/data/bugs holds the bug folders).
# Every test binary of both builds runs even when one fails, so one run shows all that broke.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
# Each step says its wall and CPU time (user + system, its children's included) as it ends:
# CI is CPU-bound (1.8 to 1.9 of the two cores busy in every step), so the CPU time a step
# takes is what a change to the tests or the build saves or adds.
step() {
  local TIMEFORMAT="== $1: %R s wall, %U s user, %S s system"
  shift
  time "$@"
}
# The integration tests wait on what they start (opt, clang, cvise, chromium, timeouts) for
# part of their time: a third test thread kept both cores busy (LLVM 22: 210 -> 191 s, CPU
# 1.77 -> 1.89 cores). Since their reductions and time-bound steps run one job, not two
# (tests/it/bug_folders.rs), a test holds less than a core; a fourth thread is for what three
# leave idle (the LLVM 22 suite alone: 156 against 160 s, within noise; nothing slower or
# flaky with it). The unit tests keep both busy already, and some of them time their
# children to the second: they keep one thread per core.
it_threads=(--test-threads 4)
# Everything the tests need first, in one build per LLVM (the library and binaries too, when
# set-up has not built them, as in CI): cargo compiles the unit-test harness beside the
# library and links one binary while compiling another. The benches are not run here (they
# time things), but they must still compile; built here, they fill cores the harness leaves.
step "build, LLVM 22" cargo test --release --locked --no-run --lib --test it --benches || status=1
step "unit tests, LLVM 22" cargo test --release --locked --no-fail-fast --lib || status=1
step "integration tests, LLVM 22" cargo test --release --locked --no-fail-fast --test it -- "${it_threads[@]}" || status=1
# The LLVM 19 run leaves out the tests whose subject does not change with the linked LLVM
# (each still runs once, above); about a third of its test time went to running them again:
# - C-source mutation (Hermes, DiWi's C rules and their ingredients, `ctos emi`): under cargo
#   both builds mutate with libclang 22 (LIBCLANG_PATH in .cargo/config.toml) and differ only
#   in the clang that compiles the mutants;
# - csmith's programs and their screening with UBSan and ASan (program::tests), and the
#   C integer model checked against clang: the same code, only the clang differs;
# - what links no LLVM at all: doc2vec's training, the selection of pairs, and the DWARF of
#   the LLVM 23 library the agent tests use;
# - cvise's reduction of a C program: cvise is the same in both, and its test of a candidate
#   is the one llvm-reduce uses, which the LLVM 19 run reduces with (bug_folders::);
# - what happens before or beside the optimizer: option checks, an --opt that never answers,
#   the campaign folder's bookkeeping (shards, sync, merge, resume).
# It keeps every test of the optimizer's runs and outcomes, reductions, localization, the
# catalog, coverage and the agent.
c_source=(--skip mutate::hermes:: --skip mutate::witness::rules:: --skip mutate::witness::ingredients::
  --skip fuzz::ctos_emi_writes_the_same_variants --skip fuzz::a_hermes_campaign_tests_emi_variants
  --skip fuzz::reduce_programs_shrinks_the_c_program_with_cvise --skip program::tests:: --skip mutate::cint_clang_tests::)
no_llvm=(--skip embed::doc2vec_tests:: --skip select::tests:: --skip coverage::dwarf::)
bookkeeping=(--skip bad_input::every_command_answers_bad_input --skip bad_input::an_opt_that_never_answers
  --skip campaign_shards:: --skip fuzz::two_shards_merged --skip fuzz::a_resumed_campaign --skip fuzz::an_interrupted_campaign)
llvm19=(--release --locked --no-fail-fast --no-default-features --features llvm19 --target-dir target/llvm19)
skipped=("${c_source[@]}" "${no_llvm[@]}" "${bookkeeping[@]}")
step "build, LLVM 19" cargo test "${llvm19[@]}" --no-run || status=1
step "unit tests, LLVM 19" cargo test "${llvm19[@]}" --lib -- "${skipped[@]}" || status=1
step "integration tests, LLVM 19" cargo test "${llvm19[@]}" --test it -- "${skipped[@]}" "${it_threads[@]}" || status=1
exit $status
