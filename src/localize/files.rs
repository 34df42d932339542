//! Which LLVM source files localization ranks: by default the `.cpp` files under
//! `llvm/lib/` (LocSeq counts only those; headers' inline code is shared code anyway).

use crate::coverage::{Sites, Spectrum};

pub struct FileFilter {
    allowed: Vec<bool>,
}

impl FileFilter {
    /// Files under one of `prefixes` (all files when empty), `.cpp` only if `cpp_only`.
    pub fn new(sites: &Sites, prefixes: &[String], cpp_only: bool) -> FileFilter {
        let allowed = sites
            .attribution
            .files
            .iter()
            .map(|path| {
                (prefixes.is_empty() || prefixes.iter().any(|p| path.starts_with(p.as_str())))
                    && (!cpp_only || path.ends_with(".cpp"))
            })
            .collect();
        FileFilter { allowed }
    }

    pub fn allows(&self, file: u32) -> bool {
        self.allowed.get(file as usize).copied().unwrap_or(false)
    }

    /// The spectrum's elements in allowed files (shared code, which no file owns, drops out).
    pub fn restrict(&self, spectrum: &Spectrum, sites: &Sites) -> Spectrum {
        let kept =
            spectrum.elements.iter().copied().filter(|&e| sites.file(e).is_some_and(|f| self.allows(f))).collect();
        Spectrum::from_elements(kept, sites)
    }
}
