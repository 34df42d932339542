//! Names for code addresses, from an ELF file's `.symtab` (else `.dynsym`).
//!
//! In-process, LLVM is linked statically, so its local and hidden functions are in this
//! executable's `.symtab` too (Debian ships no debug info for it). An external `opt` runs
//! the agent: its crash stacks are looked up in the objects it has loaded (`opt`,
//! `libLLVM.so`), whose tables may hold only exported functions. Crash signatures and
//! coverage both use this.

use std::sync::OnceLock;

use object::{Object, ObjectSymbol, ObjectSymbolTable, SymbolIndex, SymbolKind};

pub struct Symbolizer {
    /// Runtime address minus link-time address (0 for an executable that is not position
    /// independent).
    pub bias: u64,
    /// The ELF file, mapped, not read: only its symbol tables are touched (a copy of a
    /// 140 MB executable cost 100 ms, most of each crash's judgement in a reducer's test).
    /// None when the running executable could not be opened.
    data: Option<memmap2::Mmap>,
    /// (link-time start, size, mangled name), sorted by start: built on first use of
    /// `functions`, which coverage needs whole.
    functions: OnceLock<Vec<(u64, u64, String)>>,
}

impl Symbolizer {
    /// The table for the running executable.
    pub fn this_process() -> &'static Symbolizer {
        static TABLE: OnceLock<Symbolizer> = OnceLock::new();
        TABLE.get_or_init(|| {
            Symbolizer::of_file(std::path::Path::new("/proc/self/exe"), load_bias()).unwrap_or(Symbolizer {
                bias: 0,
                data: None,
                functions: OnceLock::new(),
            })
        })
    }

    /// The functions of the ELF file at `path`, loaded at `bias`: its `.symtab`, or its
    /// `.dynsym` when it has none (a stripped `libLLVM.so`). None if it is not an ELF file.
    pub fn of_file(path: &std::path::Path, bias: u64) -> Option<Symbolizer> {
        let file = std::fs::File::open(path).ok()?;
        // Safety: executables and libraries are not rewritten while they run.
        let data = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        object::File::parse(&*data).ok()?;
        Some(Symbolizer { bias, data: Some(data), functions: OnceLock::new() })
    }

    fn file(&self) -> Option<object::File<'_>> {
        object::File::parse(&**self.data.as_ref()?).ok()
    }

    /// Every function, sorted by link-time start (built on first use, 100,000 names).
    pub fn functions(&self) -> &[(u64, u64, String)] {
        self.functions.get_or_init(|| {
            let Some(file) = self.file() else { return Vec::new() };
            function_symbols(&file).into_iter().map(|f| (f.addr, f.size, f.name)).collect()
        })
    }

    /// The mangled names of the functions containing the runtime addresses `addrs`: in the
    /// table if it was built, else in one pass over the symbols that decodes only the names
    /// it returns. A crash's signature needs a few frames, and building the table (every
    /// name allocated, then sorted) was more than half of a crashing candidate's judgement.
    pub fn mangled_each(&self, addrs: &[u64]) -> Vec<Option<String>> {
        let links: Vec<Option<u64>> = addrs.iter().map(|a| a.checked_sub(self.bias)).collect();
        if let Some(table) = self.functions.get() {
            return links.iter().map(|l| l.and_then(|l| in_table(table, l)).map(str::to_string)).collect();
        }
        let Some(file) = self.file() else { return vec![None; addrs.len()] };
        let mut found = nearest_below(text_symbols(&file, false), &links);
        let mut table = file.symbol_table();
        if found.is_none() {
            found = nearest_below(text_symbols(&file, true), &links);
            table = file.dynamic_symbol_table();
        }
        let (Some(found), Some(table)) = (found, table) else { return vec![None; addrs.len()] };
        found
            .into_iter()
            .zip(&links)
            .map(|(best, link)| {
                let (start, size, index) = best?;
                (link.unwrap() < start + size.max(1))
                    .then(|| table.symbol_by_index(index).ok()?.name().ok().map(str::to_string))
                    .flatten()
            })
            .collect()
    }
}

/// The name of the function in `table` (sorted by start) containing `link`: the one that
/// starts last at or before it, if it reaches that far.
fn in_table(table: &[(u64, u64, String)], link: u64) -> Option<&str> {
    let i = table.partition_point(|f| f.0 <= link).checked_sub(1)?;
    let (start, size, name) = &table[i];
    (link < start + size.max(&1)).then_some(name.as_str())
}

/// A function symbol's (start, size, index), if one starts at or before an address.
type Nearest = Option<(u64, u64, SymbolIndex)>;

/// The function symbols of `file`'s `.symtab` (`.dynsym` if `dynamic`) as (start, size,
/// index), in table order: for an ELF64 file, a loop over the table's entries as they lie
/// in the file, else object's generic symbols. LLVM's static build has 162,000 symbols;
/// through object's generic accessors, naming a crash's frames was about a quarter of a
/// crashing candidate's CPU in a reducer's test (`perf stat`: 42 ms, 33 ms with the loop).
fn text_symbols<'a>(
    file: &'a object::File<'a>,
    dynamic: bool,
) -> Box<dyn Iterator<Item = (u64, u64, SymbolIndex)> + 'a> {
    use object::elf::{SHN_COMMON, STT_FUNC, STT_GNU_IFUNC};
    use object::read::elf::Sym as _;
    if let object::File::Elf64(elf) = file {
        let endian = elf.endian();
        let table = if dynamic { elf.elf_dynamic_symbol_table() } else { elf.elf_symbol_table() };
        // As object's `kind() == Text` and `address()`: a common symbol's value is no address.
        return Box::new(table.symbols().iter().enumerate().filter_map(move |(i, s)| {
            let text = matches!(s.st_type(), STT_FUNC | STT_GNU_IFUNC) && s.st_shndx(endian) != SHN_COMMON;
            let start = s.st_value(endian);
            (text && start != 0).then(|| (start, s.st_size(endian), SymbolIndex(i)))
        }));
    }
    let symbols = if dynamic { file.dynamic_symbols() } else { file.symbols() };
    Box::new(symbols.filter(is_function).map(|s| (s.address(), s.size(), s.index())))
}

/// A function with an address: what both the frame search and the table keep.
fn is_function<'a>(s: &impl ObjectSymbol<'a>) -> bool {
    s.kind() == SymbolKind::Text && s.address() != 0
}

/// For each address, the function among `functions` (start, size, index) that starts last
/// at or before it (the first such function when several start there, as the sorted table
/// keeps). None if there are no functions at all, as the table would be empty.
fn nearest_below(
    functions: impl Iterator<Item = (u64, u64, SymbolIndex)>,
    links: &[Option<u64>],
) -> Option<Vec<Nearest>> {
    let mut order: Vec<usize> = (0..links.len()).filter(|&i| links[i].is_some()).collect();
    order.sort_by_key(|&i| links[i]);
    let sorted: Vec<u64> = order.iter().filter_map(|&i| links[i]).collect();
    // Over sorted addresses the best start never decreases: a symbol improves a run of
    // them from the first it is not above, and stops at the first it does not beat.
    let mut best: Vec<Nearest> = vec![None; sorted.len()];
    let mut any = false;
    let highest = sorted.last().copied().unwrap_or(0);
    for (start, size, index) in functions {
        any = true;
        if start > highest {
            continue;
        }
        for b in &mut best[sorted.partition_point(|&l| l < start)..] {
            if b.is_some_and(|b| b.0 >= start) {
                break;
            }
            *b = Some((start, size, index));
        }
    }
    let mut found = vec![None; links.len()];
    for (i, b) in order.into_iter().zip(best) {
        found[i] = b;
    }
    any.then_some(found)
}

/// A function of an ELF file, at its link-time address.
pub struct FunctionSymbol {
    pub addr: u64,
    pub size: u64,
    pub name: String,
    /// Weak definitions are inline, template or other COMDAT code that many objects emit.
    pub weak: bool,
}

/// The functions of `file`: its `.symtab`, or its `.dynsym` when it has none. Sorted by
/// address, one per address.
pub fn function_symbols(file: &object::File) -> Vec<FunctionSymbol> {
    fn of<'a>(symbols: impl Iterator<Item = impl ObjectSymbol<'a>>) -> Vec<FunctionSymbol> {
        symbols
            .filter(is_function)
            .filter_map(|s| {
                let name = s.name().ok()?.to_string();
                Some(FunctionSymbol { addr: s.address(), size: s.size(), name, weak: s.is_weak() })
            })
            .collect()
    }
    let mut functions = of(file.symbols());
    if functions.is_empty() {
        functions = of(file.dynamic_symbols());
    }
    functions.sort_by_key(|f| f.addr);
    functions.dedup_by_key(|f| f.addr);
    functions
}

/// The executable's load bias, from the dynamic loader's list (the executable comes first).
fn load_bias() -> u64 {
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _size: usize, out: *mut libc::c_void) -> libc::c_int {
        *(out as *mut u64) = (*info).dlpi_addr;
        1
    }
    let mut bias = 0u64;
    unsafe { libc::dl_iterate_phdr(Some(first), (&mut bias as *mut u64).cast()) };
    bias
}

/// `llvm::LICMPass::run` from `_ZN4llvm8LICMPass3runE…`: no parameters, no return type.
pub fn demangle(mangled: &str) -> String {
    let options = cpp_demangle::DemangleOptions::new().no_params().no_return_type();
    cpp_demangle::Symbol::new(mangled.as_bytes())
        .ok()
        .and_then(|s| s.demangle_with_options(&options).ok())
        .unwrap_or_else(|| mangled.to_string())
}

/// Rust's legacy mangling ends in a `17h<16 hex digits>E` hash; LLVM's C++ never does.
pub fn is_rust(mangled: &str) -> bool {
    mangled.starts_with("_R")
        || (mangled.len() > 20 && mangled.ends_with('E') && {
            let tail = &mangled[mangled.len() - 20..mangled.len() - 1];
            tail.starts_with("17h") && tail[3..].chars().all(|c| c.is_ascii_hexdigit())
        })
}

/// The LLVM functions of a crash trace, innermost first, demangled. The first address is
/// the faulting PC; the others are return addresses, looked up one byte earlier so that a
/// call at the very end of a function is attributed to it.
/// `objects` are the symbol tables of the crashed process.
pub fn llvm_frames(objects: &[&Symbolizer], trace: &[u64]) -> Vec<String> {
    let addrs: Vec<u64> =
        trace.iter().enumerate().map(|(i, &addr)| if i == 0 { addr } else { addr.saturating_sub(1) }).collect();
    let per_object: Vec<Vec<Option<String>>> = objects.iter().map(|o| o.mangled_each(&addrs)).collect();
    (0..addrs.len())
        .filter_map(|i| per_object.iter().find_map(|names| names[i].clone()))
        .filter(|name| !is_rust(name) && name.starts_with("_Z"))
        .map(|name| demangle(&name))
        .fold(Vec::new(), |mut frames, name| {
            // Recursion would fill the signature with one function.
            if frames.last() != Some(&name) {
                frames.push(name);
            }
            frames
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pass over the symbols answers what the sorted table answers: at functions' first
    /// bytes, inside them, just past their ends (padding or the next function), and at
    /// addresses no function holds.
    #[test]
    fn a_lookup_without_the_table_names_the_functions_the_table_names() {
        let exe = std::path::Path::new("/proc/self/exe");
        let bias = load_bias();
        let (scanning, table) = (Symbolizer::of_file(exe, bias).unwrap(), Symbolizer::of_file(exe, bias).unwrap());
        let mut addrs = vec![0, 1, u64::MAX];
        for &(start, size, _) in table.functions().iter().step_by(331) {
            addrs.extend([start + bias, start + bias + size / 2, start + bias + size.max(1)]);
        }
        let by_table = table.mangled_each(&addrs);
        assert_eq!(scanning.mangled_each(&addrs), by_table);
        assert!(scanning.functions.get().is_none(), "the lookup built the table");
        let named = by_table.iter().flatten().count();
        assert!(named > addrs.len() / 2 && named < addrs.len(), "{named} of {} addresses named", addrs.len());
    }
}
