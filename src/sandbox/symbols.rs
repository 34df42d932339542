//! Names for code addresses, from an ELF file's `.symtab` (else `.dynsym`).
//!
//! In-process, LLVM is linked statically, so its local and hidden functions are in this
//! executable's `.symtab` too (Debian ships no debug info for it). An external `opt` runs
//! the agent: its crash stacks are looked up in the objects it has loaded (`opt`,
//! `libLLVM.so`), whose tables may hold only exported functions. Crash signatures and
//! coverage both use this.

use std::sync::OnceLock;

use object::{Object, ObjectSymbol, SymbolKind};

pub struct Symbolizer {
    /// Runtime address minus link-time address (the executable is position independent).
    pub bias: u64,
    /// (link-time start, size, mangled name), sorted by start.
    functions: Vec<(u64, u64, String)>,
}

impl Symbolizer {
    /// The table for the running executable, built on first use (a few tens of ms).
    pub fn this_process() -> &'static Symbolizer {
        static TABLE: OnceLock<Symbolizer> = OnceLock::new();
        TABLE.get_or_init(|| Symbolizer::load().unwrap_or(Symbolizer { bias: 0, functions: Vec::new() }))
    }

    fn load() -> Option<Symbolizer> {
        Symbolizer::of_file(std::path::Path::new("/proc/self/exe"), load_bias())
    }

    /// The functions of the ELF file at `path`, loaded at `bias`: its `.symtab`, or its
    /// `.dynsym` when it has none (a stripped `libLLVM.so`).
    pub fn of_file(path: &std::path::Path, bias: u64) -> Option<Symbolizer> {
        // Mapped, not read: only the symbol tables of a 75 MB executable are touched (a
        // copy cost 100 ms, most of each crash's judgement in a reducer's test).
        let file = std::fs::File::open(path).ok()?;
        // Safety: executables and libraries are not rewritten while they run.
        let data = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let file = object::File::parse(&*data).ok()?;
        let functions = function_symbols(&file).into_iter().map(|f| (f.addr, f.size, f.name)).collect();
        Some(Symbolizer { bias, functions })
    }

    pub fn functions(&self) -> &[(u64, u64, String)] {
        &self.functions
    }

    /// The mangled name of the function containing the runtime address `addr`.
    pub fn mangled(&self, addr: u64) -> Option<&str> {
        let link = addr.checked_sub(self.bias)?;
        let i = self.functions.partition_point(|f| f.0 <= link).checked_sub(1)?;
        let (start, size, name) = &self.functions[i];
        (link < start + size.max(&1)).then_some(name.as_str())
    }
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
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
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
    trace
        .iter()
        .enumerate()
        .filter_map(|(i, &addr)| {
            let addr = if i == 0 { addr } else { addr.saturating_sub(1) };
            objects.iter().find_map(|o| o.mangled(addr))
        })
        .filter(|name| !is_rust(name) && name.starts_with("_Z"))
        .map(demangle)
        .fold(Vec::new(), |mut frames, name| {
            // Recursion would fill the signature with one function.
            if frames.last() != Some(&name) {
                frames.push(name);
            }
            frames
        })
}
