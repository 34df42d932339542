//! The campaign folder: its database (`store`), the status and `stats.json`, the causes
//! shards share (`sync`), merging shards, and what is read from it afterwards (`report`,
//! the campaign page).

pub(in crate::fuzz) mod campaign_page;
pub(in crate::fuzz) mod merge;
pub(in crate::fuzz) mod report;
pub(in crate::fuzz) mod stats;
pub mod store;
pub(in crate::fuzz) mod sync;
