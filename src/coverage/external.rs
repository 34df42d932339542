//! Sites inside an external `opt` (`--opt PATH`): the functions of `opt` and its LLVM
//! libraries, read from their files (`.symtab`, else `.dynsym`) and placed where the
//! agent's process loaded them. A function's file comes from the library's DWARF when it
//! has some (a `.gnu_debuglink` file counts), else from the linked LLVM's archive table
//! when the versions match, else it has none and the attribution says why.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use object::{Object, ObjectSection, SectionKind};

use super::attribution::{padding_after, read_table, Attribution, FileIds, LlvmFunction, Owner};
use super::dwarf::{debug_file_of, map, UnitFiles};
use super::sites::{sites_of, Sites};
use super::Granularity;
use crate::sandbox::symbols::function_symbols;

/// The sites of `granularity` in the objects (load bias, path) of an `opt` of LLVM
/// `version`.
pub(super) fn external_sites(objects: &[(u64, PathBuf)], version: &str, granularity: Granularity) -> Result<Sites> {
    let (major, minor, patch) = crate::llvm::version();
    let linked = format!("{major}.{minor}.{patch}");
    let table = (version == linked).then(read_table);
    let datas = objects
        .iter()
        .map(|(_, path)| map(path).with_context(|| format!("cannot read {}", path.display())))
        .collect::<Result<Vec<_>>>()?;
    let mut files = FileIds::default();
    let mut functions = Vec::new();
    let mut code: Vec<(u64, &[u8])> = Vec::new();
    let mut notes = Vec::new();
    for ((bias, path), data) in objects.iter().zip(&datas) {
        let file = object::File::parse(&**data).with_context(|| format!("{} is not an object file", path.display()))?;
        for section in file.sections().filter(|s| s.kind() == SectionKind::Text) {
            if let Ok(bytes) = section.data() {
                code.push((section.address() + bias, bytes));
            }
        }
        let units = match debug_file_of(path).map(|d| UnitFiles::load(&d)) {
            Some(Ok(units)) => Some(units),
            Some(Err(e)) => {
                notes.push(format!("{}: unreadable DWARF ({e})", path.display()));
                None
            }
            None => None,
        };
        let symbols = function_symbols(&file);
        // A thin `opt` executable (the driver over libLLVM.so) holds no pass worth naming.
        if units.is_none() && table.is_none() && symbols.len() >= 1000 {
            notes.push(format!(
                "{}: no DWARF, and LLVM {version} is not the linked {linked} whose symbol table names files",
                path.display()
            ));
        }
        let starts: Vec<u64> = symbols.iter().map(|f| f.addr).collect();
        for (k, f) in symbols.into_iter().enumerate().filter(|(_, f)| f.size > 0) {
            let padding = padding_after(f.addr + f.size, starts.get(k + 1).copied());
            // Weak definitions are inline and template code: whichever copy the linker kept
            // says nothing about the file a fix would touch (as for the linked LLVM).
            let file = match (&units, &table) {
                _ if f.weak => None,
                (Some(units), _) => units.file_at(f.addr).map(|u| files.id(&units.files[u as usize])),
                (None, Some(table)) => match table.owner(&f.name) {
                    Some(Owner::File(path)) => Some(files.id(path)),
                    _ => None,
                },
                (None, None) => None,
            };
            functions.push(LlvmFunction { addr: f.addr + bias, size: f.size, padding, mangled: f.name, file });
        }
    }
    functions.sort_by_key(|f| f.addr);
    functions.dedup_by_key(|f| f.addr);
    code.sort_by_key(|c| c.0);
    let attribution =
        Attribution { files: files.files, functions, unattributed_note: (!notes.is_empty()).then(|| notes.join("; ")) };
    let code_of = |f: &LlvmFunction| -> Option<&[u8]> {
        let (start, bytes) = code[..code.partition_point(|c| c.0 <= f.addr)].last()?;
        let offset = (f.addr - start) as usize;
        let end = (offset + (f.size + f.padding) as usize).min(bytes.len());
        bytes.get(offset..end).filter(|code| code.len() >= f.size as usize)
    };
    let (addrs, function, flags) = sites_of(&attribution, granularity, code_of);
    Ok(Sites { granularity, attribution, addrs, function, flags })
}
