//! A stored program as the campaign runs it: with its options and the driver generated
//! for it when it has no `main`.

use std::time::Instant;

use anyhow::{Context as _, Result};

use crate::fuzz::bug::interesting::FILLS;
use crate::fuzz::campaign::Campaign;
use crate::fuzz::folder::stats::DriverRecord;
use crate::fuzz::folder::store::ProgramRow;
use crate::fuzz::programs::seeds::own_options;
use crate::program::{Subject, SubjectSpec};

/// The program with the campaign's LLVM flags (and the driver generated for it, if any).
pub fn load(c: &Campaign, program: &ProgramRow, limits: crate::sandbox::Limits) -> Result<Subject> {
    let mut spec = SubjectSpec::new(c.dir.join(&program.ir), &options_of(c, program)).with_llvm(&c.llvm)?;
    spec.driver = Some(driver_path(c, program)).filter(|d| d.is_file());
    Subject::load(&spec, c.jobs, limits).with_context(|| format!("loading {}", program.ir))
}

/// Where the driver generated for a program without `main` is kept.
pub fn driver_path(c: &Campaign, program: &ProgramRow) -> std::path::PathBuf {
    c.dir.join(&program.ir).with_extension("driver.ll")
}

/// For a program without `main` (a seed, a mutant, llvm-stress output), a driver that
/// calls its functions on inputs its unoptimized code runs clean on (see
/// [`crate::program::driver`]), written beside it; the program reloaded with it. Without
/// one (no function a driver can call, or no clean call), only the optimizer is judged.
pub fn with_generated_driver(c: &mut Campaign, program: &ProgramRow, subject: Subject) -> Result<Subject> {
    let path = driver_path(c, program);
    let runs_here = crate::llvm::runs_on_host(&subject.target.cpu, &subject.target.features);
    if subject.module.has_main() || !subject.module.for_host() || !runs_here || path.is_file() {
        return Ok(subject);
    }
    let started = Instant::now();
    let seed = c.config.seed ^ (program.id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let llvm_args = crate::llvm::TargetSpec::split_flags(&options_of(c, program)).1;
    let generated = crate::program::driver::generate(&subject.module, &llvm_args, c.config.limits(), seed, FILLS);
    c.stats.spent_within("driver generation", started, "testing");
    let (record, with_driver) = match &generated {
        Ok(outcome) => (DriverRecord::of(outcome), outcome.driver.is_ok()),
        Err(e) => (DriverRecord::failed(&format!("{e:#}")), false),
    };
    c.stats.driver_generated(&path.with_extension("json"), record, with_driver)?;
    match generated {
        Ok(crate::program::driver::DriverOutcome { driver: Ok(driver), .. }) => {
            std::fs::write(&path, &driver.text)?;
            drop(subject);
            load(c, program, c.config.limits())
        }
        // The program is still tested: the optimizer alone is judged.
        Ok(_) | Err(_) => Ok(subject),
    }
}

/// The LLVM options `program` runs with: the campaign's, then its own (a seed's RUN line).
pub fn options_of(c: &Campaign, program: &ProgramRow) -> Vec<String> {
    let mut options = c.config.llvm_options();
    options.extend(own_options(&program.origin));
    options
}
