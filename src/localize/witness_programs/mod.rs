//! Witness programs (DiWi, RecBi): mutants of the failing program that no longer fail
//! under the failing pipeline but drive LLVM through nearly the same code. Where LocSeq
//! varies the sequence, these vary the program; both end as rows of one spectrum.
//!
//! This module turns a mutant into a verdict with coverage (`Evaluator`); `program_search` holds
//! the loop, `diwi` and `recbi` the two ways of choosing the next rule.

mod a2c;
mod diwi;
pub mod program_search;
mod quality;
mod recbi;
pub mod stats;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::Serialize;

pub use program_search::{search_programs, ProgramSearch};
pub use stats::{Guidance, ProgramStats, Refusal};

use crate::llvm::{CFrontend, IrModule, TargetSpec};
use crate::mutate::witness::ir::IrMutator;
use crate::mutate::witness::{Mutator, Subset};
use crate::oracle::{Failure, Oracle, Verdict};
use crate::program::{screen_many, Screen, Screening};
use crate::sandbox::{run_each, ExecMode, ExecStatus, Execution, Focus, JobSpec, Pool};

/// What the failing program is written in, which decides the mutation backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProgramKind {
    C,
    Ir,
}

/// The failing program as text, and how to make a module of any mutant of it.
#[derive(Debug, Clone)]
pub struct ProgramInput {
    pub kind: ProgramKind,
    pub text: String,
    pub frontend: CFrontend,
    pub driver: Option<PathBuf>,
    pub target: TargetSpec,
}

impl ProgramInput {
    /// `path` as the subject loads it: `.c` is C, anything else IR (bitcode is read as text).
    pub fn read(path: &Path, frontend: &CFrontend, driver: Option<&Path>, target: &TargetSpec) -> Result<ProgramInput> {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let kind = if path.extension().is_some_and(|e| e == "c") { ProgramKind::C } else { ProgramKind::Ir };
        let text = match kind {
            ProgramKind::C => String::from_utf8(bytes).with_context(|| format!("{} is not text", path.display()))?,
            ProgramKind::Ir => crate::llvm::ir_text_of(&bytes).with_context(|| path.display().to_string())?,
        };
        Ok(ProgramInput {
            kind,
            text,
            frontend: frontend.clone(),
            driver: driver.map(Path::to_path_buf),
            target: target.clone(),
        })
    }

    /// The mutation backend for this program: DiWi's rules, and RecBi's structural ones too.
    pub fn mutator(&self, structural: bool) -> Result<Box<dyn Mutator>> {
        Ok(match self.kind {
            ProgramKind::C => {
                let mut rules = crate::mutate::witness::rules::diwi_rules();
                if structural {
                    let corpus = crate::mutate::witness::ingredients::Corpus::load_or_build()?;
                    rules.extend(crate::mutate::witness::rules::structural_rules(std::sync::Arc::new(corpus)));
                }
                Box::new(crate::mutate::witness::rules::CMutator::new(rules, crate::mutate::c_args()))
            }
            ProgramKind::Ir if structural => Box::new(IrMutator::new()),
            ProgramKind::Ir => Box::new(Subset::new(IrMutator::new(), |r| !r.class.is_structural())),
        })
    }
}

/// How one mutant turned out.
#[derive(Debug)]
pub enum Judged {
    /// Not a program the search can use; the reason, for the statistics.
    Invalid(Refusal),
    /// Still fails the same way (with its trace): a seed for higher-order mutants.
    Fails(Vec<u32>),
    /// Fails some other way: no evidence.
    Other(Failure),
    /// Passes, with its trace.
    Passes(Vec<u32>),
}

/// Judges mutants: builds each one's module, runs it unoptimized when the oracle compares
/// outputs, runs the failing pipeline with coverage, and screens passing C mutants for
/// undefined behaviour.
pub struct Evaluator<'a> {
    pub pool: &'a mut Pool,
    pub input: &'a ProgramInput,
    /// The failing run's pipeline and what its trace records.
    pub pipeline: String,
    pub focus: Option<Focus>,
    pub oracle: &'a Oracle,
    pub screen: Screen,
    /// Mutants are written here for clang.
    pub scratch: tempfile::TempDir,
    /// Wall seconds by phase: compile, reference runs, optimize, UB screening.
    pub seconds: std::collections::BTreeMap<&'static str, f64>,
}

impl Evaluator<'_> {
    fn module(&self, bytes: &[u8], name: &str) -> Option<IrModule> {
        let mut module = IrModule::from_bytes(bytes, name, &self.input.target).ok()?;
        if let Some(driver) = &self.input.driver {
            module.set_driver(driver).ok()?;
        }
        Some(module)
    }

    /// Whether `mutant`'s unoptimized run shows what the failing program's does: same exit,
    /// as many lines, not silent when it was not (a mutant must not pass by hiding output).
    fn shows_alike(&self, mutant: &Execution) -> bool {
        let Some(original) = &self.oracle.reference else { return true };
        mutant.status == original.status
            && matches!(mutant.status, ExecStatus::Exited(_))
            && mutant.stdout.lines().count() == original.stdout.lines().count()
    }

    fn timed<T>(&mut self, phase: &'static str, f: impl FnOnce(&mut Self) -> T) -> T {
        let started = std::time::Instant::now();
        let out = f(self);
        *self.seconds.entry(phase).or_default() += started.elapsed().as_secs_f64();
        out
    }

    /// 20 times the failing program's own run (code generation included), at least half a
    /// second, at most the pool's limit.
    fn mutant_exec_limit(&self) -> std::time::Duration {
        let full = self.pool.limits().exec_timeout;
        let own = self.oracle.reference.as_ref().map_or(full.as_secs_f64(), |r| r.millis / 1000.0);
        std::time::Duration::from_secs_f64((own * 20.0).max(0.5)).min(full)
    }

    /// Verdicts on `texts`, in order, evaluated `pool`-wide at once.
    pub fn judge_all(&mut self, texts: &[String]) -> Result<Vec<Judged>> {
        // A mutant that loops would hold a worker for the whole execution limit; one that
        // takes far longer than the program it came from is no witness anyway.
        let limit = self.mutant_exec_limit();
        let previous = self.pool.set_exec_timeout(limit);
        let judged = self.judge_with_limit(texts);
        self.pool.set_exec_timeout(previous);
        judged
    }

    fn judge_with_limit(&mut self, texts: &[String]) -> Result<Vec<Judged>> {
        let n = texts.len();
        let mut out: Vec<Option<Judged>> = (0..n).map(|_| None).collect();
        // C mutants as files: clang compiles them, and the sanitizers build them again.
        let paths = match self.input.kind {
            ProgramKind::Ir => Vec::new(),
            ProgramKind::C => self.write_sources(texts)?,
        };
        let bytes: Vec<Result<Vec<u8>, String>> = match self.input.kind {
            ProgramKind::Ir => texts.iter().map(|t| Ok(t.as_bytes().to_vec())).collect(),
            ProgramKind::C => self.timed("compile", |e| e.input.frontend.compile_many(&paths, e.pool.jobs())),
        };
        let mut work: Vec<(IrModule, JobSpec)> = Vec::new();
        let mut index = Vec::new();
        for (i, b) in bytes.iter().enumerate() {
            match b.as_ref().ok().and_then(|b| self.module(b, &format!("mutant{i}"))) {
                Some(m) => {
                    work.push((m, JobSpec { exec: ExecMode::Always, ..JobSpec::optimize("") }));
                    index.push(i);
                }
                None => out[i] = Some(Judged::Invalid(Refusal::Invalid)),
            }
        }
        let compares = self.oracle.needs_execution();
        if compares {
            let references = self.timed("reference", |e| run_each(e.pool, &mut work))?;
            let mut kept = Vec::new();
            let mut kept_index = Vec::new();
            let mut refs = Vec::new();
            for ((module, _), (i, run)) in work.into_iter().zip(index.into_iter().zip(references)) {
                match run.execution.filter(|e| self.shows_alike(e)) {
                    Some(e) => {
                        kept.push((module, JobSpec::optimize("")));
                        kept_index.push(i);
                        refs.push(e);
                    }
                    None => out[i] = Some(Judged::Invalid(Refusal::Shows)),
                }
            }
            (work, index) = (kept, kept_index);
            self.timed("optimize", |e| e.optimize(&mut work, &index, Some(refs), &mut out))?;
        } else {
            self.timed("optimize", |e| e.optimize(&mut work, &index, None, &mut out))?;
        }
        if compares && self.input.kind == ProgramKind::C {
            self.timed("ub-screening", |e| e.screen_passing(&paths, &mut out));
        }
        Ok(out.into_iter().map(|j| j.expect("every mutant judged")).collect())
    }

    fn write_sources(&self, texts: &[String]) -> Result<Vec<PathBuf>> {
        let mut paths = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let path = self.scratch.path().join(format!("mutant{i}.c"));
            std::fs::write(&path, t)?;
            paths.push(path);
        }
        Ok(paths)
    }

    /// The failing pipeline on each module, with coverage; `references` are the modules'
    /// own unoptimized executions when the oracle compares outputs.
    fn optimize(
        &mut self,
        work: &mut [(IrModule, JobSpec)],
        index: &[usize],
        references: Option<Vec<Execution>>,
        out: &mut [Option<Judged>],
    ) -> Result<()> {
        let exec = if references.is_some() { ExecMode::Always } else { ExecMode::Never };
        for (_, job) in work.iter_mut() {
            *job = JobSpec {
                exec,
                observe: true,
                focus: self.focus.clone(),
                verify_each: self.oracle.verify_each(),
                ..JobSpec::optimize(self.pipeline.clone())
            };
        }
        let runs = run_each(self.pool, work)?;
        for (k, mut run) in runs.into_iter().enumerate() {
            let oracle = Oracle {
                expected: self.oracle.expected.clone(),
                reference: references.as_ref().map(|r| r[k].clone()),
                pattern: self.oracle.pattern.clone(),
                script: None,
                crash_in: self.oracle.crash_in.clone(),
                fault_in: self.oracle.fault_in.clone(),
            };
            let verdict = oracle.judge(&run, &self.pipeline)?;
            let trace = run.trace.take().unwrap_or_default();
            out[index[k]] = Some(match verdict {
                Verdict::Passes => Judged::Passes(trace),
                Verdict::Same => Judged::Fails(trace),
                Verdict::Other(failure) => Judged::Other(failure),
                Verdict::Rejected => Judged::Invalid(Refusal::Rejected),
            });
        }
        Ok(())
    }

    /// UBSan and ASan on every passing C mutant: undefined behaviour makes any output
    /// "agree" (spec diwi.md §9).
    fn screen_passing(&mut self, sources: &[PathBuf], out: &mut [Option<Judged>]) {
        let passing: Vec<usize> = (0..sources.len()).filter(|&i| matches!(out[i], Some(Judged::Passes(_)))).collect();
        if passing.is_empty() {
            return;
        }
        let chosen: Vec<PathBuf> = passing.iter().map(|&i| sources[i].clone()).collect();
        let verdicts = screen_many(&chosen, &self.screen, self.pool.jobs());
        for (&i, verdict) in passing.iter().zip(verdicts) {
            if !matches!(verdict, Screening::Clean { .. }) {
                out[i] = Some(Judged::Invalid(Refusal::Undefined));
            }
        }
    }
}
