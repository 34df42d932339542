//! Test programs: csmith generation (default, swarm and the swarm variant, §3.1 of the
//! spec), regenerated up to a minimum size (§2.4), and undefined-behaviour screening of the
//! unoptimized build with UBSan and ASan (§4.6), whose clean run gives the reference output;
//! and the program under test as the engine loads and executes it ([`Subject`]).
//!
//! Both run many external processes at once without threads, because callers fork later.

mod children;
pub mod driver;
mod generate;
mod screen;
mod stress;
mod subject;
mod swarm;
#[cfg(test)]
mod tests;

pub use generate::{generate, generate_many, GenConfig, Generated, Generator, GeneratorMix};
pub use screen::{screen, screen_many, Screen, Screening};
pub use stress::{llvm_stress_many, StressProgram};
pub use subject::{catalog_for, reference_execution, reference_execution_filled, Subject, SubjectSpec};

/// Where `name` is on `PATH`, if it is: tools a command needs are checked before it starts.
pub fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        use std::os::unix::fs::PermissionsExt;
        candidate.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}
