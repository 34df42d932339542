//! The parent side: fork children, read their messages, enforce per-phase deadlines,
//! and turn each child's end into a [`Run`].

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::agent::{Agent, AgentProgram, ExternalOpt};
use super::child::{self, ChildIo};
use super::classify::{self, Ending, RawCrash};
use super::heap::HeapPolicy;
use super::io::{memfd, read_capped, HANG_SIGNAL};
use super::job::{ExecMode, JobSpec, Limits, Observer};
use super::run::{OptDone, Outcome, PassRun, Run, LLVM_ARGS_REJECTED};
use super::symbols::Symbolizer;
use super::which_llvm::Llvm;
use super::wire::{self, Decoder, Phase};
use crate::llvm::{Heap, IrModule, VerifyEach};

/// What src/llvm/pipeline.h adds to the message of a verification it deferred.
const DEFERRED_VERIFICATION: &str = "(verified when its adaptor returned)";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

// Events are few (two per child) and short-lived: boxing the run would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Event {
    /// An [`ExecMode::AskParent`] child optimized its module; answer with [`Pool::decide`].
    Optimized {
        id: JobId,
        ir_hash: u64,
    },
    Done {
        id: JobId,
        run: Run,
    },
}

struct Child {
    id: JobId,
    pid: libc::pid_t,
    pidfd: OwnedFd,
    msg: OwnedFd,
    cmd: Option<OwnedFd>,
    stdout: File,
    stderr: File,
    decoder: Decoder,
    exec_mode: ExecMode,
    started: Instant,
    /// When it said it started optimizing: the optimizer's limit counts from here, so that
    /// a child a loaded machine was slow to set up is not asked where it hangs before
    /// it can answer.
    optimizing_since: Option<Instant>,
    exec_started: Option<Instant>,
    /// When the JIT finished compiling and `main` started.
    running_since: Option<Instant>,
    awaiting_decision: bool,
    exited: bool,
    ending: Ending,
    observer_slot: Option<usize>,
    /// The job again with every verification where the pass ran, for when a verification
    /// that `VerifyEach::Changed` deferred to an adaptor's end finds broken IR.
    exact_rerun: Option<JobSpec>,
    /// The heap its job runs on.
    heap: Heap,
    /// The job as it was submitted, to run on the plain heap when this child's run on the
    /// strict heap ends well (see [`HeapPolicy::Both`]).
    plain_after: Option<JobSpec>,
    /// The strict heap's run again, watched, for when this one, unwatched, fails: a failing
    /// run's record is the one wanted most.
    watched_after: Option<JobSpec>,
    /// A worker: it runs further jobs of this kind after this one.
    worker: Option<WorkerKey>,
    /// Jobs it ran before this one.
    jobs_before: usize,
    /// A worker said its job ended and waits for the next.
    job_ended: bool,
    /// ... or that it ends with this job (it grew too much, or could not put back an LLVM
    /// option its job set).
    ends_after_job: bool,
    /// Asked for its stack at its deadline ([`HANG_SIGNAL`]): killed at this instant if
    /// it has not ended by then.
    kill_at: Option<Instant>,
    /// ... and asked again at this instant: it ignores an ask that finds it in the
    /// coverage stubs, whose stack does not unwind.
    ask_again: Option<Instant>,
}

/// How long a child asked for its stack may take to send it before it is killed. Its
/// handler sends and ends at once; the time is for a loaded machine to schedule it (with
/// 250 ms, a hang under the full test suite on two cores often lost its stack).
const HANG_STACK_GRACE: Duration = Duration::from_secs(2);

/// How long a child may take to set up its job (a copy of the module, its options)
/// before its optimizer's limit starts, when that is shorter: setting up is not
/// optimizing, and a loaded machine can take most of a short limit for it.
const SETUP_LIMIT: Duration = Duration::from_secs(10);

/// How often a child asked for its stack is asked again until it answers (see
/// `ask_again`).
const HANG_STACK_ASK_EVERY: Duration = Duration::from_millis(20);

/// Which jobs a worker serves: those on the module it was forked with (each job on a
/// fresh copy), with the sites armed that were armed when it was forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WorkerKey {
    module: u64,
    epoch: u64,
}

/// The epoch of workers for unobserved jobs: no armed sites can go stale under them.
const UNOBSERVED: u64 = u64::MAX;

/// The largest program, in bitcode bytes, whose unobserved jobs a worker runs on copies
/// rather than a child each. A copy costs parsing the program and freeing the last one,
/// which grows with it; a fork does not. Measured on csmith programs, 30 random 20-pass
/// pipelines: at 18 and 26 KB workers took a third less time inside `opt` and a sixth to
/// a third less in-process; at 75 and 120 KB about the same; at 336 KB a batch of no-op
/// pipelines took 1.5 times as long.
const UNOBSERVED_COPY_MAX_BYTES: usize = 64 << 10;

/// Jobs a worker runs before it ends, unless `CTOS_WORKER_JOBS` says otherwise (1: a
/// child per job). A bound on what LLVM's global state and the heap gather across jobs.
const WORKER_JOBS: usize = 100;

/// What the parent keeps of a child's descriptors: it reads messages, may send the
/// execute-or-not command, and reads stdout and stderr after the end.
struct ParentEnds {
    msg: OwnedFd,
    cmd: OwnedFd,
    stdout: File,
    stderr: File,
}

/// Children running at once, up to `jobs`.
pub struct Pool {
    jobs: usize,
    limits: Limits,
    llvm_args: Vec<String>,
    next_id: u64,
    children: Vec<Child>,
    pending: Vec<Event>,
    /// Children run here, so passes that write files (`dot-cfg`) do not litter.
    scratch: tempfile::TempDir,
    observer: Option<Box<dyn Observer>>,
    /// Children are forked by this agent inside an external `opt`, not by us.
    agent: Option<Agent>,
    /// The runs after a job's first (for exact blame, on the other heap), by the job
    /// submitted that they answer for.
    reruns: HashMap<JobId, JobId>,
    heap: HeapPolicy,
    /// Workers waiting for a job, oldest first.
    idle: Vec<Child>,
    worker_jobs: usize,
    forks: u64,
    /// The module of the last unobserved job that could have gone to a worker.
    last_unobserved: Option<u64>,
}

/// Before the first observed child: LLVM's one-time set-up done here, so that every child
/// forked afterwards finds it done. A worker's first job would record it and its later
/// jobs not: in a spectrum, that set-up would look like what tells runs apart. The warm-up
/// runs here only after a child ran it to its end, so it cannot take this process down.
fn warm_up_once(module: &IrModule) {
    static WARMED: std::sync::Once = std::sync::Once::new();
    WARMED.call_once(|| {
        let survived = match unsafe { libc::fork() } {
            -1 => false,
            0 => child::probe(|| module.warm_up()),
            pid => {
                let mut status = -1;
                unsafe { libc::waitpid(pid, &mut status, 0) };
                status == 0
            }
        };
        if survived {
            module.warm_up();
        }
    });
}

fn exact_rerun(job: &JobSpec) -> Option<JobSpec> {
    (job.verify_each == VerifyEach::Changed)
        .then(|| JobSpec { verify_each: VerifyEach::ChangedEachUnit, ..job.clone() })
}

/// A job's run on the strict heap before its run on the plain heap: the optimizer's part
/// alone (the plain heap's run executes the program, when the strict heap shows nothing),
/// unwatched (the plain heap's run, or a watched rerun of a failure, records).
fn strict_check(job: &JobSpec) -> JobSpec {
    JobSpec {
        heap: Heap::Strict,
        exec: ExecMode::Never,
        emit_ir: false,
        observe: false,
        skip_hash: true,
        ..job.clone()
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Pool {
    pub fn new(jobs: usize, limits: Limits, llvm_args: Vec<String>) -> std::io::Result<Pool> {
        crate::llvm::init();
        let heap = HeapPolicy::from_env().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        super::job::poison_tracking().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(Pool {
            jobs: jobs.max(1),
            limits,
            llvm_args,
            next_id: 0,
            children: Vec::new(),
            pending: Vec::new(),
            scratch: tempfile::Builder::new().prefix("ctos-scratch-").tempdir()?,
            observer: None,
            agent: None,
            reruns: HashMap::new(),
            heap,
            idle: Vec::new(),
            forks: 0,
            last_unobserved: None,
            worker_jobs: std::env::var("CTOS_WORKER_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(WORKER_JOBS),
        })
    }

    /// A pool whose children are forked inside `opt` (see [`Agent`]), on `program`.
    pub fn external(
        jobs: usize,
        limits: Limits,
        llvm_args: Vec<String>,
        opt: &ExternalOpt,
        program: &AgentProgram,
    ) -> anyhow::Result<Pool> {
        let mut pool = Pool::new(jobs, limits, llvm_args)?;
        pool.agent = Some(Agent::start(opt, program, pool.scratch.path())?);
        Ok(pool)
    }

    /// The external `opt` this pool's children run in, if any.
    pub fn external_opt(&self) -> Option<&ExternalOpt> {
        self.agent.as_ref().map(|a| a.opt())
    }

    /// The LLVM this pool's children run.
    pub fn llvm(&self) -> Llvm {
        self.agent.as_ref().map_or(Llvm::Linked, |a| Llvm::External(a.opt().clone()))
    }

    /// The LLVM code of the external `opt` (its executable and LLVM libraries) where its
    /// process loaded it: (load bias, path).
    pub fn external_objects(&self) -> Option<Vec<(u64, std::path::PathBuf)>> {
        self.agent.as_ref().map(|a| a.llvm_objects().to_vec())
    }

    /// Arm one-shot coverage sites at `addrs` (sorted, in the external `opt`; none: disarm;
    /// `flags` as [`crate::coverage::Sites::patch_flags`]) for the pool's later children.
    /// The pool must be idle.
    pub fn arm_external(&mut self, addrs: &[u64], flags: &[u8]) -> anyhow::Result<()> {
        let agent = self.agent.as_ref().ok_or_else(|| anyhow::anyhow!("this pool runs no external opt"))?;
        agent.arm(addrs, flags)
    }

    /// Watch jobs that ask for it (`JobSpec::observe`) with `observer`.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        // Their slots belong to the observer being replaced.
        while let Some(worker) = self.idle.pop() {
            self.retire(worker);
        }
        self.observer = Some(observer);
    }

    /// The LLVM options every child gets.
    pub fn llvm_args(&self) -> &[String] {
        &self.llvm_args
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Set how long later children may spend optimizing; the previous limit.
    pub fn set_opt_timeout(&mut self, timeout: std::time::Duration) -> std::time::Duration {
        std::mem::replace(&mut self.limits.opt_timeout, timeout)
    }

    /// Set how long later children may spend generating code and running `main`; the
    /// previous limit.
    pub fn set_exec_timeout(&mut self, timeout: std::time::Duration) -> std::time::Duration {
        std::mem::replace(&mut self.limits.exec_timeout, timeout)
    }

    /// The heaps jobs run on.
    pub fn heap_policy(&self) -> HeapPolicy {
        self.heap
    }

    /// Set the heaps later jobs run on.
    pub fn set_heap_policy(&mut self, policy: HeapPolicy) {
        self.heap = policy;
    }

    /// Jobs a worker runs before it ends (1: a child per job); see [`WORKER_JOBS`].
    pub fn set_worker_jobs(&mut self, jobs: usize) {
        self.worker_jobs = jobs;
    }

    /// Children forked for this pool, here or by its agent.
    pub fn forks(&self) -> u64 {
        self.forks
    }

    /// Children that may run at once.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    pub fn has_capacity(&self) -> bool {
        self.children.len() < self.jobs
    }

    pub fn is_idle(&self) -> bool {
        self.children.is_empty() && self.pending.is_empty()
    }

    /// Fork a child that runs `job` on its copy of `module`, on the heaps of the pool's
    /// policy (under [`HeapPolicy::Both`], children one after the other); one
    /// [`Event::Done`] answers for it. The parent's module is not touched; it only needs to
    /// be borrowed mutably for the fork itself.
    pub fn submit(&mut self, module: &mut IrModule, job: &JobSpec) -> std::io::Result<JobId> {
        match self.heap {
            HeapPolicy::Both => {
                let check = strict_check(job);
                let id = self.submit_on_its_heap(module, &check)?;
                let plain = Some(JobSpec { heap: Heap::Plain, ..job.clone() });
                let watched = job.observe.then_some(JobSpec { observe: true, ..check });
                self.set_heap_steps(id, plain, watched);
                Ok(id)
            }
            HeapPolicy::Plain => self.submit_on_its_heap(module, &JobSpec { heap: Heap::Plain, ..job.clone() }),
            HeapPolicy::Strict => self.submit_on_its_heap(module, &JobSpec { heap: Heap::Strict, ..job.clone() }),
        }
    }

    /// What child `id` runs after its job under [`HeapPolicy::Both`].
    fn set_heap_steps(&mut self, id: JobId, plain_after: Option<JobSpec>, watched_after: Option<JobSpec>) {
        if let Some(child) = self.children.iter_mut().find(|c| c.id == id) {
            child.plain_after = plain_after;
            child.watched_after = watched_after;
        }
    }

    fn submit_on_its_heap(&mut self, module: &mut IrModule, job: &JobSpec) -> std::io::Result<JobId> {
        let id = JobId(self.next_id);
        self.next_id += 1;
        let started = Instant::now();
        if self.agent.is_none() {
            // Before the observer re-arms what the parent's own LLVM code hit.
            module.build_subtargets_once();
            if job.observe {
                warm_up_once(module);
            }
        }
        let worker = self.worker_key(module, job);
        if let Some(key) = worker {
            if let Some(i) = self.idle.iter().position(|c| c.worker == Some(key)) {
                let child = self.idle.remove(i);
                match self.hand_over(child, job, id, started) {
                    Ok(()) => return Ok(id),
                    Err(child) => self.retire(child),
                }
            }
        }
        let copy_max = worker.and_then(|key| self.copy_max(module, key));
        let worker = worker.filter(|_| copy_max.is_some());
        let (msg_r, msg_w) = pipe()?;
        let (cmd_r, cmd_w) = pipe()?;
        let stdout = memfd(c"ctos-stdout")?;
        let stderr = memfd(c"ctos-stderr")?;
        let observer_slot = match (&mut self.observer, job.observe) {
            (Some(o), true) => Some(o.before_fork()),
            _ => None,
        };
        if let Some(agent) = &self.agent {
            let args: Vec<String> = self.llvm_args.iter().chain(&job.llvm_args).cloned().collect();
            let mut fds = vec![msg_w.as_raw_fd(), cmd_r.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()];
            let record = self.observer.as_ref().zip(observer_slot).and_then(|(o, slot)| o.record_fd(slot));
            fds.extend(record);
            let pid = match agent.fork_child(job, copy_max.unwrap_or(0), &args, &self.limits, &fds) {
                Ok(pid) => pid,
                Err(e) => {
                    if let (Some(o), Some(slot)) = (&mut self.observer, observer_slot) {
                        o.collect(slot);
                    }
                    return Err(e);
                }
            };
            self.forks += 1;
            // Ours no longer: without closing them, the child's death would not end the pipes.
            drop((msg_w, cmd_r));
            let ends = ParentEnds { msg: msg_r, cmd: cmd_w, stdout, stderr };
            self.watch(id, pid, ends, job, started, observer_slot)?;
            self.children.last_mut().expect("just watched").worker = worker;
            return Ok(id);
        }
        let scratch = std::ffi::CString::new(self.scratch.path().as_os_str().as_encoded_bytes()).unwrap();
        self.forks += 1;
        match unsafe { libc::fork() } {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                unsafe { libc::chdir(scratch.as_ptr()) };
                if let (Some(o), Some(slot)) = (&mut self.observer, observer_slot) {
                    o.in_child(slot);
                }
                let io = ChildIo {
                    msg: msg_w.as_raw_fd(),
                    cmd: cmd_r.as_raw_fd(),
                    stdout: stdout.as_raw_fd(),
                    stderr: stderr.as_raw_fd(),
                };
                let observer = &mut self.observer;
                let mut next_job = || {
                    if let (Some(o), Some(slot)) = (observer.as_mut(), observer_slot) {
                        o.next_job_in_child(slot);
                    }
                };
                let next_job = worker.is_some().then_some(&mut next_job as &mut dyn FnMut());
                child::run(module, job, &self.llvm_args, &io, &self.limits, next_job)
            }
            pid => {
                drop((msg_w, cmd_r));
                let ends = ParentEnds { msg: msg_r, cmd: cmd_w, stdout, stderr };
                self.watch(id, pid, ends, job, started, observer_slot)?;
                self.children.last_mut().expect("just watched").worker = worker;
                Ok(id)
            }
        }
    }

    /// Watch a child just forked (here or by the agent) through the parent's ends.
    fn watch(
        &mut self,
        id: JobId,
        pid: libc::pid_t,
        ends: ParentEnds,
        job: &JobSpec,
        started: Instant,
        observer_slot: Option<usize>,
    ) -> std::io::Result<JobId> {
        let ParentEnds { msg: msg_r, cmd: cmd_w, stdout, stderr } = ends;
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
        if pidfd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        unsafe { libc::fcntl(msg_r.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        self.children.push(Child {
            id,
            pid,
            pidfd: unsafe { OwnedFd::from_raw_fd(pidfd) },
            msg: msg_r,
            cmd: Some(cmd_w),
            stdout,
            stderr,
            decoder: Decoder::default(),
            exec_mode: job.exec,
            started,
            optimizing_since: None,
            exec_started: None,
            running_since: None,
            awaiting_decision: false,
            exited: false,
            ending: Ending::default(),
            observer_slot,
            exact_rerun: exact_rerun(job),
            heap: job.heap,
            plain_after: None,
            watched_after: None,
            worker: None,
            jobs_before: 0,
            job_ended: false,
            ends_after_job: false,
            kill_at: None,
            ask_again: None,
        });
        Ok(id)
    }

    /// The kind of worker that may run `job`, if one may. Forking costs most where a child
    /// runs briefly: observed jobs
    /// (every child copies the code pages its first arrivals write back), and jobs that
    /// only optimize, a few milliseconds each, most of them in the agent's `opt`, whose
    /// children fault its dynamically linked LLVM back in. A job's own LLVM options are put
    /// back after it in this process (src/sandbox/child.rs), so jobs with and without
    /// options share workers; the agent does not put them back, so such a job gets a child
    /// of its own there. Jobs that execute keep a child each: the JIT takes the module, so
    /// a worker would fork for them anyway.
    fn worker_key(&self, module: &IrModule, job: &JobSpec) -> Option<WorkerKey> {
        if self.worker_jobs < 2 || self.agent.is_some() && !job.llvm_args.is_empty() {
            return None;
        }
        let epoch = match (job.observe, &self.agent) {
            // The agent runs no warm-up (see `warm_up_once`): a worker's first job would
            // record LLVM's one-time set-up and its later jobs not.
            (true, Some(_)) => return None,
            (true, None) => self.observer.as_ref()?.epoch(),
            (false, _) if job.exec == ExecMode::Never => UNOBSERVED,
            (false, _) => return None,
        };
        Some(WorkerKey { module: module.identity(), epoch })
    }

    /// For a worker to be forked now for `key`'s jobs, whose jobs after the first run on
    /// copies of the module: the largest program worth copying, or None if none is. Always
    /// worth it for observed jobs; for unobserved ones, from a module's second job on (one
    /// job needs no copy) and for small programs (the agent weighs its own copy). In this
    /// process, keeps the module's bitcode the copies are made from.
    fn copy_max(&mut self, module: &mut IrModule, key: WorkerKey) -> Option<usize> {
        let max = if key.epoch == UNOBSERVED { UNOBSERVED_COPY_MAX_BYTES } else { usize::MAX };
        if self.agent.is_some() {
            return Some(max);
        }
        if key.epoch == UNOBSERVED && self.last_unobserved.replace(key.module) != Some(key.module) {
            return None;
        }
        (module.keep_snapshot() <= max).then_some(max)
    }

    /// Give an idle worker `job`; the worker back if it cannot take it.
    fn hand_over(&mut self, mut child: Child, job: &JobSpec, id: JobId, started: Instant) -> Result<(), Child> {
        // The agent's workers read its request's fields, ours the job as JSON.
        let body = match &self.agent {
            Some(_) => Agent::worker_job(job, &self.limits),
            None => Ok(serde_json::to_vec(job).expect("serializable")),
        };
        let Ok(body) = body else { return Err(child) };
        let mut message = Vec::with_capacity(5 + body.len());
        message.push(b'j');
        message.extend_from_slice(&(body.len() as u32).to_le_bytes());
        message.extend_from_slice(&body);
        let Some(cmd) = &child.cmd else { return Err(child) };
        // The pipe stays the child's: borrowed for the write, not closed after it.
        let mut pipe = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(cmd.as_raw_fd()) });
        if pipe.write_all(&message).is_err() {
            return Err(child);
        }
        child.id = id;
        child.exec_mode = job.exec;
        child.started = started;
        child.optimizing_since = None;
        child.exec_started = None;
        child.running_since = None;
        child.awaiting_decision = false;
        child.ending = Ending::default();
        child.exact_rerun = exact_rerun(job);
        child.heap = job.heap;
        child.plain_after = None;
        child.watched_after = None;
        child.jobs_before += 1;
        child.job_ended = false;
        self.children.push(child);
        Ok(())
    }

    /// A worker whose job ended: kept for the next job of its kind, or ended.
    fn park(&mut self, child: Child) {
        let current = self.observer.as_ref().map(|o| o.epoch());
        let fresh = child.worker.is_some_and(|k| k.epoch == UNOBSERVED || Some(k.epoch) == current);
        if !fresh || child.ends_after_job || child.jobs_before + 1 >= self.worker_jobs {
            return self.retire(child);
        }
        self.idle.push(child);
        if self.idle.len() > self.jobs {
            let oldest = self.idle.remove(0);
            self.retire(oldest);
        }
    }

    /// End a worker that has no job, and free its observer slot.
    fn retire(&mut self, child: Child) {
        unsafe { libc::kill(child.pid, libc::SIGKILL) };
        self.reap(child.pid);
        if let (Some(o), Some(slot)) = (&mut self.observer, child.observer_slot) {
            o.release(slot);
        }
    }

    /// Collect the wait status of a child that ended: ours, or the agent's.
    fn reap(&self, pid: libc::pid_t) -> i32 {
        let mut status = 0;
        match &self.agent {
            Some(agent) => status = agent.wait(pid).unwrap_or(libc::SIGKILL),
            None => unsafe {
                libc::waitpid(pid, &mut status, 0);
            },
        }
        status
    }

    /// Run one job to its end (the pool must be idle).
    pub fn run_one(&mut self, module: &mut IrModule, job: &JobSpec) -> std::io::Result<Run> {
        let mut job = job.clone();
        if job.exec == ExecMode::AskParent {
            job.exec = ExecMode::Always;
        }
        let id = self.submit(module, &job)?;
        loop {
            match self.next_event(module) {
                Some(Event::Done { id: done, run }) if done == id => return Ok(run),
                Some(_) => {}
                None => unreachable!("the submitted job is running"),
            }
        }
    }

    /// Tell a child that reported [`Event::Optimized`] whether to execute its module.
    pub fn decide(&mut self, id: JobId, execute: bool) {
        let reruns = &self.reruns;
        let Some(child) = self.children.iter_mut().find(|c| reruns.get(&c.id).copied().unwrap_or(c.id) == id) else {
            return;
        };
        if !std::mem::replace(&mut child.awaiting_decision, false) {
            return;
        }
        if let Some(cmd) = &child.cmd {
            let byte = if execute { b'x' } else { b'q' };
            unsafe { libc::write(cmd.as_raw_fd(), (&byte as *const u8).cast(), 1) };
            if execute {
                child.exec_started = Some(Instant::now());
            }
        }
    }

    /// The next event, waiting for one if needed; `None` when no child is running.
    /// `module` is the one jobs were submitted with: a job whose deferred verification
    /// failed runs again on it, and its events come under the first job's id.
    pub fn next_event(&mut self, module: &mut IrModule) -> Option<Event> {
        loop {
            if let Some(mut event) = self.pending.pop() {
                if let Event::Optimized { id, .. } = &mut event {
                    *id = self.reruns.get(id).copied().unwrap_or(*id);
                }
                return Some(event);
            }
            if let Some(i) = self.children.iter().position(|c| c.exited || c.job_ended) {
                let mut child = self.children.swap_remove(i);
                let (id, exact_rerun) = (child.id, child.exact_rerun.clone());
                let (plain_after, watched_after) = (child.plain_after.take(), child.watched_after.take());
                let run = self.finish(&mut child);
                if child.exited {
                    if let (Some(o), Some(slot)) = (&mut self.observer, child.observer_slot) {
                        o.release(slot);
                    }
                } else {
                    self.park(child);
                }
                // A crash or fatal error may come from IR that an earlier pass broke and a
                // deferred verification had not checked yet: the rerun tells.
                let deferred = matches!(run.outcome, Outcome::Crash | Outcome::Fatal)
                    || run.outcome == Outcome::InvalidIr
                        && run.message.as_deref().is_some_and(|m| m.contains(DEFERRED_VERIFICATION));
                let origin = self.reruns.remove(&id).unwrap_or(id);
                if let Some(job) = exact_rerun.filter(|_| deferred) {
                    if let Ok(rerun) = self.submit_on_its_heap(module, &job) {
                        self.reruns.insert(rerun, origin);
                        self.set_heap_steps(rerun, plain_after, watched_after);
                        continue;
                    }
                }
                // The strict heap shows nothing: the plain heap's run, as `opt` runs, decides.
                // It shows a failure, unwatched: its watched run is the one to record.
                let (next, plain_after) = match run.outcome {
                    Outcome::Ok => (plain_after, None),
                    Outcome::Rejected => (None, None),
                    _ => (watched_after, plain_after),
                };
                if let Some(job) = next {
                    if let Ok(rerun) = self.submit_on_its_heap(module, &job) {
                        self.reruns.insert(rerun, origin);
                        self.set_heap_steps(rerun, plain_after, None);
                        continue;
                    }
                }
                return Some(Event::Done { id: origin, run });
            }
            if self.children.is_empty() {
                return None;
            }
            self.wait_for_activity();
        }
    }

    fn deadline(&self, child: &Child) -> Option<Instant> {
        if child.ending.killed_in.is_some() {
            let again = child.ask_again.filter(|_| child.ending.crash.is_none());
            return child.kill_at.map(|kill| again.map_or(kill, |a| a.min(kill)));
        }
        if let Some(start) = child.exec_started {
            return Some(start + self.limits.exec_timeout);
        }
        if child.awaiting_decision {
            // The parent answers at once; this only guards against a caller that never does.
            return Some(child.started + self.limits.opt_timeout * 2);
        }
        match child.optimizing_since {
            Some(since) => Some(since + self.limits.opt_timeout),
            None => Some(child.started + self.limits.opt_timeout.max(SETUP_LIMIT)),
        }
    }

    fn wait_for_activity(&mut self) {
        let now = Instant::now();
        for i in 0..self.children.len() {
            if self.deadline(&self.children[i]).is_some_and(|d| d <= now) {
                let child = &mut self.children[i];
                let asked = child.ending.killed_in.is_some();
                if asked && child.kill_at.is_some_and(|kill| now < kill) {
                    child.ask_again = Some(now + HANG_STACK_ASK_EVERY);
                    unsafe { libc::kill(child.pid, HANG_SIGNAL) };
                    continue;
                }
                child.kill_at = None;
                // An optimizer that hangs is asked where it is first; a program is not, nor
                // a child still setting up (its handler may not be installed yet).
                if !asked && matches!(child.ending.phase, Phase::Optimizing | Phase::Verifying) {
                    child.kill_at = Some(now + HANG_STACK_GRACE);
                    child.ask_again = Some(now + HANG_STACK_ASK_EVERY);
                    unsafe { libc::kill(child.pid, HANG_SIGNAL) };
                } else {
                    unsafe { libc::kill(child.pid, libc::SIGKILL) };
                }
                child.ending.killed_in.get_or_insert(child.ending.phase);
            }
        }
        let timeout = self
            .children
            .iter()
            .filter_map(|c| self.deadline(c))
            .min()
            .map(|d| d.saturating_duration_since(now) + Duration::from_millis(1));
        let mut fds: Vec<libc::pollfd> = self
            .children
            .iter()
            .flat_map(|c| {
                [
                    libc::pollfd { fd: c.msg.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                    libc::pollfd { fd: c.pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                ]
            })
            .collect();
        let millis = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
        if n <= 0 {
            return;
        }
        for i in 0..self.children.len() {
            let (msg_ev, pid_ev) = (fds[2 * i].revents, fds[2 * i + 1].revents);
            if msg_ev != 0 {
                self.drain(i);
            }
            if pid_ev != 0 {
                // Read what the child wrote before it died, then collect its status.
                self.drain(i);
                let status = self.reap(self.children[i].pid);
                let child = &mut self.children[i];
                child.ending.wait_status = Some(status);
                child.exited = true;
            }
        }
    }

    fn drain(&mut self, i: usize) {
        let fd = self.children[i].msg.as_raw_fd();
        self.children[i].decoder.read_from(fd);
        while let Some((tag, payload)) = self.children[i].decoder.next_message() {
            self.handle_message(i, tag, payload);
        }
    }

    fn handle_message(&mut self, i: usize, tag: u8, payload: Vec<u8>) {
        let child = &mut self.children[i];
        let ending = &mut child.ending;
        let text = || String::from_utf8_lossy(&payload).into_owned();
        match tag {
            wire::PHASE => {
                ending.phase = Phase::from_u8(payload.first().copied().unwrap_or(0));
                if ending.phase == Phase::Optimizing && child.optimizing_since.is_none() {
                    child.optimizing_since = Some(Instant::now());
                }
                if ending.phase == Phase::Codegen && child.exec_started.is_none() {
                    child.exec_started = Some(Instant::now());
                }
                if ending.phase == Phase::Executing {
                    child.running_since = Some(Instant::now());
                }
            }
            wire::OPT_DONE => {
                ending.opt_millis = Some(child.started.elapsed().as_secs_f64() * 1e3);
                // A child whose memory the optimizer corrupted may send anything: its run
                // failed, and says so, rather than the pool.
                let done: OptDone = match serde_json::from_slice(&payload) {
                    Ok(done) => done,
                    Err(e) => {
                        ending.fatal =
                            Some((ending.phase, format!("the child's report of its optimization is unreadable: {e}")));
                        return;
                    }
                };
                if child.exec_mode == ExecMode::AskParent {
                    child.awaiting_decision = true;
                    self.pending.push(Event::Optimized { id: child.id, ir_hash: done.ir_hash });
                }
                ending.opt_done = Some(done);
            }
            wire::PIPELINE_ERROR => ending.pipeline_error = Some(text()),
            wire::FATAL => ending.fatal = Some((ending.phase, text())),
            wire::INVALID_IR => ending.invalid_ir = Some(text()),
            wire::CRASH => {
                let (signal, fault, trace) = wire::decode_crash(&payload);
                ending.crash = Some(RawCrash { phase: ending.phase, signal, fault, trace });
            }
            wire::OOM => ending.oom_in = Some(ending.phase),
            wire::EXEC_DONE => {
                ending.exit_code = Some(i32::from_le_bytes(payload[..4].try_into().unwrap_or([0; 4])));
            }
            wire::EXEC_ERROR => ending.exec_error = Some(text()),
            wire::ELEMENT => {
                ending.element = payload.get(..4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize);
            }
            wire::FOCUS => ending.focus_class = Some(text()),
            wire::PASS_RUNS if payload.len() >= 4 => {
                ending.pass_runs = Some(u32::from_le_bytes(payload[..4].try_into().unwrap()));
            }
            wire::PASS_RUN if payload.len() >= 8 => {
                let number = |at: usize| u32::from_le_bytes(payload[at..at + 4].try_into().unwrap());
                let name = String::from_utf8_lossy(&payload[8..]).into_owned();
                ending.nth_pass_run = Some(PassRun { index: number(0), element: number(4) as usize, name });
            }
            wire::STEP_COUNTS => ending.step_counts = Some(crate::llvm::parse_counter_counts(&text())),
            wire::ARGS_REJECTED => {
                ending.fatal = Some((ending.phase, LLVM_ARGS_REJECTED.to_string()));
            }
            // As a child that ended its job by exiting normally.
            wire::JOB_END => {
                ending.wait_status.get_or_insert(0);
                child.job_ended = true;
                child.ends_after_job = payload.first() == Some(&wire::LAST_JOB);
            }
            wire::EXEC_STATUS => {
                ending.wait_status = payload.get(..4).map(|b| i32::from_le_bytes(b.try_into().unwrap()));
            }
            _ => {}
        }
    }

    /// The run of a child's job, once the child ended or (a worker) said the job did.
    fn finish(&mut self, child: &mut Child) -> Run {
        let stderr = read_capped(&child.stderr, 1 << 20);
        let stdout = read_capped(&child.stdout, 4 << 20);
        let exec_millis = child.exec_started.map(|s| s.elapsed().as_secs_f64() * 1e3);
        let codegen_millis = child.exec_started.zip(child.running_since).map(|(a, b)| (b - a).as_secs_f64() * 1e3);
        let total_millis = child.started.elapsed().as_secs_f64() * 1e3;
        let agent = self.agent.as_ref();
        let objects = || match agent {
            Some(agent) => agent.symbolizers(),
            None => vec![Symbolizer::this_process()],
        };
        let mut run = classify::classify(
            std::mem::take(&mut child.ending),
            &self.limits,
            &objects,
            stderr,
            stdout,
            total_millis,
            exec_millis,
        );
        if let Some(e) = run.execution.as_mut() {
            e.codegen_millis = codegen_millis.unwrap_or(e.millis);
        }
        run.heap = child.heap;
        if let (Some(o), Some(slot)) = (&mut self.observer, child.observer_slot) {
            run.trace = Some(o.read(slot));
        }
        run
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for child in self.children.iter().chain(&self.idle) {
            unsafe { libc::kill(child.pid, libc::SIGKILL) };
            self.reap(child.pid);
        }
    }
}
