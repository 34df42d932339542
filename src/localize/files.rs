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

    /// Per site, whether a run's first arrival there can change what the searches compute,
    /// so that only those are armed. Every trace is restricted to the allowed files (a
    /// failing one cut at LLVM's error reporting first, when `error_reporting`). Within
    /// them, a passing run's elements count only in the files the `failing` run covers
    /// (the evidence counts the failing run's elements, the fitness's statement part the
    /// files both runs cover); elsewhere they count as the files they are in (the fitness's
    /// file part), which a function's entry tells. (Not quite as all its blocks do: an entry
    /// first reached by an earlier pass, outside the focus, is spent, where a block that only
    /// the focus runs would still have told. The fitness may then see one file fewer.) With
    /// `every_element` (plain Jaccard similarity), every element counts.
    pub fn sites_that_count(
        &self,
        sites: &Sites,
        failing: &Spectrum,
        every_element: bool,
        error_reporting: bool,
    ) -> Vec<bool> {
        #[derive(Clone, Copy)]
        enum Armed {
            None,
            Entry,
            Every,
        }
        // Per function, once (a table holds some sixty thousand, and millions of blocks).
        let per_function: Vec<Armed> = (0..sites.attribution.functions.len() as u32)
            .map(|f| match sites.file_of_function(f).filter(|&file| self.allows(file)) {
                _ if error_reporting && sites.reports_errors(f) => Armed::Every,
                Some(file) if every_element || failing.covers_file(file) => Armed::Every,
                Some(_) => Armed::Entry,
                None => Armed::None,
            })
            .collect();
        (0..sites.len())
            .map(|s| {
                let function = sites.function[s] as usize;
                match per_function[function] {
                    Armed::Every => true,
                    Armed::Entry => sites.addrs[s] == sites.attribution.functions[function].addr,
                    Armed::None => false,
                }
            })
            .collect()
    }

    /// The spectrum's elements in allowed files (shared code, which no file owns, drops out).
    pub fn restrict(&self, spectrum: &Spectrum, sites: &Sites) -> Spectrum {
        let kept =
            spectrum.elements.iter().copied().filter(|&e| sites.file(e).is_some_and(|f| self.allows(f))).collect();
        Spectrum::from_elements(kept, sites)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Functions 0 and 1 in file 0, 2 in file 1, 3 in file 2 (not ranked), 4 unattributed;
    /// three blocks each. The failing run covers file 0 (function 0's second block).
    #[test]
    fn armed_are_the_failing_files_blocks_and_the_other_ranked_files_entries() {
        let sites = Sites::synthetic_blocks(&[(Some(0), 3), (Some(0), 3), (Some(1), 3), (Some(2), 3), (None, 3)]);
        let filter = FileFilter { allowed: vec![true, true, false] };
        let failing = Spectrum::from_elements(vec![1], &sites);
        let kept = |every_element| {
            let counted = filter.sites_that_count(&sites, &failing, every_element, false);
            (0..sites.len() as u32).filter(|&s| counted[s as usize]).collect::<Vec<_>>()
        };
        assert_eq!(kept(false), [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(kept(true), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
