//! Choosing a diverse subset of embedded instances (CTOS §2.6): X-means clustering and the
//! centroid-based greedy selection (the paper's Algorithm 3), plus the random baseline.

pub mod centroid;
pub mod project;
pub mod xmeans;

pub use centroid::{centroid_select, random_select, select_representatives};
pub use project::project_2d;
pub use xmeans::{xmeans, Clustering, XMeansParams};

#[cfg(test)]
mod tests;
