//! Test programs: csmith generation (default, swarm and the swarm variant, §3.1 of the
//! spec), regenerated up to a minimum size (§2.4), and undefined-behaviour screening of the
//! unoptimized build with UBSan and ASan (§4.6), whose clean run gives the reference output.
//!
//! Both run many external processes at once without threads, because callers fork later.

mod children;
mod generate;
mod screen;
mod swarm;
#[cfg(test)]
mod tests;

pub use generate::{generate, generate_many, GenConfig, Generated, Generator};
pub use screen::{screen, screen_many, Screen, Screening};
