//! LLVM's functions in this executable, each with the LLVM source file it came from.

use std::collections::HashMap;

use crate::sandbox::symbols::{demangle, Symbolizer};

/// `hash(symbol name) -> source file`, written by build.rs from the `libLLVM*.a` members.
static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/llvm_objects.bin"));
const SHARED: u32 = u32::MAX;
const LOCAL_IN_SEVERAL: u32 = u32::MAX - 1;

/// A function of the linked LLVM.
#[derive(Debug, Clone)]
pub struct LlvmFunction {
    /// Runtime address of its first instruction.
    pub addr: u64,
    pub size: u64,
    /// The bytes after it, up to the next 16-byte boundary, that no other function holds
    /// ([`padding_after`]).
    pub padding: u64,
    pub mangled: String,
    /// Index into [`Attribution::files`]; `None` for code several archive members define
    /// (templates, inline header code, a few duplicate local names): whichever copy the
    /// linker kept says nothing about the file a fix would touch.
    pub file: Option<u32>,
}

pub struct Attribution {
    /// Source paths as LLVM's repository names them (`llvm/lib/Transforms/Scalar/LICM.cpp`).
    pub files: Vec<String>,
    /// Sorted by address.
    pub functions: Vec<LlvmFunction>,
    /// Why the functions of some LLVM library have no file at all, to say once.
    pub unattributed_note: Option<String>,
}

pub(super) struct Table {
    files: Vec<String>,
    owners: Vec<(u64, u32)>,
}

/// Which archive member of the linked LLVM defines a function.
pub(super) enum Owner<'a> {
    File(&'a str),
    /// Several members do: whichever copy the linker kept says nothing.
    Shared,
    /// Several members define a local function of this name (`runImpl`): each copy is its
    /// own member's.
    LocalInSeveral,
}

impl Table {
    pub(super) fn owner(&self, mangled: &str) -> Option<Owner<'_>> {
        let hash = xxhash_rust::xxh3::xxh3_64(mangled.as_bytes());
        let i = self.owners.binary_search_by_key(&hash, |e| e.0).ok()?;
        Some(match self.owners[i].1 {
            SHARED => Owner::Shared,
            LOCAL_IN_SEVERAL => Owner::LocalInSeveral,
            owner => Owner::File(&self.files[owner as usize]),
        })
    }
}

/// The alignment padding after a function that ends at `end`, when the next function
/// starts at `next`: the bytes up to the next 16-byte boundary that no function holds.
/// Nothing runs there, so a patched jump at the function's last block may cover them
/// (src/coverage/traps.h); whether they read as padding is checked with the code.
pub(super) fn padding_after(end: u64, next: Option<u64>) -> u64 {
    let boundary = end.next_multiple_of(16);
    next.map_or(boundary, |next| next.clamp(end, boundary)) - end
}

/// Per function (sorted by address), the file of the nearest attributed functions before
/// and after it when the two agree. The linker lays out each archive member's code in one
/// run (an output section's input sections in input order), so a function between two of
/// one file's is that file's: how a local name several files define is told apart.
pub(super) fn files_around(functions: &[LlvmFunction]) -> Vec<Option<u32>> {
    let mut before = vec![None; functions.len()];
    let mut last = None;
    for (i, f) in functions.iter().enumerate() {
        before[i] = last;
        last = f.file.or(last);
    }
    let mut around = vec![None; functions.len()];
    let mut next = None;
    for (i, f) in functions.iter().enumerate().rev() {
        around[i] = before[i].filter(|&b| Some(b) == next);
        next = f.file.or(next);
    }
    around
}

/// Source files numbered in the order they are first met.
#[derive(Default)]
pub(super) struct FileIds {
    pub files: Vec<String>,
    ids: HashMap<String, u32>,
}

impl FileIds {
    pub fn id(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.ids.get(path) {
            return id;
        }
        self.files.push(path.to_string());
        self.ids.insert(path.to_string(), (self.files.len() - 1) as u32);
        (self.files.len() - 1) as u32
    }
}

pub(super) fn read_table() -> Table {
    let mut at = 8;
    assert_eq!(&TABLE[..8], b"CTOSOBJ1", "corrupt llvm_objects.bin");
    let u32_at = |at: &mut usize| {
        let v = u32::from_le_bytes(TABLE[*at..*at + 4].try_into().unwrap());
        *at += 4;
        v
    };
    let n_files = u32_at(&mut at) as usize;
    let mut files = Vec::with_capacity(n_files);
    for _ in 0..n_files {
        let len = u16::from_le_bytes(TABLE[at..at + 2].try_into().unwrap()) as usize;
        files.push(String::from_utf8_lossy(&TABLE[at + 2..at + 2 + len]).into_owned());
        at += 2 + len;
    }
    let n = u32_at(&mut at) as usize;
    let owners = (0..n)
        .map(|i| {
            let base = at + i * 12;
            let hash = u64::from_le_bytes(TABLE[base..base + 8].try_into().unwrap());
            let owner = u32::from_le_bytes(TABLE[base + 8..base + 12].try_into().unwrap());
            (hash, owner)
        })
        .collect();
    Table { files, owners }
}

impl Attribution {
    /// LLVM's functions in this executable; Rust and C runtime code is left out.
    pub fn of_this_process() -> Attribution {
        let table = read_table();
        let symbols = Symbolizer::this_process();
        let mut files = FileIds::default();
        let mut functions = Vec::new();
        let all = symbols.functions();
        let mut by_neighbours = Vec::new();
        for (k, (link_addr, size, name)) in all.iter().enumerate() {
            if *size == 0 {
                continue;
            }
            let file = match table.owner(name) {
                None => continue,
                Some(Owner::Shared) => None,
                Some(Owner::LocalInSeveral) => {
                    by_neighbours.push(link_addr + symbols.bias);
                    None
                }
                Some(Owner::File(path)) => Some(files.id(path)),
            };
            let padding = padding_after(link_addr + size, all.get(k + 1).map(|next| next.0));
            let addr = link_addr + symbols.bias;
            functions.push(LlvmFunction { addr, size: *size, padding, mangled: name.clone(), file });
        }
        functions.sort_by_key(|f| f.addr);
        let neighbours = files_around(&functions);
        for addr in by_neighbours {
            if let Ok(i) = functions.binary_search_by_key(&addr, |f| f.addr) {
                functions[i].file = neighbours[i];
            }
        }
        Attribution { files: files.files, functions, unattributed_note: None }
    }

    pub fn file_of(&self, function: usize) -> Option<&str> {
        self.functions[function].file.map(|f| self.files[f as usize].as_str())
    }

    /// The function whose code holds `addr`.
    pub fn function_at(&self, addr: u64) -> Option<usize> {
        let i = self.functions.partition_point(|f| f.addr <= addr).checked_sub(1)?;
        let f = &self.functions[i];
        (addr < f.addr + f.size).then_some(i)
    }

    /// The file of `llvm::CLASS::run`, the entry of a new-PM pass whose class LLVM names
    /// `CLASS` (`SLPVectorizerPass`): where the pass is implemented.
    pub fn file_of_pass(&self, class: &str) -> Option<String> {
        let prefix = format!("_ZN4llvm{}{class}3runE", class.len());
        let i = self.functions.iter().position(|f| f.mangled.starts_with(&prefix) && f.file.is_some())?;
        self.file_of(i).map(str::to_string)
    }

    pub fn name_of(&self, function: usize) -> String {
        demangle(&self.functions[function].mangled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule that attributes a local name several files define, judged on the functions
    /// whose file the table knows, each as if it were unknown.
    #[test]
    fn the_code_around_a_function_names_its_file_for_nearly_every_function_whose_file_is_known() {
        let a = Attribution::of_this_process();
        let around = files_around(&a.functions);
        let known: Vec<usize> = (0..a.functions.len()).filter(|&i| a.functions[i].file.is_some()).collect();
        let named: Vec<usize> = known.iter().copied().filter(|&i| around[i].is_some()).collect();
        let right = named.iter().filter(|&&i| around[i] == a.functions[i].file).count();
        assert!(known.len() > 50_000, "{} functions with a file", known.len());
        assert!(named.len() * 10 > known.len() * 8, "{} of {} named", named.len(), known.len());
        assert!(right * 1000 >= named.len() * 995, "{right} of {} right", named.len());
        // A pass's local helper of a common name gets a file.
        let run_impl = a.functions.iter().filter(|f| f.mangled.starts_with("_ZL7runImpl")).collect::<Vec<_>>();
        assert!(run_impl.len() > 3 && run_impl.iter().filter(|f| f.file.is_some()).count() * 2 > run_impl.len());
    }
}
