//! Which LLVM source file each function of the linked LLVM comes from.
//!
//! Coverage of LLVM is recorded per function (or block) of this executable; localization
//! ranks LLVM *source files*. Debian's LLVM has no debug info, but its static archives
//! keep every symbol, local and hidden ones included. This script reads every member of
//! `libLLVM*.a` once and writes a table `hash(symbol name) -> source file`, compiled into
//! the crate (`src/coverage/attribution.rs` reads it).
//!
//! Why not the linker's map: each executable (`ctos`, `locseq`, every test and bench
//! binary) is linked separately and would need its own map, which build.rs cannot name;
//! llvm-sys also repacks all archives into one rlib, so the map no longer says which
//! `libLLVM*.a` a member came from (46 member names occur in several libraries).
//! Symbol names identify the member in all but two cases, both marked `shared` here and
//! left out of file attribution: weak (COMDAT) code defined by several members (templates,
//! inline header code — the map would credit it to whichever copy the linker kept) and the
//! 115 local names that several members define, marked apart: each copy of those is its
//! own member's, and the code the linker laid out around it tells which.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSymbol, SymbolKind};

const SHARED: u32 = u32::MAX;
/// A local name several members define: each copy is its own member's, which only the
/// code around it can tell (`src/coverage/attribution.rs`).
const LOCAL_IN_SEVERAL: u32 = u32::MAX - 1;

const TARGET_SUFFIXES: &[(&str, &str)] = &[
    ("CodeGen", ""),
    ("Desc", "/MCTargetDesc"),
    ("Info", "/TargetInfo"),
    ("AsmParser", "/AsmParser"),
    ("Disassembler", "/Disassembler"),
    ("Utils", "/Utils"),
    ("TargetMCA", "/MCA"),
];

fn library_dir(lib: &str, known: &HashMap<String, String>) -> String {
    if let Some(dir) = known.get(lib) {
        return dir.clone();
    }
    for (suffix, sub) in TARGET_SUFFIXES {
        if let Some(target) = lib.strip_suffix(suffix).filter(|t| !t.is_empty()) {
            return format!("llvm/lib/Target/{target}{sub}");
        }
    }
    format!("unknown-library/{lib}")
}

fn main() {
    let major = if std::env::var_os("CARGO_FEATURE_LLVM19").is_some() { 19 } else { 22 };
    let libdir = PathBuf::from(format!("/usr/lib/llvm-{major}/lib"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=data/llvm-lib-dirs.tsv");
    println!("cargo:rerun-if-changed={}", libdir.display());

    // The linked LLVM's own clang++: it compiles the shim and knows where its C++ runtime is.
    let clang = format!("/usr/lib/llvm-{major}/bin/clang++");
    println!("cargo:rerun-if-changed=src/llvm/pipeline.h");
    println!("cargo:rerun-if-changed=src/llvm/ub_rules.h");
    // The C++ compiles run side by side and beside the archive scan: the shim alone takes
    // 19 s, and cc's own parallelism waits for job slots, which a clean build's other crates
    // hold; one after the other the script took 28 s, now 17 (the crate waits for it).
    std::thread::scope(|scope| {
        let shim = scope.spawn(|| compile_llvm_cpp(major, &clang, "shim"));
        let checks = scope.spawn(|| compile_llvm_cpp(major, &clang, "ub_checks"));
        let poison = scope.spawn(|| compile_llvm_cpp(major, &clang, "poison_checks"));
        let traps = scope.spawn(compile_traps);
        let heap = scope.spawn(compile_heap);
        write_object_table(&libdir);
        for compile in [shim, checks, poison, traps, heap] {
            if let Err(panic) = compile.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    // The shim's check of values destroyed while still used (see there). Every call of the
    // destructor from another member of the archives goes through it; the complete-object
    // name is an alias the derived destructors do not call.
    println!("cargo:rustc-link-arg=-Wl,--wrap=_ZN4llvm5ValueD2Ev");
    link_for_quick_starts();
    link_libstdcxx_statically(&clang);
}

/// `OUT_DIR/llvm_objects.bin`: the table this script exists for (see the top).
fn write_object_table(libdir: &Path) {
    let dirs_text = std::fs::read_to_string("data/llvm-lib-dirs.tsv").expect("data/llvm-lib-dirs.tsv");
    let known: HashMap<String, String> = dirs_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();

    let mut archives: Vec<PathBuf> = std::fs::read_dir(libdir)
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup.sh)", libdir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("libLLVM") && name.ends_with(".a")
        })
        .collect();
    archives.sort();

    let mut files: Vec<String> = Vec::new();
    let mut file_ids: HashMap<String, u32> = HashMap::new();
    // hash -> (member, whether every definition is local)
    let mut owner: HashMap<u64, (u32, bool)> = HashMap::new();
    for archive in &archives {
        let lib = archive.file_stem().unwrap().to_string_lossy().trim_start_matches("libLLVM").to_string();
        let dir = library_dir(&lib, &known);
        scan_archive(archive, &dir, &mut files, &mut file_ids, &mut owner);
    }

    let mut entries: Vec<(u64, u32)> = owner
        .into_iter()
        .map(|(hash, (id, all_local))| (hash, if id == SHARED && all_local { LOCAL_IN_SEVERAL } else { id }))
        .collect();
    entries.sort_unstable();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("llvm_objects.bin");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&out).unwrap());
    w.write_all(b"CTOSOBJ1").unwrap();
    w.write_all(&(files.len() as u32).to_le_bytes()).unwrap();
    for f in &files {
        w.write_all(&(f.len() as u16).to_le_bytes()).unwrap();
        w.write_all(f.as_bytes()).unwrap();
    }
    w.write_all(&(entries.len() as u32).to_le_bytes()).unwrap();
    for (hash, value) in entries {
        w.write_all(&hash.to_le_bytes()).unwrap();
        w.write_all(&value.to_le_bytes()).unwrap();
    }
}

/// `src/llvm/{name}.cpp` against the headers of the LLVM we link, with its own clang++ and
/// LLVM's flags (no RTTI, no exceptions), as a static library of its own.
fn compile_llvm_cpp(major: u32, clang: &str, name: &str) {
    let source = format!("src/llvm/{name}.cpp");
    println!("cargo:rerun-if-changed={source}");
    cc::Build::new()
        .cpp(true)
        .compiler(clang)
        .include(format!("/usr/lib/llvm-{major}/include"))
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-w")
        .define("__STDC_CONSTANT_MACROS", None)
        .define("__STDC_FORMAT_MACROS", None)
        .define("__STDC_LIMIT_MACROS", None)
        .file(source)
        .compile(&format!("ctos_llvm_{name}"));
}

/// Executables are linked at a fixed address, not position independent: a position
/// independent one has 166,000 relocations that every start applies, copying 2.2 MB of
/// pointer tables page by page (a tenth of the page faults of the integration tests, which
/// start ctos thousands of times, and a fifth of a start). The address is 1 GiB: coverage's
/// patched jumps land 0.8 GiB below the code (`traps.h`), and the C runtime's start code
/// needs the image below 2 GiB. And the static constructors of LLVM's 650 files lie side by
/// side (`.text.startup`), not each beside its file's code: a start ran code in 477 places
/// 64 KiB apart, each a page fault (`ctos --version`: 867 -> 781 faults, 8.5 -> 7.2 ms of CPU).
fn link_for_quick_starts() {
    println!("cargo:rustc-link-arg=-no-pie");
    println!("cargo:rustc-link-arg=-Wl,--image-base=0x40000000");
    println!("cargo:rustc-link-arg=-Wl,-z,keep-text-section-prefix");
}

/// libstdc++ is linked statically, like LLVM: LLVM's archives carry RTTI, and each of their
/// 5,900 type descriptors points at a vtable of the shared libstdc++, so every start bound
/// 6,600 symbols and wrote 260 pages of them (a quarter of a start's page faults; a start
/// took 11.7 ms of CPU, now 7.8). Listed before llvm-sys's shared `-lstdc++`, the archive
/// is the one the linker takes. libclang, loaded at run time, brings its own shared copy;
/// only C types pass between the two.
fn link_libstdcxx_statically(clang: &str) {
    let out = std::process::Command::new(clang).arg("-print-file-name=libstdc++.a").output().expect(clang);
    let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(path.is_file(), "no libstdc++.a beside {clang} (Debian: libstdc++-12-dev; run scripts/setup.sh)");
    println!("cargo:rustc-link-search=native={}", path.parent().unwrap().display());
    println!("cargo:rustc-link-lib=static:-bundle,+verbatim=libstdc++.a");
}

/// src/coverage/traps.cpp: the coverage sites' patches and trap handler, shared with the
/// agent (no LLVM in it).
fn compile_traps() {
    println!("cargo:rerun-if-changed=src/coverage/traps.cpp");
    println!("cargo:rerun-if-changed=src/coverage/traps.h");
    cc::Build::new()
        .cpp(true)
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .file("src/coverage/traps.cpp")
        .compile("ctos_traps");
}

/// src/sandbox/heap.c: the allocator's entry points, which fill blocks for the strict heap.
/// Their definitions must be the process's, not libc's: the linker takes the file in for
/// the one name ctos calls, and keeps the rest because libc refers to them.
fn compile_heap() {
    println!("cargo:rerun-if-changed=src/sandbox/heap.c");
    cc::Build::new().file("src/sandbox/heap.c").flag("-O2").compile("ctos_heap");
    println!("cargo:rustc-link-arg=-Wl,--undefined=ctos_heap_fill");
}

fn scan_archive(
    path: &Path,
    dir: &str,
    files: &mut Vec<String>,
    file_ids: &mut HashMap<String, u32>,
    owner: &mut HashMap<u64, (u32, bool)>,
) {
    let data = std::fs::read(path).unwrap();
    let archive = ArchiveFile::parse(&*data).unwrap();
    for member in archive.members() {
        let member = member.unwrap();
        let name = String::from_utf8_lossy(member.name()).into_owned();
        let Some(source) = name.strip_suffix(".o") else { continue };
        let Ok(object) = object::File::parse(member.data(&*data).unwrap()) else { continue };
        let file = format!("{dir}/{source}");
        let id = *file_ids.entry(file.clone()).or_insert_with(|| {
            files.push(file);
            (files.len() - 1) as u32
        });
        for symbol in object.symbols() {
            if symbol.kind() != SymbolKind::Text || !symbol.is_definition() {
                continue;
            }
            let Ok(sym_name) = symbol.name() else { continue };
            let hash = xxhash_rust::xxh3::xxh3_64(sym_name.as_bytes());
            let local = symbol.is_local();
            owner
                .entry(hash)
                .and_modify(|(v, all_local)| {
                    *all_local &= local;
                    if *v != id {
                        *v = SHARED
                    }
                })
                .or_insert((id, local));
        }
    }
}
