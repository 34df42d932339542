//! Several external processes at once without threads: the fuzzing loop forks children
//! later and must stay single-threaded, so children are polled (`try_wait` and a short
//! sleep) instead of being waited for in threads.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// How one process step ended.
pub(crate) enum Ended {
    Exited(ExitStatus),
    /// Killed at its time limit.
    TimedOut,
    /// Could not be started or waited for.
    Error(io::Error),
}

pub(crate) enum Step<T> {
    /// Run this process, killing it after the duration. Boxed: a `Command` is large.
    Run(Box<Command>, Duration),
    Done(T),
}

/// A task made of process steps, each chosen from how the previous one ended.
pub(crate) trait Job {
    type Output;
    fn start(&mut self) -> Step<Self::Output>;
    /// `elapsed` is the wall time of the step that just ended.
    fn next(&mut self, ended: Ended, elapsed: Duration) -> Step<Self::Output>;
}

/// How often running children are polled: short against csmith and clang run times, and
/// the error it adds to measured run times stays around a millisecond.
const POLL: Duration = Duration::from_millis(1);

/// A child in its own process group, so a timeout also kills what it spawned (clang's cc1
/// and linker). Dropping it unreaped kills the group: no orphans if a job panics.
struct Running {
    job: usize,
    child: Child,
    started: Instant,
    limit: Duration,
}

impl Running {
    fn kill(&mut self) {
        // The group id is the child's pid; it is not reaped yet, so the id cannot be reused.
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }

    /// `None` while it still runs within its limit.
    fn poll(&mut self) -> Option<Ended> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(Ended::Exited(status)),
            Ok(None) if self.started.elapsed() >= self.limit => {
                self.kill();
                Some(Ended::TimedOut)
            }
            Ok(None) => None,
            Err(e) => {
                self.kill();
                Some(Ended::Error(e))
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// Run every job to its end, at most `parallel` processes at a time; outputs in input order.
/// A job is dropped as soon as it is done, and its scratch files with it.
pub(crate) fn run_all<J: Job>(jobs: Vec<J>, parallel: usize) -> Vec<J::Output> {
    let parallel = parallel.max(1);
    let mut jobs: Vec<Option<J>> = jobs.into_iter().map(Some).collect();
    let mut outputs: Vec<Option<J::Output>> = jobs.iter().map(|_| None).collect();
    let mut running: Vec<Running> = Vec::new();
    let mut unstarted = 0..jobs.len();
    loop {
        while running.len() < parallel {
            let Some(i) = unstarted.next() else { break };
            let step = jobs[i].as_mut().expect("not started yet").start();
            advance(&mut jobs[i], i, step, &mut running, &mut outputs);
        }
        if running.is_empty() {
            break;
        }
        let mut progressed = false;
        let mut k = 0;
        while k < running.len() {
            match running[k].poll() {
                Some(ended) => {
                    let done = running.swap_remove(k);
                    let step = jobs[done.job].as_mut().expect("running").next(ended, done.started.elapsed());
                    advance(&mut jobs[done.job], done.job, step, &mut running, &mut outputs);
                    progressed = true;
                }
                None => k += 1,
            }
        }
        if !progressed {
            std::thread::sleep(POLL);
        }
    }
    outputs.into_iter().map(|o| o.expect("every job ends with Done")).collect()
}

/// Follow a job's steps until one is a running process or the job is done.
fn advance<J: Job>(
    slot: &mut Option<J>,
    index: usize,
    mut step: Step<J::Output>,
    running: &mut Vec<Running>,
    outputs: &mut [Option<J::Output>],
) {
    loop {
        match step {
            Step::Done(output) => {
                outputs[index] = Some(output);
                *slot = None;
                return;
            }
            Step::Run(mut command, limit) => {
                let started = Instant::now();
                match command.process_group(0).spawn() {
                    Ok(child) => {
                        running.push(Running { job: index, child, started, limit });
                        return;
                    }
                    Err(e) => step = slot.as_mut().expect("not done").next(Ended::Error(e), Duration::ZERO),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One `sh -c` run, reported as how it ended.
    struct Shell(&'static str, Duration, bool);

    impl Job for Shell {
        type Output = String;
        fn start(&mut self) -> Step<String> {
            let mut command = Command::new(if self.2 { "/nonexistent/sh" } else { "sh" });
            command.args(["-c", self.0]);
            Step::Run(Box::new(command), self.1)
        }
        fn next(&mut self, ended: Ended, elapsed: Duration) -> Step<String> {
            Step::Done(match ended {
                Ended::Exited(status) => format!("{:?} after {}", status.code(), elapsed.as_millis() / 100),
                Ended::TimedOut => "timeout".into(),
                Ended::Error(e) => format!("error {:?}", e.kind()),
            })
        }
    }

    #[test]
    fn outputs_keep_input_order_and_timeouts_kill_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // The grandchild must die with the shell, or a killed clang would leave cc1 running.
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let script: &'static str = Box::leak(script.into_boxed_str());
        let second = Duration::from_secs(1);
        let jobs = vec![
            Shell("sleep 0.3; exit 3", second, false),
            Shell("exit 0", second, false),
            Shell(script, Duration::from_millis(300), false),
            Shell("exit 0", second, true),
        ];
        let started = Instant::now();
        let outputs = run_all(jobs, 2);
        // Not the grandchild's 30 s: the timed-out job's whole group was killed, not waited for.
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(outputs, ["Some(3) after 3", "Some(0) after 0", "timeout", "error NotFound"]);
        let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        // Gone, or a zombie until whoever inherited it reaps it.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = state.rsplit(") ").next().unwrap_or_default();
        assert!(state.is_empty() || state.starts_with('Z'), "grandchild {pid} survived: {state}");
    }
}
