//! Program and sequence embeddings (CTOS §2.3, §2.5): Doc2Vec PV-DM training, region
//! graphs of functions, and the program vector built from them over the call graph.

pub mod doc2vec;
mod dom;
pub mod region;

#[cfg(test)]
mod region_tests;
#[cfg(test)]
mod testing;
