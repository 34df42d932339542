//! A program under test as the engine runs it: its module (with a driver, built for the
//! target the LLVM flags name) and a pool of sandboxed children that apply the other LLVM
//! flags. Front doors, campaigns, reducers and searches all load programs this way.

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};

use crate::llvm::{CFrontend, IrModule, TargetSpec};
use crate::sandbox::agent::AgentProgram;
use crate::sandbox::{check_pipelines, ExecMode, Execution, JobSpec, Limits, Llvm, Pool, Rejection};
use crate::seq::Catalog;

/// Where a program under test comes from and how LLVM is configured for it.
#[derive(Debug, Clone)]
pub struct SubjectSpec {
    /// LLVM IR (.ll), bitcode (.bc) or C (.c, compiled by `frontend`).
    pub program: PathBuf,
    /// A module linked in after optimization, before execution.
    pub driver: Option<PathBuf>,
    pub frontend: CFrontend,
    /// LLVM options as `opt` takes them, target flags (`-mtriple=` …) included.
    pub llvm_args: Vec<String>,
    /// The LLVM that runs the pipelines.
    pub llvm: Llvm,
}

impl SubjectSpec {
    /// Run the pipelines in `llvm`, with C compiled by a clang whose IR it reads (see
    /// [`Llvm::clang`]).
    pub fn with_llvm(mut self, llvm: &Llvm) -> Result<SubjectSpec> {
        self.frontend.clang = llvm.clang()?;
        self.llvm = llvm.clone();
        Ok(self)
    }

    pub fn new(program: impl Into<PathBuf>, llvm_args: &[String]) -> SubjectSpec {
        SubjectSpec {
            program: program.into(),
            driver: None,
            frontend: CFrontend::default(),
            llvm_args: llvm_args.to_vec(),
            llvm: Llvm::Linked,
        }
    }
}

/// The passes of the LLVM that runs the pipelines: read from an external `opt` (its
/// passes, not ours), else the linked LLVM's, compiled in.
pub fn catalog_for(llvm: &Llvm) -> Result<Catalog> {
    Ok(match llvm {
        Llvm::External(o) => Catalog::of_opt(&o.opt, o.major())?,
        Llvm::Linked => Catalog::for_llvm(llvm.major())?,
    })
}

pub struct Subject {
    pub module: IrModule,
    pub pool: Pool,
    pub target: TargetSpec,
}

impl Subject {
    /// Load the program (and driver) and start a pool of `jobs` children with `limits`.
    pub fn load(spec: &SubjectSpec, jobs: usize, limits: Limits) -> Result<Subject> {
        if let Some(why) = spec.llvm_args.iter().find_map(|a| crate::llvm::opt_driver_flag_refusal(a)) {
            anyhow::bail!("--llvm-arg {why}");
        }
        let (target, llvm_args) = TargetSpec::split_flags(&spec.llvm_args);
        must_be_file(&spec.program, "")?;
        if let Some(driver) = &spec.driver {
            must_be_file(driver, " (the --driver)")?;
        }
        let name = spec.program.display().to_string();
        let is_c = spec.program.extension().is_some_and(|e| e == "c");
        let bytes = spec.frontend.ir_bytes(&spec.program)?;
        let mut module = IrModule::from_bytes(&bytes, &name, &target).with_context(|| match &spec.llvm {
            Llvm::External(_) => format!("the linked LLVM {} reads the program too", Llvm::Linked.version()),
            Llvm::Linked => format!("loading {name}"),
        })?;
        if let Some(driver) = &spec.driver {
            module.set_driver(driver).with_context(|| format!("loading the driver {}", driver.display()))?;
        }
        let pool = match &spec.llvm {
            Llvm::Linked => Pool::new(jobs, limits, llvm_args)?,
            Llvm::External(opt) => {
                // The agent's opt parses the program itself, from a file (once, as it
                // starts): C as its clang made it.
                let compiled = match is_c {
                    true => {
                        let file = tempfile::Builder::new().prefix("ctos-program-").suffix(".bc").tempfile()?;
                        std::fs::write(file.path(), &bytes)?;
                        Some(file)
                    }
                    false => None,
                };
                let program = AgentProgram {
                    ir: compiled.as_ref().map_or_else(|| spec.program.clone(), |f| f.path().to_path_buf()),
                    driver: spec.driver.clone(),
                    triple: target.triple.clone(),
                    cpu: target.cpu.clone(),
                    features: target.features.clone(),
                };
                Pool::external(jobs, limits, llvm_args, opt, &program)?
            }
        };
        Ok(Subject { module, pool, target })
    }

    /// Check the LLVM flags and `pipelines` with LLVM itself (see [`check_pipelines`]).
    pub fn check(&mut self, pipelines: &[String]) -> Result<(), Rejection> {
        // The program's triple: flags that mean something to its target mean nothing to another.
        let target = TargetSpec { triple: Some(self.module.triple()), ..self.target.clone() };
        check_pipelines(&mut self.pool, &target, pipelines)
    }

    /// The unoptimized program's execution: what optimized runs are compared with.
    pub fn reference(&mut self) -> Result<Execution> {
        reference_execution(&mut self.pool, &mut self.module)
    }
}

fn must_be_file(path: &std::path::Path, what: &str) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => bail!("{}: not a file{what}", path.display()),
        Err(_) => bail!("{}: no such file{what}", path.display()),
    }
}

/// Run `main` of the unoptimized `module` in the sandbox (the pool must be idle).
pub fn reference_execution(pool: &mut Pool, module: &mut IrModule) -> Result<Execution> {
    reference_execution_filled(pool, module, None)
}

/// The unoptimized program's execution with its fresh memory filled with `fill` (see
/// [`JobSpec::fill_memory`]).
pub fn reference_execution_filled(pool: &mut Pool, module: &mut IrModule, fill: Option<u8>) -> Result<Execution> {
    if !module.has_main() {
        bail!("the program has no main function to execute (give one with --driver FILE.ll)");
    }
    if !module.for_host() {
        bail!(
            "programs execute on this host only ({}), and the program is for {}",
            crate::llvm::host_triple(),
            module.triple()
        );
    }
    let job = JobSpec { exec: ExecMode::Always, fill_memory: fill, ..JobSpec::optimize("") };
    let run = pool.run_one(module, &job)?;
    match run.execution {
        Some(execution) => Ok(execution),
        None => {
            let why = run.message.unwrap_or_else(|| run.stderr.lines().last().unwrap_or("no message").to_string());
            bail!("the unoptimized program cannot be run: {why}")
        }
    }
}
