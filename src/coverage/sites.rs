//! Where breakpoints go: every LLVM function entry, or every basic-block start.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic};

use super::attribution::{Attribution, LlvmFunction};
use super::Granularity;

/// The coverage elements of one granularity. Site `i` is at `addrs[i]` in function
/// `function[i]` of the attribution.
pub struct Sites {
    pub granularity: Granularity,
    pub attribution: Attribution,
    pub addrs: Vec<u64>,
    pub function: Vec<u32>,
    /// Per site, how src/coverage/traps.h may arm it: [`MAY_PATCH`], [`FOLLOWS`],
    /// [`FALLS_IN`], [`TARGET`].
    pub(super) flags: Vec<u8>,
}

impl Sites {
    /// The table of this process's LLVM; no breakpoint may be armed meanwhile (the code
    /// is read).
    pub fn new(granularity: Granularity) -> Sites {
        let attribution = Attribution::of_this_process();
        // The code is mapped in this process; it is read before any breakpoint is armed.
        let code = |f: &LlvmFunction| {
            Some(unsafe { std::slice::from_raw_parts(f.addr as *const u8, (f.size + f.padding) as usize) })
        };
        let (addrs, function, flags) = sites_of(&attribution, granularity, code);
        Sites { granularity, attribution, addrs, function, flags }
    }

    /// Per site, how src/coverage/traps.h may arm it ([`Sites::flags`]). With
    /// `CTOS_COVERAGE_TRAPS=int3`, no patches: every site an `int3`, the mechanism patches
    /// replaced, to compare the two (benches/isolate.rs).
    pub fn patch_flags(&self) -> Vec<u8> {
        let int3_only = std::env::var_os("CTOS_COVERAGE_TRAPS").is_some_and(|v| v == "int3");
        let keep = if int3_only { !MAY_PATCH } else { u8::MAX };
        self.flags.iter().map(|&f| f & keep).collect()
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
            let mut own = (f & !FOLLOWS) | (u8::from(runs_in) * FOLLOWS);
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

/// A [`Sites::patch_flags`] bit: the 5 bytes of a patched jump from the site on are its
/// function's, or the alignment padding after it (a patch must not spill into the next
/// function).
pub const MAY_PATCH: u8 = 1;
/// A [`Sites::patch_flags`] bit: the site before it runs into it (blocks within a patch's
/// reach, no branch, call or return between).
pub const FOLLOWS: u8 = 2;
/// A [`Sites::patch_flags`] bit: a direct jump or call elsewhere reaches it.
pub const TARGET: u8 = 4;
/// A [`Sites::patch_flags`] bit: the instruction before it may go on into it (it is no
/// jump, return or trap): a fall-through block, reached from the code before it alone
/// unless it is also a [`TARGET`].
pub const FALLS_IN: u8 = 8;
/// [`Sites::patch_flags`] bits: `STARTS_AFTER << k` says another instruction starts `k + 1`
/// bytes after the site (k < 3): where a short block's pun must keep an `int3`.
pub const STARTS_AFTER: u8 = 16;

/// The sites of `granularity` over the functions of `attribution`, whose bytes `code`
/// gives, the padding after them included (None: the function is left out of block
/// sites): addresses, functions, and flags (see [`Sites::flags`]).
pub(super) fn sites_of<'a>(
    attribution: &Attribution,
    granularity: Granularity,
    code: impl Fn(&LlvmFunction) -> Option<&'a [u8]>,
) -> (Vec<u64>, Vec<u32>, Vec<u8>) {
    match granularity {
        Granularity::Functions => {
            let n = attribution.functions.len();
            let flags = attribution.functions.iter().map(|f| {
                let room = f.size >= 5 || code(f).is_some_and(|code| f.size + padding_in(code, f.size) >= 5);
                (u8::from(room) * MAY_PATCH) | TARGET
            });
            (attribution.functions.iter().map(|f| f.addr).collect(), (0..n as u32).collect(), flags.collect())
        }
        Granularity::Blocks => block_leaders(attribution, code),
    }
}

/// How many of the bytes after a function's `size` in `code` are padding: no-ops or
/// traps the padding is made of, whole.
fn padding_in(code: &[u8], size: u64) -> u64 {
    let Some(after) = code.get(size as usize..) else { return 0 };
    let mut decoder = Decoder::with_ip(64, after, 0, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    let mut padding = 0;
    while decoder.can_decode() {
        decoder.decode_out(&mut instr);
        if instr.is_invalid() || !matches!(instr.mnemonic(), Mnemonic::Nop | Mnemonic::Int3) {
            break;
        }
        padding = instr.next_ip();
    }
    padding
}

/// Whether the instruction of this flow may go on into the one after it.
fn goes_on(flow: FlowControl) -> bool {
    !matches!(
        flow,
        FlowControl::UnconditionalBranch
            | FlowControl::IndirectBranch
            | FlowControl::Return
            | FlowControl::Interrupt
            | FlowControl::Exception
    )
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
    let mut flags = Vec::new();
    let mut starts = Vec::new();
    let mut flows = Vec::new();
    let mut leaders = Vec::new();
    let mut targets = Vec::new();
    for (fi, f) in attribution.functions.iter().enumerate() {
        let Some(code) = code_of(f) else { continue };
        let end = f.addr + f.size;
        let room_end = end + padding_in(code, f.size);
        let code = &code[..(f.size as usize).min(code.len())];
        let mut decoder = Decoder::with_ip(64, code, f.addr, DecoderOptions::NONE);
        let mut instr = Instruction::default();
        starts.clear();
        flows.clear();
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
            flows.push(instr.flow_control());
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
                flows[from..at].iter().all(|&flow| flow == FlowControl::Next)
            };
            let falls_in = at > 0 && goes_on(flows[at - 1]);
            let target = targets.binary_search(&leader).is_ok();
            let starts_after = starts[at + 1..]
                .iter()
                .take_while(|&&s| s < leader + 4)
                .fold(0, |bits, &s| bits | STARTS_AFTER << (s - leader - 1));
            addrs.push(leader);
            function.push(fi as u32);
            flags.push(
                (u8::from(leader + 5 <= room_end) * MAY_PATCH)
                    | (u8::from(runs_in) * FOLLOWS)
                    | (u8::from(falls_in) * FALLS_IN)
                    | (u8::from(target) * TARGET)
                    | starts_after,
            );
        }
    }
    (addrs, function, flags)
}

#[cfg(test)]
impl Sites {
    /// Sites without code, for tests of what is computed over spectra: site `i` is its
    /// own function, in file `files[i]` (`None`: unattributed), at `0x1000 * (i + 1)`,
    /// `0x100` bytes long.
    pub(crate) fn synthetic(files: &[Option<u32>]) -> Sites {
        let one_each: Vec<(Option<u32>, usize)> = files.iter().map(|&f| (f, 1)).collect();
        Sites { granularity: Granularity::Functions, ..Sites::synthetic_blocks(&one_each) }
    }

    /// Like [`Sites::synthetic`], with block sites: function `i` is in file `functions[i].0`
    /// and holds `functions[i].1` blocks, its entry and then one every 0x10 bytes.
    pub(crate) fn synthetic_blocks(functions: &[(Option<u32>, usize)]) -> Sites {
        let n_files = functions.iter().filter_map(|f| f.0).max().map_or(0, |f| f as usize + 1);
        let functions_of: Vec<LlvmFunction> = functions
            .iter()
            .enumerate()
            .map(|(i, &(file, _))| LlvmFunction {
                addr: 0x1000 * (i as u64 + 1),
                size: 0x100,
                padding: 0,
                mangled: format!("f{i}"),
                file,
            })
            .collect();
        let (mut addrs, mut function) = (Vec::new(), Vec::new());
        for (i, &(_, blocks)) in functions.iter().enumerate() {
            for b in 0..blocks as u64 {
                addrs.push(functions_of[i].addr + 0x10 * b);
                function.push(i as u32);
            }
        }
        let names = (0..n_files).map(|f| format!("file{f}.cpp")).collect();
        let attribution = Attribution { files: names, functions: functions_of, unattributed_note: None };
        let flags = vec![MAY_PATCH | TARGET; addrs.len()];
        Sites { granularity: Granularity::Blocks, attribution, addrs, function, flags }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 0x100-byte function at 0x1000 holding sites at `at`, each with room for a
    /// patch and reached as its flags say.
    fn blocks(at: &[(u64, u8)]) -> Sites {
        let function = LlvmFunction { addr: 0x1000, size: 0x100, padding: 0, mangled: "f".into(), file: Some(0) };
        Sites {
            granularity: Granularity::Blocks,
            attribution: Attribution {
                files: vec!["f.cpp".into()],
                functions: vec![function],
                unattributed_note: None,
            },
            addrs: at.iter().map(|&(a, _)| a).collect(),
            function: vec![0; at.len()],
            flags: at.iter().map(|&(_, r)| r | MAY_PATCH).collect(),
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

    /// `test eax,eax; je +2; xor eax,eax; ret`, then what follows it in `after`.
    fn leaders_with(after: &[u8]) -> Vec<(u64, u8)> {
        let code: Vec<u8> = [0x85, 0xC0, 0x74, 0x02, 0x31, 0xC0, 0xC3].iter().chain(after).copied().collect();
        let padding = crate::coverage::attribution::padding_after(0x1007, Some(0x1010));
        let function = LlvmFunction { addr: 0x1000, size: 7, padding, mangled: "f".into(), file: Some(0) };
        let attribution =
            Attribution { files: vec!["f.cpp".into()], functions: vec![function], unattributed_note: None };
        let (addrs, _, flags) = block_leaders(&attribution, |_| Some(&code[..]));
        addrs.into_iter().zip(flags).collect()
    }

    #[test]
    fn a_block_after_a_conditional_branch_falls_in_a_join_is_a_target_it_runs_into_and_instruction_starts_are_marked() {
        let leaders = leaders_with(&[0xCC; 9]);
        assert_eq!(
            leaders,
            [
                (0x1000, MAY_PATCH | TARGET | STARTS_AFTER << 1),
                (0x1004, MAY_PATCH | FALLS_IN | STARTS_AFTER << 1),
                (0x1006, MAY_PATCH | FOLLOWS | FALLS_IN | TARGET)
            ],
            "`je` and `ret` start 2 bytes after a leader"
        );
    }

    #[test]
    fn the_last_blocks_may_patch_the_alignment_padding_and_nothing_else() {
        let may_patch =
            |after: &[u8]| -> Vec<bool> { leaders_with(after).iter().map(|l| l.1 & MAY_PATCH != 0).collect() };
        assert_eq!(may_patch(&[0xCC; 9]), [true, true, true], "int3 padding");
        assert_eq!(may_patch(&[0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00, 0x90, 0x90, 0x90]), [true, true, true], "no-ops");
        assert_eq!(may_patch(&[0x90, 0x55, 0x48, 0x89, 0xE5]), [true, false, false], "code after one no-op");
        assert_eq!(may_patch(&[]), [true, false, false], "no bytes after the function");
    }

    #[test]
    fn padding_ends_at_the_next_16_byte_boundary_or_the_next_function() {
        use crate::coverage::attribution::padding_after;
        assert_eq!(padding_after(0x1007, Some(0x1010)), 9);
        assert_eq!(padding_after(0x1007, Some(0x1009)), 2);
        assert_eq!(padding_after(0x1007, None), 9);
        assert_eq!(padding_after(0x1010, Some(0x1020)), 0);
        assert_eq!(padding_after(0x1007, Some(0x1000)), 0, "overlapping symbols");
    }
}
