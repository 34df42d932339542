//! Where breakpoints go: every LLVM function entry, or every basic-block start.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction};

use super::attribution::{Attribution, LlvmFunction};
use super::Granularity;

/// The coverage elements of one granularity. Site `i` is at `addrs[i]` in function
/// `function[i]` of the attribution.
pub struct Sites {
    pub granularity: Granularity,
    pub attribution: Attribution,
    pub addrs: Vec<u64>,
    pub function: Vec<u32>,
    /// Per site, [`FOLLOWS`] if the code from the site before it runs into it without a
    /// branch, call or return, [`TARGET`] if code elsewhere jumps or calls to it (blocks
    /// only; see src/coverage/traps.h).
    pub(super) reached: Vec<u8>,
}

impl Sites {
    /// The table of this process's LLVM; no breakpoint may be armed meanwhile (the code
    /// is read).
    pub fn new(granularity: Granularity) -> Sites {
        let attribution = Attribution::of_this_process();
        // The code is mapped in this process; it is read before any breakpoint is armed.
        let code = |f: &LlvmFunction| Some(unsafe { std::slice::from_raw_parts(f.addr as *const u8, f.size as usize) });
        let (addrs, function, reached) = sites_of(&attribution, granularity, code);
        Sites { granularity, attribution, addrs, function, reached }
    }

    /// Per site, how src/coverage/traps.h may arm it: [`MAY_PATCH`] where its function
    /// holds the 5 bytes of a patched jump from the site on (a patch must not spill into
    /// the next function), and how it is reached ([`FOLLOWS`], [`TARGET`]). With
    /// `CTOS_COVERAGE_TRAPS=int3`, no patches: every site an `int3`, the mechanism patches
    /// replaced, to compare the two (benches/isolate.rs).
    pub fn patch_flags(&self) -> Vec<u8> {
        let int3_only = std::env::var_os("CTOS_COVERAGE_TRAPS").is_some_and(|v| v == "int3");
        (self.addrs.iter().zip(&self.function).zip(&self.reached))
            .map(|((&a, &f), &reached)| {
                let f = &self.attribution.functions[f as usize];
                let room = a + 5 <= f.addr + f.size && !int3_only;
                u8::from(room) * MAY_PATCH | reached
            })
            .collect()
    }

    /// The sites `keep` selects, as src/coverage/traps.h arms them alone: addresses, patch
    /// flags, and each one's index in this table. A kept site runs into the one before it
    /// only if every site between them (left out or not) runs into its own predecessor;
    /// a patch may not cover a left-out site that a jump reaches, for that jump would land
    /// inside the patch.
    pub fn subset(&self, keep: impl Fn(u32) -> bool) -> ArmedSubset {
        let flags = self.patch_flags();
        let mut armed = ArmedSubset::default();
        // Whether the code from the last kept site runs into this one.
        let mut runs_in = false;
        for (i, &f) in flags.iter().enumerate() {
            runs_in = runs_in && f & FOLLOWS != 0;
            if !keep(i as u32) {
                continue;
            }
            let mut own = f & !FOLLOWS | u8::from(runs_in) * FOLLOWS;
            let end = self.addrs[i] + 5;
            let covers_a_target = (i + 1..self.len())
                .take_while(|&j| self.addrs[j] < end)
                .any(|j| !keep(j as u32) && flags[j] & TARGET != 0);
            if covers_a_target {
                own &= !MAY_PATCH;
            }
            armed.addrs.push(self.addrs[i]);
            armed.flags.push(own);
            armed.index.push(i as u32);
            runs_in = true;
        }
        armed
    }

    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    /// The file of a site, if attributable.
    pub fn file(&self, site: u32) -> Option<u32> {
        self.file_of_function(self.function[site as usize])
    }

    pub fn file_of_function(&self, function: u32) -> Option<u32> {
        self.attribution.functions[function as usize].file
    }
}

/// Some of a table's sites, to arm instead of all of them ([`Sites::subset`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ArmedSubset {
    pub addrs: Vec<u64>,
    pub flags: Vec<u8>,
    /// Per armed site, its index in the whole table (what spectra count).
    pub index: Vec<u32>,
}

/// A [`Sites::patch_flags`] bit: the site may be a patched jump.
pub const MAY_PATCH: u8 = 1;
/// A [`Sites::patch_flags`] bit: the site before it runs into it.
pub const FOLLOWS: u8 = 2;
/// A [`Sites::patch_flags`] bit: a direct jump or call elsewhere reaches it.
pub const TARGET: u8 = 4;

/// The sites of `granularity` over the functions of `attribution`, whose bytes `code`
/// gives (None: the function is left out of block sites): addresses, functions, and how
/// each is reached (see [`Sites::reached`]).
pub(super) fn sites_of<'a>(
    attribution: &Attribution,
    granularity: Granularity,
    code: impl Fn(&LlvmFunction) -> Option<&'a [u8]>,
) -> (Vec<u64>, Vec<u32>, Vec<u8>) {
    match granularity {
        Granularity::Functions => {
            let n = attribution.functions.len();
            (attribution.functions.iter().map(|f| f.addr).collect(), (0..n as u32).collect(), vec![TARGET; n])
        }
        Granularity::Blocks => block_leaders(attribution, code),
    }
}

/// Block leaders by a linear sweep of each function: the entry, branch targets inside
/// the function, and the instruction after every branch, return or trap. Only addresses
/// that are instruction boundaries of the sweep are kept, so a breakpoint never lands
/// inside an instruction. Blocks reached only through jump tables are missed. A leader
/// within a patch's reach (4 bytes) of the one before it follows it when no instruction
/// between them changes the flow (a call may not return); the entry and the targets of
/// direct jumps are targets.
fn block_leaders<'a>(
    attribution: &Attribution,
    code_of: impl Fn(&LlvmFunction) -> Option<&'a [u8]>,
) -> (Vec<u64>, Vec<u32>, Vec<u8>) {
    let mut addrs = Vec::new();
    let mut function = Vec::new();
    let mut reached = Vec::new();
    let mut starts = Vec::new();
    let mut plain = Vec::new();
    let mut leaders = Vec::new();
    let mut targets = Vec::new();
    for (fi, f) in attribution.functions.iter().enumerate() {
        let Some(code) = code_of(f) else { continue };
        let end = f.addr + f.size;
        let mut decoder = Decoder::with_ip(64, code, f.addr, DecoderOptions::NONE);
        let mut instr = Instruction::default();
        starts.clear();
        plain.clear();
        leaders.clear();
        targets.clear();
        leaders.push(f.addr);
        targets.push(f.addr);
        while decoder.can_decode() {
            decoder.decode_out(&mut instr);
            if instr.is_invalid() {
                break;
            }
            starts.push(instr.ip());
            plain.push(instr.flow_control() == FlowControl::Next);
            match instr.flow_control() {
                FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch => {
                    let target = instr.near_branch_target();
                    if (f.addr..end).contains(&target) {
                        leaders.push(target);
                        targets.push(target);
                    }
                    leaders.push(instr.next_ip());
                }
                FlowControl::IndirectBranch | FlowControl::Return | FlowControl::Interrupt | FlowControl::Exception => {
                    leaders.push(instr.next_ip())
                }
                _ => {}
            }
        }
        leaders.sort_unstable();
        leaders.dedup();
        targets.sort_unstable();
        let first = addrs.len();
        for &leader in leaders.iter() {
            let Ok(at) = starts.binary_search(&leader) else { continue };
            if leader >= end {
                continue;
            }
            let runs_in = addrs.len() > first && leader - addrs[addrs.len() - 1] < 5 && {
                let from = starts.binary_search(&addrs[addrs.len() - 1]).unwrap_or(at);
                plain[from..at].iter().all(|&p| p)
            };
            addrs.push(leader);
            function.push(fi as u32);
            reached.push(u8::from(runs_in) * FOLLOWS | u8::from(targets.binary_search(&leader).is_ok()) * TARGET);
        }
    }
    (addrs, function, reached)
}

#[cfg(test)]
impl Sites {
    /// Sites without code, for tests of what is computed over spectra: site `i` is its
    /// own function, in file `files[i]` (`None`: unattributed), at `0x1000 * (i + 1)`,
    /// `0x100` bytes long.
    pub(crate) fn synthetic(files: &[Option<u32>]) -> Sites {
        let n_files = files.iter().flatten().max().map_or(0, |&f| f as usize + 1);
        let functions = files
            .iter()
            .enumerate()
            .map(|(i, &file)| LlvmFunction {
                addr: 0x1000 * (i as u64 + 1),
                size: 0x100,
                mangled: format!("f{i}"),
                file,
            })
            .collect();
        let names = (0..n_files).map(|f| format!("file{f}.cpp")).collect();
        let attribution = Attribution { files: names, functions, unattributed_note: None };
        Sites {
            granularity: Granularity::Functions,
            attribution,
            addrs: vec![0; files.len()],
            function: (0..files.len() as u32).collect(),
            reached: vec![TARGET; files.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 0x100-byte function at 0x1000 holding sites at `at`, reached as `reached` says.
    fn blocks(at: &[(u64, u8)]) -> Sites {
        let function = LlvmFunction { addr: 0x1000, size: 0x100, mangled: "f".into(), file: Some(0) };
        Sites {
            granularity: Granularity::Blocks,
            attribution: Attribution {
                files: vec!["f.cpp".into()],
                functions: vec![function],
                unattributed_note: None,
            },
            addrs: at.iter().map(|&(a, _)| a).collect(),
            function: vec![0; at.len()],
            reached: at.iter().map(|&(_, r)| r).collect(),
        }
    }

    #[test]
    fn a_subset_of_all_sites_is_the_table_as_it_is() {
        let sites = blocks(&[(0x1000, TARGET), (0x1002, FOLLOWS), (0x1010, TARGET), (0x1012, FOLLOWS | TARGET)]);
        let all = sites.subset(|_| true);
        assert_eq!(all.addrs, sites.addrs);
        assert_eq!(all.flags, sites.patch_flags());
        assert_eq!(all.index, [0, 1, 2, 3]);
    }

    #[test]
    fn a_kept_site_runs_into_the_last_kept_one_only_through_sites_that_run_into_theirs() {
        // 0x1004 runs into 0x1002, which runs into 0x1000; 0x1014 does not run into 0x1012.
        let sites = blocks(&[
            (0x1000, TARGET),
            (0x1002, FOLLOWS),
            (0x1004, FOLLOWS),
            (0x1010, TARGET),
            (0x1012, TARGET),
            (0x1014, FOLLOWS),
        ]);
        let kept = sites.subset(|s| s != 1 && s != 4);
        assert_eq!(kept.index, [0, 2, 3, 5]);
        let follows: Vec<bool> = kept.flags.iter().map(|f| f & FOLLOWS != 0).collect();
        assert_eq!(follows, [false, true, false, false]);
        // Nothing before the first kept site.
        assert_eq!(sites.subset(|s| s == 2).flags[0] & FOLLOWS, 0);
    }

    #[test]
    fn a_site_whose_patch_covers_a_left_out_jump_target_is_not_patched() {
        let sites = blocks(&[(0x1000, TARGET), (0x1003, TARGET), (0x1010, TARGET), (0x1012, FOLLOWS)]);
        assert_eq!(sites.patch_flags()[0] & MAY_PATCH, MAY_PATCH);
        let kept = sites.subset(|s| s != 1 && s != 3);
        assert_eq!(kept.index, [0, 2]);
        assert_eq!(kept.flags[0] & MAY_PATCH, 0, "a jump to 0x1003 would land inside the patch");
        // Left out code that only runs in from the site does not stop a patch.
        assert_eq!(kept.flags[1] & MAY_PATCH, MAY_PATCH);
    }
}
