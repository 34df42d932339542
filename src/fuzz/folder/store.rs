//! Campaign state in one SQLite file: what was planned, which pairs are done, which
//! failures were seen and which bugs they are. Every finished pair is committed at once,
//! so an interrupted campaign resumes without redoing or losing work.

use std::path::Path;

use anyhow::{bail, Context as _, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::sandbox::Llvm;

pub struct Store {
    db: Connection,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS iterations (
    iteration INTEGER PRIMARY KEY, state TEXT NOT NULL, started TEXT NOT NULL, finished TEXT);
CREATE TABLE IF NOT EXISTS programs (
    id INTEGER PRIMARY KEY, iteration INTEGER NOT NULL, name TEXT NOT NULL, origin TEXT NOT NULL,
    source TEXT, ir TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'planned', reference TEXT);
CREATE TABLE IF NOT EXISTS sequences (
    id INTEGER PRIMARY KEY, iteration INTEGER NOT NULL, pipeline TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS own_sequences (
    sequence INTEGER PRIMARY KEY, program INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pairs (
    program INTEGER NOT NULL, sequence INTEGER NOT NULL, outcome TEXT NOT NULL, ir_hash TEXT,
    exec TEXT, millis REAL NOT NULL, PRIMARY KEY (program, sequence));
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY, program INTEGER NOT NULL, sequence INTEGER NOT NULL, kind TEXT NOT NULL,
    signature TEXT NOT NULL, detail TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', bug INTEGER,
    UNIQUE (program, sequence));
CREATE TABLE IF NOT EXISTS bugs (
    id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, pass TEXT NOT NULL,
    signature TEXT NOT NULL, reduced TEXT NOT NULL, program INTEGER NOT NULL, first_seen TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 1, dir TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS variants (
    id INTEGER PRIMARY KEY, bug INTEGER NOT NULL, key TEXT NOT NULL, signature TEXT NOT NULL,
    reduced TEXT NOT NULL, program INTEGER NOT NULL, dir TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS timeline (
    run TEXT NOT NULL, at REAL NOT NULL, pairs INTEGER NOT NULL, failures INTEGER NOT NULL,
    bugs INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS selection (
    iteration INTEGER NOT NULL, kind TEXT NOT NULL, item INTEGER NOT NULL, x REAL NOT NULL,
    y REAL NOT NULL, selected INTEGER NOT NULL, PRIMARY KEY (iteration, kind, item));
";

/// Another face of a bug: a failure with its own key (another top frame, another message)
/// that cross-reproduces with the bug, so has the same cause.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VariantRow {
    pub bug: i64,
    pub key: String,
    pub signature: String,
    pub reduced: String,
    pub program: i64,
    /// Its folder, inside the bug's.
    pub dir: String,
}

#[derive(Debug, Clone)]
pub struct ProgramRow {
    pub id: i64,
    pub iteration: i64,
    pub name: String,
    pub origin: String,
    pub source: Option<String>,
    pub ir: String,
    pub status: String,
}

#[derive(Debug, Clone)]
pub struct FailureRow {
    pub id: i64,
    pub program: i64,
    pub sequence: i64,
    pub kind: String,
    pub signature: String,
    pub detail: String,
}

#[derive(Debug, Clone)]
pub struct BugRow {
    pub id: i64,
    pub key: String,
    pub kind: String,
    pub pass: String,
    pub signature: String,
    pub reduced: String,
    pub program: i64,
    pub first_seen: String,
    pub count: i64,
    pub dir: String,
}

/// One pair of a program: its sequence, its execution (JSON; none when the optimizer
/// failed) and the hash of its optimized IR.
#[derive(Debug, Clone)]
pub struct PairResult {
    pub sequence: i64,
    pub exec: Option<String>,
    pub ir_hash: Option<String>,
}

/// What one generator's programs gave a campaign.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GeneratorCounts {
    pub programs_tested: i64,
    pub pairs: i64,
    pub failures: i64,
    pub bugs: i64,
}

/// A sample of a campaign's progress, taken while it runs: `ctos report --html` plots them.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    /// Which run of the campaign (each start or resume is one; a merged campaign's are
    /// named by shard).
    pub run: String,
    /// Unix time, seconds.
    pub at: f64,
    pub pairs: i64,
    pub failures: i64,
    pub bugs: i64,
}

/// One point of an iteration's pool in the 2-D projection of its embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectionPoint {
    pub iteration: i64,
    /// `sequence` or `program`.
    pub kind: String,
    pub item: i64,
    pub x: f64,
    pub y: f64,
    pub selected: bool,
}

/// Failures of one kind whose bug has one culprit pass (or that are not a bug yet).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FailureCount {
    pub kind: String,
    pub pass: String,
    pub count: i64,
}

/// The outcome a pair is kept with when its pipeline broke a pass's precondition, as
/// LLVM's message says ([`crate::oracle::Observation::Misuse`]): neither a failure nor a vote.
pub const MISUSE: &str = "misuse";

pub fn now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{secs}")
}

impl Store {
    pub fn open(path: &Path) -> Result<Store> {
        let db = Connection::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        // `ctos report` may read while a campaign writes: wait for the lock, do not fail.
        db.busy_timeout(std::time::Duration::from_secs(30))?;
        // WAL: a kill at any moment leaves the last committed state readable.
        db.pragma_update(None, "journal_mode", "WAL")?;
        db.pragma_update(None, "synchronous", "NORMAL")?;
        db.execute_batch(SCHEMA)?;
        Ok(Store { db })
    }

    /// For readers (`ctos report`, `ctos merge`): nothing is created or changed, and a
    /// campaign that is running meanwhile is read as of its last commit.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Connection::open_with_flags(path, flags).with_context(|| format!("cannot open {}", path.display()))?;
        db.busy_timeout(std::time::Duration::from_secs(30))?;
        Ok(Store { db })
    }

    pub fn get_meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self.db.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", [key, value])?;
        Ok(())
    }

    /// The iteration to continue (planned, unfinished), if any.
    pub fn open_iteration(&self) -> Result<Option<i64>> {
        Ok(self
            .db
            .query_row(
                "SELECT iteration FROM iterations WHERE state != 'finished' ORDER BY iteration LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn finished_iterations(&self) -> Result<i64> {
        Ok(self.db.query_row("SELECT COUNT(*) FROM iterations WHERE state = 'finished'", [], |r| r.get(0))?)
    }

    pub fn iterations(&self) -> Result<i64> {
        Ok(self.db.query_row("SELECT COUNT(*) FROM iterations", [], |r| r.get(0))?)
    }

    pub fn begin_iteration(&self, iteration: i64) -> Result<()> {
        self.db.execute(
            "INSERT OR IGNORE INTO iterations (iteration, state, started) VALUES (?1, 'planning', ?2)",
            params![iteration, now()],
        )?;
        Ok(())
    }

    pub fn set_iteration_state(&self, iteration: i64, state: &str) -> Result<()> {
        let finished = (state == "finished").then(now);
        self.db.execute(
            "UPDATE iterations SET state = ?2, finished = ?3 WHERE iteration = ?1",
            params![iteration, state, finished],
        )?;
        Ok(())
    }

    pub fn iteration_state(&self, iteration: i64) -> Result<Option<String>> {
        Ok(self
            .db
            .query_row("SELECT state FROM iterations WHERE iteration = ?1", [iteration], |r| r.get(0))
            .optional()?)
    }

    /// Store a whole iteration's plan in one transaction: a kill never leaves half a plan.
    /// An iteration's programs and the sequences all of them run, with each program's own
    /// sequences (`own[k]` for `programs[k]`; a seed's RUN pipelines and their variants).
    pub fn save_plan(
        &mut self,
        iteration: i64,
        programs: &[ProgramRow],
        sequences: &[String],
        own: &[Vec<String>],
    ) -> Result<()> {
        let tx = self.db.transaction()?;
        for (k, p) in programs.iter().enumerate() {
            tx.execute(
                "INSERT INTO programs (iteration, name, origin, source, ir) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![iteration, p.name, p.origin, p.source, p.ir],
            )?;
            let program = tx.last_insert_rowid();
            for s in own.get(k).into_iter().flatten() {
                tx.execute("INSERT INTO sequences (iteration, pipeline) VALUES (?1, ?2)", params![iteration, s])?;
                tx.execute(
                    "INSERT INTO own_sequences (sequence, program) VALUES (?1, ?2)",
                    params![tx.last_insert_rowid(), program],
                )?;
            }
        }
        for s in sequences {
            tx.execute("INSERT INTO sequences (iteration, pipeline) VALUES (?1, ?2)", params![iteration, s])?;
        }
        tx.execute("UPDATE iterations SET state = 'testing' WHERE iteration = ?1", [iteration])?;
        tx.commit()?;
        Ok(())
    }

    pub fn programs(&self, iteration: i64) -> Result<Vec<ProgramRow>> {
        let mut st = self.db.prepare(
            "SELECT id, iteration, name, origin, source, ir, status FROM programs WHERE iteration = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([iteration], |r| {
            Ok(ProgramRow {
                id: r.get(0)?,
                iteration: r.get(1)?,
                name: r.get(2)?,
                origin: r.get(3)?,
                source: r.get(4)?,
                ir: r.get(5)?,
                status: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Why programs were skipped, with their origins.
    pub fn skipped_programs(&self) -> Result<Vec<(String, String)>> {
        let mut st = self.db.prepare("SELECT origin, status FROM programs WHERE status LIKE 'skipped%'")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn program(&self, id: i64) -> Result<ProgramRow> {
        let iteration: i64 = self.db.query_row("SELECT iteration FROM programs WHERE id = ?1", [id], |r| r.get(0))?;
        self.programs(iteration)?.into_iter().find(|p| p.id == id).context("program vanished")
    }

    /// The sequences every program of `iteration` runs.
    pub fn sequences(&self, iteration: i64) -> Result<Vec<(i64, String)>> {
        let mut st = self.db.prepare(
            "SELECT id, pipeline FROM sequences WHERE iteration = ?1 \
             AND id NOT IN (SELECT sequence FROM own_sequences) ORDER BY id",
        )?;
        let rows = st.query_map([iteration], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The sequences only `program` runs.
    pub fn own_sequences(&self, program: i64) -> Result<Vec<(i64, String)>> {
        let mut st = self.db.prepare(
            "SELECT id, pipeline FROM sequences JOIN own_sequences ON sequence = id WHERE program = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([program], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn sequence(&self, id: i64) -> Result<String> {
        Ok(self.db.query_row("SELECT pipeline FROM sequences WHERE id = ?1", [id], |r| r.get(0))?)
    }

    pub fn set_program_status(&self, id: i64, status: &str, reference: Option<&str>) -> Result<()> {
        self.db.execute(
            "UPDATE programs SET status = ?2, reference = COALESCE(?3, reference) WHERE id = ?1",
            params![id, status, reference],
        )?;
        Ok(())
    }

    pub fn reference(&self, id: i64) -> Result<Option<String>> {
        Ok(self.db.query_row("SELECT reference FROM programs WHERE id = ?1", [id], |r| r.get(0))?)
    }

    /// Sequences already tested on `program`.
    pub fn done_sequences(&self, program: i64) -> Result<Vec<i64>> {
        let mut st = self.db.prepare("SELECT sequence FROM pairs WHERE program = ?1")?;
        let rows = st.query_map([program], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Each pair of `program`.
    pub fn pair_results(&self, program: i64) -> Result<Vec<PairResult>> {
        let mut st = self.db.prepare("SELECT sequence, exec, ir_hash FROM pairs WHERE program = ?1")?;
        let rows =
            st.query_map([program], |r| Ok(PairResult { sequence: r.get(0)?, exec: r.get(1)?, ir_hash: r.get(2)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn save_pair(
        &self,
        program: i64,
        sequence: i64,
        outcome: &str,
        ir_hash: Option<&str>,
        exec: Option<&str>,
        millis: f64,
    ) -> Result<()> {
        self.db.execute(
            "INSERT OR REPLACE INTO pairs (program, sequence, outcome, ir_hash, exec, millis) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![program, sequence, outcome, ir_hash, exec, millis],
        )?;
        Ok(())
    }

    pub fn add_failure(&self, program: i64, sequence: i64, kind: &str, signature: &str, detail: &str) -> Result<()> {
        self.db.execute(
            "INSERT OR IGNORE INTO failures (program, sequence, kind, signature, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![program, sequence, kind, signature, detail],
        )?;
        Ok(())
    }

    pub fn pending_failures(&self) -> Result<Vec<FailureRow>> {
        let mut st = self.db.prepare(
            "SELECT id, program, sequence, kind, signature, detail FROM failures WHERE state = 'pending' ORDER BY id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(FailureRow {
                id: r.get(0)?,
                program: r.get(1)?,
                sequence: r.get(2)?,
                kind: r.get(3)?,
                signature: r.get(4)?,
                detail: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn resolve_failure(&self, id: i64, state: &str, bug: Option<i64>) -> Result<()> {
        self.db.execute("UPDATE failures SET state = ?2, bug = ?3 WHERE id = ?1", params![id, state, bug])?;
        if let Some(bug) = bug {
            self.db.execute(
                "UPDATE bugs SET count = (SELECT COUNT(*) FROM failures WHERE bug = ?1) WHERE id = ?1",
                [bug],
            )?;
        }
        Ok(())
    }

    /// The bug with this key, its own or one of its variants'.
    pub fn bug_by_key(&self, key: &str) -> Result<Option<BugRow>> {
        let bugs = self.bugs()?;
        if let Some(b) = bugs.iter().find(|b| b.key == key) {
            return Ok(Some(b.clone()));
        }
        let owner = self.variants()?.into_iter().find(|v| v.key == key).map(|v| v.bug);
        Ok(owner.and_then(|id| bugs.into_iter().find(|b| b.id == id)))
    }

    pub fn add_variant(&self, v: &VariantRow) -> Result<()> {
        self.db.execute(
            "INSERT INTO variants (bug, key, signature, reduced, program, dir) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![v.bug, v.key, v.signature, v.reduced, v.program, v.dir],
        )?;
        Ok(())
    }

    /// Every variant, by bug then age; none in a campaign older than variants.
    pub fn variants(&self) -> Result<Vec<VariantRow>> {
        if !self.has_table("variants")? {
            return Ok(Vec::new());
        }
        let mut st =
            self.db.prepare("SELECT bug, key, signature, reduced, program, dir FROM variants ORDER BY bug, id")?;
        let rows = st.query_map([], |r| {
            Ok(VariantRow {
                bug: r.get(0)?,
                key: r.get(1)?,
                signature: r.get(2)?,
                reduced: r.get(3)?,
                program: r.get(4)?,
                dir: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn add_bug(&self, bug: &BugRow) -> Result<i64> {
        self.db.execute(
            "INSERT INTO bugs (key, kind, pass, signature, reduced, program, first_seen, count, dir)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8)",
            params![bug.key, bug.kind, bug.pass, bug.signature, bug.reduced, bug.program, bug.first_seen, bug.dir],
        )?;
        Ok(self.db.last_insert_rowid())
    }

    pub fn set_bug_count(&self, id: i64, count: i64) -> Result<()> {
        self.db.execute("UPDATE bugs SET count = ?2 WHERE id = ?1", params![id, count])?;
        Ok(())
    }

    pub fn set_bug_first_seen(&self, id: i64, first_seen: &str) -> Result<()> {
        self.db.execute("UPDATE bugs SET first_seen = ?2 WHERE id = ?1", params![id, first_seen])?;
        Ok(())
    }

    pub fn bugs(&self) -> Result<Vec<BugRow>> {
        let mut st = self.db.prepare(
            "SELECT id, key, kind, pass, signature, reduced, program, first_seen, count, dir FROM bugs ORDER BY id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(BugRow {
                id: r.get(0)?,
                key: r.get(1)?,
                kind: r.get(2)?,
                pass: r.get(3)?,
                signature: r.get(4)?,
                reduced: r.get(5)?,
                program: r.get(6)?,
                first_seen: r.get(7)?,
                count: r.get(8)?,
                dir: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// (pairs, programs tested, failures) so far.
    pub fn counts(&self) -> Result<(i64, i64, i64)> {
        Ok(self.db.query_row(
            "SELECT (SELECT COUNT(*) FROM pairs), (SELECT COUNT(*) FROM programs WHERE status = 'tested'),
                    (SELECT COUNT(*) FROM failures)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?)
    }

    /// Record how many random sequences iteration `iteration`'s exclusion patterns dropped
    /// (a re-planned iteration overwrites its count).
    pub fn add_excluded(&self, iteration: i64, dropped: usize) -> Result<()> {
        self.set_meta(&format!("excluded:{iteration}"), &dropped.to_string())
    }

    /// Random sequences dropped for containing an excluded pattern, over all iterations.
    pub fn excluded(&self) -> Result<i64> {
        Ok(self.db.query_row(
            "SELECT COALESCE(SUM(CAST(value AS INTEGER)), 0) FROM meta WHERE key LIKE 'excluded:%'",
            [],
            |r| r.get(0),
        )?)
    }

    /// Pairs whose pipeline LLVM refused: none, when the campaign's input was checked.
    pub fn rejected_pairs(&self) -> Result<i64> {
        self.pairs_with_outcome("rejected")
    }

    /// Pairs whose pipeline broke a pass's precondition, as LLVM said (outcome [`MISUSE`]).
    pub fn misuse_pairs(&self) -> Result<i64> {
        self.pairs_with_outcome(MISUSE)
    }

    fn pairs_with_outcome(&self, outcome: &str) -> Result<i64> {
        Ok(self.db.query_row("SELECT COUNT(*) FROM pairs WHERE outcome = ?1", [outcome], |r| r.get(0))?)
    }

    /// What each generator's programs gave: programs tested, pairs, failures, and bugs
    /// first found on one of its programs. A user's programs count as `programs`.
    pub fn by_generator(&self) -> Result<std::collections::BTreeMap<String, GeneratorCounts>> {
        let mut statement = self.db.prepare(
            "WITH p AS (SELECT id, status, COALESCE(json_extract(origin, '$.generator'), 'programs') AS g FROM programs)
             SELECT g, SUM(status = 'tested'),
                    (SELECT COUNT(*) FROM pairs JOIN p AS q ON q.id = pairs.program WHERE q.g = p.g),
                    (SELECT COUNT(*) FROM failures JOIN p AS q ON q.id = failures.program WHERE q.g = p.g),
                    (SELECT COUNT(*) FROM bugs JOIN p AS q ON q.id = bugs.program WHERE q.g = p.g)
             FROM p GROUP BY g",
        )?;
        let rows = statement.query_map([], |r| {
            let counts =
                GeneratorCounts { programs_tested: r.get(1)?, pairs: r.get(2)?, failures: r.get(3)?, bugs: r.get(4)? };
            Ok((r.get::<_, String>(0)?, counts))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Failures resolved as `state` (`elsewhere`: a cause another shard published).
    pub fn failures_resolved_as(&self, state: &str) -> Result<i64> {
        Ok(self.db.query_row("SELECT COUNT(*) FROM failures WHERE state = ?1", [state], |r| r.get(0))?)
    }

    /// Programs with a given status prefix (`emi-mismatch`, `skipped` …).
    pub fn programs_with_status(&self, prefix: &str) -> Result<i64> {
        Ok(self.db.query_row("SELECT COUNT(*) FROM programs WHERE status LIKE ?1 || '%'", [prefix], |r| r.get(0))?)
    }

    /// Whether the store has `table`: a campaign made by an older ctos may not.
    fn has_table(&self, table: &str) -> Result<bool> {
        let n: i64 = self.db.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    pub fn add_timeline(&self, row: &TimelineRow) -> Result<()> {
        self.db.execute(
            "INSERT INTO timeline (run, at, pairs, failures, bugs) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![row.run, row.at, row.pairs, row.failures, row.bugs],
        )?;
        Ok(())
    }

    /// Every sample, by run then time.
    pub fn timeline(&self) -> Result<Vec<TimelineRow>> {
        if !self.has_table("timeline")? {
            return Ok(Vec::new());
        }
        let mut st = self.db.prepare("SELECT run, at, pairs, failures, bugs FROM timeline ORDER BY run, at")?;
        let rows = st.query_map([], |r| {
            Ok(TimelineRow { run: r.get(0)?, at: r.get(1)?, pairs: r.get(2)?, failures: r.get(3)?, bugs: r.get(4)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Replace an iteration's projection of one kind (a re-planned iteration draws anew).
    pub fn save_selection(&mut self, points: &[SelectionPoint]) -> Result<()> {
        let tx = self.db.transaction()?;
        if let Some(first) = points.first() {
            tx.execute(
                "DELETE FROM selection WHERE iteration = ?1 AND kind = ?2",
                params![first.iteration, first.kind],
            )?;
        }
        for p in points {
            tx.execute(
                "INSERT INTO selection (iteration, kind, item, x, y, selected) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![p.iteration, p.kind, p.item, p.x, p.y, p.selected],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The projection of the newest iteration that has one of `kind`.
    pub fn latest_selection(&self, kind: &str) -> Result<Vec<SelectionPoint>> {
        if !self.has_table("selection")? {
            return Ok(Vec::new());
        }
        let mut st = self.db.prepare(
            "SELECT iteration, kind, item, x, y, selected FROM selection WHERE kind = ?1 AND iteration =
             (SELECT MAX(iteration) FROM selection WHERE kind = ?1) ORDER BY item",
        )?;
        let rows = st.query_map([kind], |r| {
            Ok(SelectionPoint {
                iteration: r.get(0)?,
                kind: r.get(1)?,
                item: r.get(2)?,
                x: r.get(3)?,
                y: r.get(4)?,
                selected: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Failures by kind and by the culprit pass of the bug each became; one not (yet) a
    /// bug is counted under why.
    pub fn failure_counts(&self) -> Result<Vec<FailureCount>> {
        let mut st = self.db.prepare(
            "SELECT f.kind, CASE WHEN b.pass IS NOT NULL THEN b.pass
                                 WHEN f.state = 'pending' THEN '(not reduced yet)'
                                 WHEN f.state = 'not-reproduced' THEN '(did not fire again)'
                                 ELSE '(' || f.state || ')' END, COUNT(*)
             FROM failures f LEFT JOIN bugs b ON f.bug = b.id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2",
        )?;
        let rows = st.query_map([], |r| Ok(FailureCount { kind: r.get(0)?, pass: r.get(1)?, count: r.get(2)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sum of per-pair child time (ms), for throughput reports.
    pub fn pair_millis(&self) -> Result<f64> {
        Ok(self.db.query_row("SELECT COALESCE(SUM(millis), 0) FROM pairs", [], |r| r.get(0))?)
    }
}

/// The campaign folder's database.
pub const DB: &str = "campaign.sqlite";

/// The version the campaign recorded when it started (older campaigns did not: the linked).
pub fn recorded_llvm_version(store: &Store) -> Result<String> {
    Ok(store.get_meta("llvm_version")?.unwrap_or_else(|| Llvm::Linked.version()))
}

/// The campaign's store, read-only, after checking that `dir` holds one.
pub fn open_campaign(dir: &Path) -> Result<Store> {
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    if !dir.join(DB).is_file() {
        bail!("{} holds no campaign (no {DB}); start one with ctos fuzz --out {}", dir.display(), dir.display());
    }
    let store = Store::open_read_only(&dir.join(DB))?;
    if store.get_meta("config").ok().flatten().is_none() {
        bail!("{} is not a ctos campaign (its {DB} has no configuration)", dir.display());
    }
    Ok(store)
}

/// How a failure is resolved whose cause another shard published.
pub const ELSEWHERE: &str = "elsewhere";
