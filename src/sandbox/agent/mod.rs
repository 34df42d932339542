//! The agent backend: children forked inside an external `opt` (`--opt PATH`), so that any
//! LLVM build — trunk, assertions on — is tested with the engine's speed and isolation.
//!
//! `opt` loads `llvm-plugin/agent.cpp` with `-load-pass-plugin`, parses the program once
//! and becomes a fork server on a socket. For each job the pool sends the pipeline and the
//! four descriptors a child reports on (message pipe, command pipe, stdout, stderr); the
//! agent forks, its child speaks the in-process child's wire format, and the pool treats
//! it like one of its own: same deadlines, same classification. Only the wait status has
//! to come from the agent, the child's real parent.

mod locate;

use std::ffi::OsString;
use std::fs::File;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use anyhow::{bail, Context as _, Result};
use nix::sys::socket::{self, AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType};

use super::io::{memfd, read_capped};
use super::job::{ExecMode, JobSpec, Limits, PoisonTracking};
use super::symbols::Symbolizer;
use crate::llvm::VerifyEach;

pub use locate::{identify, major_of, ExternalOpt};

/// The program an agent serves, and how its target is configured.
#[derive(Debug, Clone, Default)]
pub struct AgentProgram {
    /// What `opt` parses: IR text or bitcode that this LLVM reads.
    pub ir: PathBuf,
    /// Linked in before `main` runs (IR this LLVM reads).
    pub driver: Option<PathBuf>,
    /// `-mtriple=`, given to `opt` itself.
    pub triple: Option<String>,
    /// As in [`crate::llvm::TargetSpec`]: empty is generic, `native` this host.
    pub cpu: String,
    pub features: String,
}

/// One running `opt` with the agent in it.
pub struct Agent {
    opt: ExternalOpt,
    process: Child,
    control: OwnedFd,
    /// What `opt` printed itself (not its children): why it failed to start, if it did.
    stderr: File,
    /// The LLVM code `opt` has loaded (its executable, its LLVM libraries): load bias and
    /// path.
    objects: Vec<(u64, PathBuf)>,
    symbols: OnceLock<Vec<Symbolizer>>,
}

const MAX_REPLY: usize = 1 << 20;

impl Agent {
    /// Start `opt` on `program` with the agent in it, in folder `cwd`.
    pub fn start(opt: &ExternalOpt, program: &AgentProgram, cwd: &Path) -> Result<Agent> {
        // opt runs in `cwd`: the user's relative paths would not name the files there.
        let ir = std::path::absolute(&program.ir)?;
        let driver = program.driver.as_deref().map(std::path::absolute).transpose()?;
        let (ours, theirs) = socket::socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
            .context("cannot make a socket for the agent")?;
        let stderr = memfd(c"ctos-agent-stderr")?;
        let mut command = Command::new(&opt.opt);
        let mut plugin = OsString::from("-load-pass-plugin=");
        plugin.push(&opt.agent);
        command.arg(plugin).arg("-passes=ctos-agent").arg("-disable-output");
        if let Some(triple) = &program.triple {
            command.arg(format!("-mtriple={triple}"));
        }
        command
            .arg(&ir)
            .env("CTOS_AGENT_FD", "3")
            .env("CTOS_AGENT_CPU", &program.cpu)
            .env("CTOS_AGENT_FEATURES", &program.features)
            .env("CTOS_AGENT_DRIVER", driver.as_deref().unwrap_or(Path::new("")))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr.try_clone()?));
        // The strict heap's allocator (src/sandbox/heap.c) in place of libc's entry points,
        // unless the user preloads something (an allocator of their own must stay the one).
        let user_preloads = std::env::var_os("LD_PRELOAD").is_some_and(|p| !p.is_empty());
        // LD_PRELOAD splits its list at blanks and colons.
        let listable = |p: &PathBuf| !p.as_os_str().as_encoded_bytes().iter().any(|b| b" :\t\n".contains(b));
        if let Some(heap) = opt.heap_library().filter(listable).filter(|_| !user_preloads) {
            command.env("LD_PRELOAD", heap);
        }
        let fd = theirs.as_raw_fd();
        // Safety: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(fd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // The same load addresses every time: a coverage table built for one agent
                // of this opt serves the next.
                let persona = libc::personality(0xffff_ffff);
                if persona >= 0 {
                    libc::personality((persona | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong);
                }
                Ok(())
            });
        }
        let process = command.spawn().with_context(|| format!("cannot run {}", opt.opt.display()))?;
        drop(theirs);
        let mut agent =
            Agent { opt: opt.clone(), process, control: ours, stderr, objects: Vec::new(), symbols: OnceLock::new() };
        let hello = agent.receive().ok().filter(|h| h.first() == Some(&b'H'));
        let Some(hello) = hello else {
            bail!("{} did not start the agent: {}", opt.opt.display(), agent.last_words());
        };
        let text = String::from_utf8_lossy(&hello[1..]).into_owned();
        let mut lines = text.lines();
        let _version = lines.next();
        if let Some(problem) = lines.next().filter(|p| !p.is_empty()) {
            bail!("the agent in {} cannot run {}: {problem}", opt.opt.display(), program.ir.display());
        }
        agent.objects = lines
            .filter_map(|l| l.split_once(' '))
            .filter(|(_, path)| path.starts_with('/'))
            .filter_map(|(bias, path)| Some((bias.parse().ok()?, PathBuf::from(path))))
            .filter(|(_, path)| {
                path == &agent.opt.opt || path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libLLVM"))
            })
            .collect();
        Ok(agent)
    }

    pub fn opt(&self) -> &ExternalOpt {
        &self.opt
    }

    /// The last lines `opt` itself printed.
    fn last_words(&mut self) -> String {
        let _ = self.process.try_wait();
        let text = read_capped(&self.stderr, 64 * 1024);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        match lines.len() {
            0 => "it exited without a word".to_string(),
            n => lines[n.saturating_sub(3)..].join(" | "),
        }
    }

    fn receive(&self) -> std::io::Result<Vec<u8>> {
        // Room, not zeroes: a megabyte zeroed per request cost more than the request.
        let mut buf: Vec<u8> = Vec::with_capacity(MAX_REPLY);
        loop {
            let n = unsafe { libc::recv(self.control.as_raw_fd(), buf.as_mut_ptr().cast(), MAX_REPLY, 0) };
            match n {
                0 => return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the agent is gone")),
                n if n > 0 => {
                    // The kernel wrote n bytes there.
                    unsafe { buf.set_len(n as usize) };
                    return Ok(buf);
                }
                _ => match std::io::Error::last_os_error() {
                    e if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    e => return Err(e),
                },
            }
        }
    }

    fn request(&self, payload: &[u8], fds: &[RawFd]) -> std::io::Result<Vec<u8>> {
        let iov = [IoSlice::new(payload)];
        let rights = [ControlMessage::ScmRights(fds)];
        let cmsgs: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
        socket::sendmsg::<()>(self.control.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None)?;
        self.receive()
    }

    /// Fork a child in the agent for `job`, reporting on `fds` (message pipe, command pipe,
    /// stdout, stderr). `llvm_args` are all the job's LLVM options. With `copy_max` above
    /// zero the child is a worker, which takes further jobs on its command pipe
    /// ([`Agent::worker_job`]), each on a copy of the program, if the program's
    /// bitcode is at most that many bytes.
    pub(super) fn fork_child(
        &self,
        job: &JobSpec,
        copy_max: usize,
        llvm_args: &[String],
        limits: &Limits,
        fds: &[RawFd],
    ) -> std::io::Result<libc::pid_t> {
        let mut payload = vec![b'R'];
        payload.extend(job_fields(job, copy_max, llvm_args, limits)?);
        let reply = self.request(&payload, fds)?;
        match reply.first() {
            Some(b'P') if reply.len() >= 5 => {
                let pid = i32::from_le_bytes(reply[1..5].try_into().unwrap());
                if pid < 0 {
                    return Err(std::io::Error::other("the agent could not fork"));
                }
                Ok(pid)
            }
            _ => Err(std::io::Error::other(format!("the agent says: {}", String::from_utf8_lossy(&reply)))),
        }
    }

    /// A further job for a worker forked by [`Agent::fork_child`]: the request's fields,
    /// which the worker reads from its command pipe after `j` and their length. Without
    /// LLVM options: the worker keeps those of its first job, and takes no job that sets
    /// options of its own.
    pub(super) fn worker_job(job: &JobSpec, limits: &Limits) -> std::io::Result<Vec<u8>> {
        job_fields(job, 0, &[], limits)
    }

    /// The wait status of a child of the agent that has ended (or is about to).
    pub(super) fn wait(&self, pid: libc::pid_t) -> std::io::Result<i32> {
        let mut payload = vec![b'W'];
        payload.extend_from_slice(&pid.to_le_bytes());
        let reply = self.request(&payload, &[])?;
        if reply.first() != Some(&b'S') || reply.len() < 9 {
            return Err(std::io::Error::other("the agent sent no wait status"));
        }
        Ok(i32::from_le_bytes(reply[5..9].try_into().unwrap()))
    }

    /// Symbol tables of `opt` and its LLVM libraries, for crash stacks (read on first use).
    pub(super) fn symbolizers(&self) -> Vec<&Symbolizer> {
        self.symbols
            .get_or_init(|| self.objects.iter().filter_map(|(bias, path)| Symbolizer::of_file(path, *bias)).collect())
            .iter()
            .collect()
    }

    /// The LLVM code `opt` has loaded: (load bias, path).
    pub(super) fn llvm_objects(&self) -> &[(u64, PathBuf)] {
        &self.objects
    }

    /// Arm one-shot breakpoints at `addrs` (sorted addresses in `opt`; none: disarm) in the
    /// agent, for the children it forks from now on.
    pub(super) fn arm(&self, addrs: &[u64], flags: &[u8]) -> Result<()> {
        use std::io::Write as _;
        let mut file = memfd(c"ctos-sites")?;
        // The top byte of an address (never set in user space) carries its flags.
        let flagged = addrs.iter().zip(flags).map(|(&a, &f)| a | (u64::from(f) << 56));
        let bytes: Vec<u8> = flagged.flat_map(|a| a.to_le_bytes()).collect();
        file.write_all(&bytes)?;
        let reply = self.request(b"C", &[file.as_raw_fd()])?;
        match reply.first() {
            Some(b'A') => Ok(()),
            _ => bail!(
                "the agent in {} cannot arm coverage: {}",
                self.opt.opt.display(),
                String::from_utf8_lossy(reply.get(1..).unwrap_or_default())
            ),
        }
    }
}

/// A job as the agent reads it (llvm-plugin/agent.cpp parseJob): NUL-separated fields.
fn job_fields(job: &JobSpec, copy_max: usize, llvm_args: &[String], limits: &Limits) -> std::io::Result<Vec<u8>> {
    let verify = match job.verify_each {
        VerifyEach::Off => 0,
        VerifyEach::Changed => 1,
        VerifyEach::Every => 2,
        VerifyEach::ChangedEachUnit => 3,
    };
    let exec = match job.exec {
        ExecMode::Never => 0,
        ExecMode::Always => 1,
        ExecMode::AskParent => 2,
    };
    let focus = job.focus.as_ref();
    let fields = [
        verify.to_string(),
        u8::from(job.emit_ir).to_string(),
        exec.to_string(),
        limits.memory_bytes.to_string(),
        focus.map_or(String::new(), |f| f.pass.clone()),
        focus.and_then(|f| f.element).map_or(-1, |e| e as i64).to_string(),
        u8::from(job.empty_module).to_string(),
        copy_max.to_string(),
        job.pass_runs.map_or(-1, |n| i64::from(n.min(i32::MAX as u32))).to_string(),
        (job.heap as i32).to_string(),
        u8::from(job.skip_hash).to_string(),
        // The agent tracks the programs of generated drivers only.
        u8::from(job.track_poison != PoisonTracking::Off).to_string(),
        job.pipeline.clone(),
    ];
    let mut payload = Vec::new();
    let all = fields.iter().chain(llvm_args);
    for (i, field) in all.enumerate() {
        if field.contains('\0') {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in a job field"));
        }
        if i > 0 {
            payload.push(0);
        }
        payload.extend_from_slice(field.as_bytes());
    }
    Ok(payload)
}

impl Drop for Agent {
    fn drop(&mut self) {
        // Closing the socket ends the agent's loop; its children die with it.
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire;

    /// The agent writes the wire format in C++: its tag numbers are ours.
    #[test]
    fn the_agent_sends_the_wire_tags_of_the_in_process_child() {
        let source = include_str!("../../../llvm-plugin/agent.cpp");
        let tag = |name: &str| -> u8 {
            let line = source.lines().find(|l| l.trim_start().starts_with(&format!("TAG_{name} ="))).unwrap();
            line.split('=').nth(1).unwrap().trim().trim_end_matches(',').parse().unwrap()
        };
        let ours = [
            ("PHASE", wire::PHASE),
            ("OPT_DONE", wire::OPT_DONE),
            ("PIPELINE_ERROR", wire::PIPELINE_ERROR),
            ("FATAL", wire::FATAL),
            ("CRASH", wire::CRASH),
            ("EXEC_DONE", wire::EXEC_DONE),
            ("OOM", wire::OOM),
            ("INVALID_IR", wire::INVALID_IR),
            ("EXEC_ERROR", wire::EXEC_ERROR),
            ("ELEMENT", wire::ELEMENT),
            ("FOCUS", wire::FOCUS),
            ("ARGS_REJECTED", wire::ARGS_REJECTED),
            ("JOB_END", wire::JOB_END),
            ("PASS_RUNS", wire::PASS_RUNS),
            ("PASS_RUN", wire::PASS_RUN),
        ];
        for (name, value) in ours {
            assert_eq!(tag(name), value, "TAG_{name}");
        }
        let phase = |name: &str| source.contains(&format!("PHASE_{name} = {}", name_value(name)));
        fn name_value(name: &str) -> u8 {
            use super::super::Phase;
            (match name {
                "OPTIMIZING" => Phase::Optimizing,
                "VERIFYING" => Phase::Verifying,
                "OPTIMIZED" => Phase::Optimized,
                "CODEGEN" => Phase::Codegen,
                _ => Phase::Executing,
            }) as u8
        }
        for name in ["OPTIMIZING", "VERIFYING", "OPTIMIZED", "CODEGEN", "EXECUTING"] {
            assert!(phase(name), "PHASE_{name}");
        }
        assert!(source.contains(&format!("LAST_JOB = {};", wire::LAST_JOB)), "LAST_JOB");
    }
}
