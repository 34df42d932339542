//! Where a campaign's programs come from: csmith, Hermes's variants of csmith programs,
//! llvm-stress, IR mutants, LLVM's tests as seeds, the user's own; the candidate type they
//! share, and a stored program as the campaign runs it.

pub(in crate::fuzz) mod candidate;
pub(in crate::fuzz) mod csmith;
pub(in crate::fuzz) mod from_seeds;
pub(in crate::fuzz) mod hermes;
pub(in crate::fuzz) mod ir_mutate;
pub(in crate::fuzz) mod origin;
pub(in crate::fuzz) mod pool;
pub(in crate::fuzz) mod seed_options;
pub(in crate::fuzz) mod seeds;
pub(in crate::fuzz) mod stored;
