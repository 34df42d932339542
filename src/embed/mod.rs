//! Program and sequence embeddings (CTOS §2.3, §2.5): Doc2Vec PV-DM training, region
//! graphs of functions, and the program vector built from them over the call graph.

pub mod doc2vec;
mod dom;
pub mod program_vector;
pub mod region;

pub use doc2vec::Doc2VecParams;
pub use program_vector::embed_programs;

/// One vector per pass sequence (spec §2.3): a fresh model whose words are pass names.
/// Pass [`Doc2VecParams::sequences`] (window 3) unless you mean otherwise.
pub fn embed_sequences(sequences: &[Vec<String>], params: &Doc2VecParams, seed: u64) -> Vec<Vec<f32>> {
    doc2vec::doc_vectors(sequences, params, seed)
}

#[cfg(test)]
mod doc2vec_tests;
#[cfg(test)]
mod program_vector_tests;
#[cfg(test)]
mod region_tests;
#[cfg(test)]
mod testing;
