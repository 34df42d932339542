//! Messages a child sends its parent over a pipe: `[tag u8][len u32 LE][payload]`.
//!
//! Signal and fatal-error handlers send messages too, so encoding must work without
//! allocating: `send_raw` writes from stack buffers with `write(2)`.

use std::os::fd::RawFd;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[repr(u8)]
pub enum Phase {
    #[default]
    Setup = 0,
    Optimizing = 1,
    Verifying = 2,
    /// Optimized and hashed; waiting for the parent to say whether to execute.
    Optimized = 3,
    Codegen = 4,
    Executing = 5,
}

impl Phase {
    pub fn from_u8(b: u8) -> Phase {
        match b {
            1 => Phase::Optimizing,
            2 => Phase::Verifying,
            3 => Phase::Optimized,
            4 => Phase::Codegen,
            5 => Phase::Executing,
            _ => Phase::Setup,
        }
    }

    /// Phases that belong to running the program rather than optimizing it.
    pub fn is_execution(self) -> bool {
        self >= Phase::Codegen
    }
}

pub const PHASE: u8 = 1;
pub const OPT_DONE: u8 = 2;
pub const PIPELINE_ERROR: u8 = 3;
pub const FATAL: u8 = 4;
pub const CRASH: u8 = 5;
pub const EXEC_DONE: u8 = 6;
pub const OOM: u8 = 7;
pub const INVALID_IR: u8 = 8;
pub const EXEC_ERROR: u8 = 9;
/// A top-level element of the pipeline starts: its index, u32 LE.
pub const ELEMENT: u8 = 10;
/// The focus pass first ran: its class name.
pub const FOCUS: u8 = 11;
/// LLVM's command-line parser refused the job's flags (its words are on stderr).
pub const ARGS_REJECTED: u8 = 12;
/// A worker child's job ended; the child waits for the next (see src/sandbox/pool.rs),
/// unless the payload is [`LAST_JOB`]: then it ends.
pub const JOB_END: u8 = 13;
pub const LAST_JOB: u8 = 1;
/// The wait status of the child a worker executed its job's program in.
pub const EXEC_STATUS: u8 = 14;
/// How many runs of passes that may be skipped the pipeline made: u32 LE.
pub const PASS_RUNS: u8 = 15;
/// The last run a limited job lets run starts: its number and element (u32 LE each), name.
pub const PASS_RUN: u8 = 16;
/// The steps each debug counter counted in the pipeline: "name count" lines.
pub const STEP_COUNTS: u8 = 17;

/// Write one message; short writes are retried, errors ignored (the parent may be gone).
pub fn send_raw(fd: RawFd, tag: u8, payload: &[u8]) {
    let mut header = [0u8; 5];
    header[0] = tag;
    header[1..].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    write_all(fd, &header);
    write_all(fd, payload);
}

fn write_all(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Splits a byte stream into messages as they arrive.
#[derive(Default)]
pub struct Decoder {
    buffer: Vec<u8>,
}

impl Decoder {
    /// Append what `fd` has now (until it would block or ends); whether it ended. Read
    /// into the buffer's spare room: a zeroed buffer per read cost more than the reading.
    pub fn read_from(&mut self, fd: std::os::fd::RawFd) -> bool {
        const CHUNK: usize = 64 * 1024;
        loop {
            self.buffer.reserve(CHUNK);
            let spare = self.buffer.spare_capacity_mut();
            let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), spare.len()) };
            if n <= 0 {
                return n == 0;
            }
            // The kernel wrote n bytes there.
            unsafe { self.buffer.set_len(self.buffer.len() + n as usize) };
        }
    }

    pub fn next_message(&mut self) -> Option<(u8, Vec<u8>)> {
        if self.buffer.len() < 5 {
            return None;
        }
        let len = u32::from_le_bytes(self.buffer[1..5].try_into().unwrap()) as usize;
        if self.buffer.len() < 5 + len {
            return None;
        }
        let tag = self.buffer[0];
        let payload = self.buffer[5..5 + len].to_vec();
        self.buffer.drain(..5 + len);
        Some((tag, payload))
    }
}

/// Crash payload: signal, fault address, then the raw return addresses.
pub fn encode_crash(buf: &mut [u8], signal: i32, fault_addr: u64, frames: &[usize]) -> usize {
    buf[0..4].copy_from_slice(&signal.to_le_bytes());
    buf[4..12].copy_from_slice(&fault_addr.to_le_bytes());
    let mut at = 12;
    for &f in frames {
        if at + 8 > buf.len() {
            break;
        }
        buf[at..at + 8].copy_from_slice(&(f as u64).to_le_bytes());
        at += 8;
    }
    at
}

pub fn decode_crash(payload: &[u8]) -> (i32, u64, Vec<u64>) {
    if payload.len() < 12 {
        return (0, 0, Vec::new());
    }
    let signal = i32::from_le_bytes(payload[0..4].try_into().unwrap());
    let addr = u64::from_le_bytes(payload[4..12].try_into().unwrap());
    let frames = payload[12..].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    (signal, addr, frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_larger_than_a_read_arrive_whole_and_in_order_until_the_writer_ends() {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // The reader's end only, as the pool's: the writer blocks while the pipe is full.
        assert_eq!(unsafe { libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK) }, 0);
        let big: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
        let writer = std::thread::spawn(move || {
            send_raw(fds[1], 7, &big);
            send_raw(fds[1], 9, b"done");
            unsafe { libc::close(fds[1]) };
            big
        });
        let mut decoder = Decoder::default();
        let mut got = Vec::new();
        loop {
            let ended = decoder.read_from(fds[0]);
            while let Some(m) = decoder.next_message() {
                got.push(m);
            }
            if ended {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let big = writer.join().unwrap();
        unsafe { libc::close(fds[0]) };
        assert_eq!(got, vec![(7, big), (9, b"done".to_vec())]);
    }
}
