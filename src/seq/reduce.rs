//! Sequence reduction: the smallest sub-sequence (in pass order) that still shows a failure.
//!
//! Delta debugging over pass positions (Zeller's ddmin, complements only), finished with a
//! one-pass-at-a-time sweep so that the result is 1-minimal: removing any single pass
//! makes the failure go away, which is what LocSeq assumes of its input.

use super::Sequence;

/// Reduce `seq` while `fails` holds. `fails(seq)` itself is assumed true.
pub fn reduce(seq: &Sequence, mut fails: impl FnMut(&Sequence) -> bool) -> Sequence {
    reduce_batched(seq, 1, |candidates| candidates.iter().map(&mut fails).collect())
}

/// [`reduce`] with up to `width` candidates tested at once: `fails_each` answers for each,
/// in order. The first failing candidate in order wins, as when testing one at a time, so
/// the result does not depend on the width; the tests after it are the price of keeping
/// `width` workers busy.
pub fn reduce_batched(seq: &Sequence, width: usize, mut fails_each: impl FnMut(&[Sequence]) -> Vec<bool>) -> Sequence {
    let width = width.max(1);
    let mut first_failing = |candidates: &[Sequence]| -> Option<usize> {
        let mut offset = 0;
        for batch in candidates.chunks(width) {
            if let Some(k) = fails_each(batch).iter().position(|&f| f) {
                return Some(offset + k);
            }
            offset += batch.len();
        }
        None
    };
    let mut current = seq.clone();
    let mut chunks = 2usize;
    while current.len() >= 2 {
        let n = current.len();
        let size = n.div_ceil(chunks);
        let candidates: Vec<Sequence> = (0..n)
            .step_by(size)
            .map(|start| current.retain_passes(|i| i < start || i >= start + size))
            .filter(|candidate| !candidate.is_empty())
            .collect();
        match first_failing(&candidates) {
            Some(k) => {
                current = candidates[k].clone();
                chunks = (chunks - 1).max(2);
            }
            None if size == 1 => break,
            None => chunks = (chunks * 2).min(n),
        }
    }
    // ddmin with complements ends 1-minimal already, but a flaky oracle can leave slack.
    let mut i = 0;
    while current.len() > 1 && i < current.len() {
        let candidates: Vec<Sequence> =
            (i..current.len().min(i + width)).map(|j| current.retain_passes(|k| k != j)).collect();
        match first_failing(&candidates) {
            Some(k) => {
                current = candidates[k].clone();
                i += k;
            }
            None => i += candidates.len(),
        }
    }
    current
}
