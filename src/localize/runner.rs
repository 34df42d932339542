//! Runs of one subject for isolation: pipelines through the sandbox, executions shared
//! between runs that produce the same module, and a count of the runs.

use anyhow::Result;

use crate::llvm::{IrModule, VerifyEach};
use crate::sandbox::{run_batch_cached, BatchItem, ExecCache, ExecMode, JobSpec, Pool, Run};
use crate::seq::{render_with, Catalog, RenderOptions, Sequence};

pub(super) struct Runner<'a> {
    pub pool: &'a mut Pool,
    pub module: &'a mut IrModule,
    pub catalog: &'a Catalog,
    pub render: RenderOptions,
    pub exec: ExecMode,
    pub verify: VerifyEach,
    pub cache: ExecCache,
    pub tests: usize,
}

impl Runner<'_> {
    pub fn text(&self, seq: &Sequence) -> Result<String> {
        Ok(render_with(seq, self.catalog, &self.render)?)
    }

    /// The text with one adaptor per pass, so that top-level element i is pass i.
    pub fn per_pass_text(&self, seq: &Sequence) -> Result<String> {
        Ok(render_with(&Sequence::flat(seq.passes().into_iter().cloned()), self.catalog, &self.render.per_pass())?)
    }

    /// A job for `pipeline` with this runner's execution and verification.
    pub fn job(&self, pipeline: &str) -> JobSpec {
        JobSpec { exec: self.exec, verify_each: self.verify, ..JobSpec::optimize(pipeline) }
    }

    pub fn run(&mut self, pipeline: &str, observe: bool) -> Result<Run> {
        let job = JobSpec { observe, ..self.job(pipeline) };
        Ok(self.run_all(vec![job])?.pop().expect("one run"))
    }

    /// Run every job, in parallel up to the pool's width; the runs in the jobs' order.
    pub fn run_all(&mut self, jobs: Vec<JobSpec>) -> Result<Vec<Run>> {
        self.tests += jobs.len();
        let mut out: Vec<Option<Run>> = vec![None; jobs.len()];
        let items = jobs.into_iter().enumerate().map(|(index, job)| BatchItem { index, job });
        run_batch_cached(self.pool, self.module, items, &mut self.cache, |i, r| out[i] = Some(r))?;
        Ok(out.into_iter().map(|r| r.expect("every job finishes")).collect())
    }
}
