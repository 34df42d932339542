//! Sequence reduction: the smallest sub-sequence (in pass order) that still shows a failure.
//!
//! Delta debugging over pass positions (Zeller's ddmin, complements only), finished with a
//! one-pass-at-a-time sweep so that the result is 1-minimal: removing any single pass
//! makes the failure go away, which is what LocSeq assumes of its input.

use super::Sequence;

/// Reduce `seq` while `fails` holds. `fails(seq)` itself is assumed true.
pub fn reduce(seq: &Sequence, mut fails: impl FnMut(&Sequence) -> bool) -> Sequence {
    let mut current = seq.clone();
    let mut chunks = 2usize;
    while current.len() >= 2 {
        let n = current.len();
        let size = n.div_ceil(chunks);
        let mut reduced = false;
        for start in (0..n).step_by(size) {
            let candidate = current.retain_passes(|i| i < start || i >= start + size);
            if !candidate.is_empty() && fails(&candidate) {
                current = candidate;
                chunks = (chunks - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if size == 1 {
                break;
            }
            chunks = (chunks * 2).min(n);
        }
    }
    // ddmin with complements ends 1-minimal already, but a flaky oracle can leave slack.
    let mut i = 0;
    while current.len() > 1 && i < current.len() {
        let candidate = current.retain_passes(|j| j != i);
        if fails(&candidate) {
            current = candidate;
        } else {
            i += 1;
        }
    }
    current
}
